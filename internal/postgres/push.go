package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

// PutPushSubscription stores p, replacing the one with its endpoint;
// ENOTFOUND when its browser session or human token does not exist.
func (t *tx) PutPushSubscription(ctx context.Context, p *askd.PushSubscription) error {
	if err := t.mustWrite("put push subscription"); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx(ctx), `
		INSERT INTO push_subscriptions (endpoint, p256dh, auth, browser, human, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth,
			browser = excluded.browser, human = excluded.human, created_at = excluded.created_at`,
		p.Endpoint, p.Keys.P256dh, p.Keys.Auth, p.Browser, p.Human, p.CreatedAt)
	if foreignKeyViolation(err) {
		return askd.Errorf(askd.ENOTFOUND, "no browser session %q of a token named %q", p.Browser, p.Human)
	}
	return translate(err, "put push subscription")
}

func scanPush(row pgx.Row) (*askd.PushSubscription, error) {
	p := &askd.PushSubscription{}
	if err := row.Scan(&p.Endpoint, &p.Keys.P256dh, &p.Keys.Auth, &p.Browser, &p.Human, &p.CreatedAt); err != nil {
		return nil, err
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

// PushSubscription returns the subscription with the endpoint; ENOTFOUND
// when there is none.
func (t *tx) PushSubscription(ctx context.Context, endpoint string) (*askd.PushSubscription, error) {
	p, err := scanPush(t.tx.QueryRow(t.ctx(ctx), `
		SELECT endpoint, p256dh, auth, browser, human, created_at FROM push_subscriptions WHERE endpoint = $1`, endpoint))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "push subscription not found")
	}
	if err != nil {
		return nil, translate(err, "read push subscription")
	}
	return p, nil
}

// PushSubscriptions returns the subscriptions whose browser session expires
// after at, by endpoint (COLLATE "C": by bytes, as SQLite orders).
func (t *tx) PushSubscriptions(ctx context.Context, at time.Time) ([]*askd.PushSubscription, error) {
	rows, err := t.tx.Query(t.ctx(ctx), `
		SELECT p.endpoint, p.p256dh, p.auth, p.browser, p.human, p.created_at
		FROM push_subscriptions p JOIN browser_sessions b ON b.hash = p.browser
		WHERE b.expires_at > $1 ORDER BY p.endpoint COLLATE "C"`, at)
	if err != nil {
		return nil, translate(err, "list push subscriptions")
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*askd.PushSubscription, error) { return scanPush(row) })
	if err != nil {
		return nil, translate(err, "list push subscriptions")
	}
	return out, nil
}

// CountPushSubscriptions returns how many subscriptions human has, and how
// many of them belong to browser session browser (push_subscriptions_human).
func (t *tx) CountPushSubscriptions(ctx context.Context, browser, human string) (ofBrowser, ofHuman int, err error) {
	err = t.tx.QueryRow(t.ctx(ctx), `
		SELECT count(*) FILTER (WHERE browser = $1), count(*) FROM push_subscriptions WHERE human = $2`,
		browser, human).Scan(&ofBrowser, &ofHuman)
	if err != nil {
		return 0, 0, translate(err, fmt.Sprintf("count push subscriptions of %q", human))
	}
	return ofBrowser, ofHuman, nil
}

// DeletePushSubscription deletes the subscription with the endpoint;
// ENOTFOUND when there is none.
func (t *tx) DeletePushSubscription(ctx context.Context, endpoint string) error {
	if err := t.mustWrite("delete push subscription"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM push_subscriptions WHERE endpoint = $1", endpoint)
	if err != nil {
		return translate(err, "delete push subscription")
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "push subscription not found")
	}
	return nil
}

// CreateVAPIDKeys stores the server's VAPID keys; ECONFLICT when some are
// stored already.
func (t *tx) CreateVAPIDKeys(ctx context.Context, k *askd.VAPIDKeys) error {
	if err := t.mustWrite("create VAPID keys"); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx(ctx), "INSERT INTO vapid_keys (id, public_key, private_key, created_at) VALUES (1, $1, $2, $3)",
		k.Public, k.Private, k.CreatedAt)
	if uniqueViolation(err) {
		return askd.Errorf(askd.ECONFLICT, "VAPID keys are stored already")
	}
	return translate(err, "create VAPID keys")
}

// VAPIDKeys returns the server's VAPID keys; ENOTFOUND when none are stored.
func (t *tx) VAPIDKeys(ctx context.Context) (*askd.VAPIDKeys, error) {
	k := &askd.VAPIDKeys{}
	err := t.tx.QueryRow(t.ctx(ctx), "SELECT public_key, private_key, created_at FROM vapid_keys WHERE id = 1").
		Scan(&k.Public, &k.Private, &k.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "no VAPID keys stored")
	}
	if err != nil {
		return nil, translate(err, "read VAPID keys")
	}
	k.CreatedAt = k.CreatedAt.UTC()
	return k, nil
}
