package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/askd-dev/askd"
)

// PutPushSubscription stores p, replacing the one with its endpoint;
// ENOTFOUND when its browser session or human token does not exist.
func (t *tx) PutPushSubscription(ctx context.Context, p *askd.PushSubscription) error {
	if err := t.mustWrite("put push subscription"); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `
		INSERT INTO push_subscriptions (endpoint, p256dh, auth, browser, human, created_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth,
			browser = excluded.browser, human = excluded.human, created_at = excluded.created_at`,
		p.Endpoint, p.Keys.P256dh, p.Keys.Auth, p.Browser, p.Human, micros(p.CreatedAt))
	return translate(err, "put push subscription", says{
		missing: fmt.Sprintf("no browser session %q of a token named %q", p.Browser, p.Human),
	})
}

const pushColumns = "endpoint, p256dh, auth, browser, human, created_at"

func scanPush(sc interface{ Scan(...any) error }) (*askd.PushSubscription, error) {
	p := &askd.PushSubscription{}
	var created int64
	if err := sc.Scan(&p.Endpoint, &p.Keys.P256dh, &p.Keys.Auth, &p.Browser, &p.Human, &created); err != nil {
		return nil, err
	}
	p.CreatedAt = fromMicros(created)
	return p, nil
}

// PushSubscription returns the subscription with the endpoint; ENOTFOUND
// when there is none.
func (t *tx) PushSubscription(ctx context.Context, endpoint string) (*askd.PushSubscription, error) {
	p, err := scanPush(t.tx.QueryRowContext(ctx, "SELECT "+pushColumns+" FROM push_subscriptions WHERE endpoint = ?", endpoint))
	if err != nil {
		return nil, translate(err, "read push subscription", says{notFound: "push subscription not found"})
	}
	return p, nil
}

// PushSubscriptions returns the subscriptions whose browser session expires
// after at, by endpoint.
func (t *tx) PushSubscriptions(ctx context.Context, at time.Time) ([]*askd.PushSubscription, error) {
	rows, err := t.tx.QueryContext(ctx, `
		SELECT p.endpoint, p.p256dh, p.auth, p.browser, p.human, p.created_at
		FROM push_subscriptions p JOIN browser_sessions b ON b.hash = p.browser
		WHERE b.expires_at > ? ORDER BY p.endpoint`, micros(at))
	if err != nil {
		return nil, fmt.Errorf("list push subscriptions: %w", err)
	}
	defer rows.Close()
	var out []*askd.PushSubscription
	for rows.Next() {
		p, err := scanPush(rows)
		if err != nil {
			return nil, fmt.Errorf("list push subscriptions: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list push subscriptions: %w", err)
	}
	return out, nil
}

// CountPushSubscriptions returns how many subscriptions human has, and how
// many of them belong to browser session browser (push_subscriptions_human).
func (t *tx) CountPushSubscriptions(ctx context.Context, browser, human string) (ofBrowser, ofHuman int, err error) {
	err = t.tx.QueryRowContext(ctx, `
		SELECT count(*) FILTER (WHERE browser = ?), count(*) FROM push_subscriptions WHERE human = ?`,
		browser, human).Scan(&ofBrowser, &ofHuman)
	if err != nil {
		return 0, 0, fmt.Errorf("count push subscriptions of %q: %w", human, err)
	}
	return ofBrowser, ofHuman, nil
}

// DeletePushSubscription deletes the subscription with the endpoint;
// ENOTFOUND when there is none.
func (t *tx) DeletePushSubscription(ctx context.Context, endpoint string) error {
	if err := t.mustWrite("delete push subscription"); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, "DELETE FROM push_subscriptions WHERE endpoint = ?", endpoint)
	if err != nil {
		return fmt.Errorf("delete push subscription: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete push subscription: %w", err)
	} else if n == 0 {
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
	_, err := t.tx.ExecContext(ctx, "INSERT INTO vapid_keys (id, public_key, private_key, created_at) VALUES (1, ?, ?, ?)",
		k.Public, k.Private, micros(k.CreatedAt))
	return translate(err, "create VAPID keys", says{taken: "VAPID keys are stored already"})
}

// VAPIDKeys returns the server's VAPID keys; ENOTFOUND when none are stored.
func (t *tx) VAPIDKeys(ctx context.Context) (*askd.VAPIDKeys, error) {
	k := &askd.VAPIDKeys{}
	var created int64
	err := t.tx.QueryRowContext(ctx, "SELECT public_key, private_key, created_at FROM vapid_keys WHERE id = 1").
		Scan(&k.Public, &k.Private, &created)
	if err != nil {
		return nil, translate(err, "read VAPID keys", says{notFound: "no VAPID keys stored"})
	}
	k.CreatedAt = fromMicros(created)
	return k, nil
}
