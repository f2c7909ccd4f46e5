package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

// SetChannel stores the delivery channel of agent's session, replacing any;
// a session not recorded yet is recorded now.
func (t *tx) SetChannel(ctx context.Context, agent, session string, c *askd.Channel) error {
	if err := t.mustWrite("set channel"); err != nil {
		return err
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("set channel of %q: %w", session, err)
	}
	_, err = t.tx.Exec(t.ctx(ctx), `
		INSERT INTO sessions (agent, name, created_at, channel, channel_updated_at) VALUES ($1, $2, now(), $3, now())
		ON CONFLICT (agent, name) DO UPDATE SET channel = excluded.channel, channel_updated_at = excluded.channel_updated_at`,
		agent, session, b)
	if err != nil {
		return translate(err, fmt.Sprintf("set channel of %q", session))
	}
	return nil
}

// Channel returns the delivery channel of agent's session; ENOTFOUND when
// none was set.
func (t *tx) Channel(ctx context.Context, agent, session string) (*askd.Channel, error) {
	c, _, err := t.TellChannel(ctx, agent, session)
	if err == nil && c == nil {
		return nil, askd.Errorf(askd.ENOTFOUND, "session %q has no channel", session)
	}
	return c, err
}

// AddSession records agent's session from at unless it is recorded, and
// reports whether it was new.
func (t *tx) AddSession(ctx context.Context, agent, session string, at time.Time) (bool, error) {
	if err := t.mustWrite("add session"); err != nil {
		return false, err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), `
		INSERT INTO sessions (agent, name, created_at) VALUES ($1, $2, $3)
		ON CONFLICT (agent, name) DO NOTHING`, agent, session, at)
	if err != nil {
		return false, translate(err, fmt.Sprintf("add session %q", session))
	}
	return tag.RowsAffected() == 1, nil
}

// CountSessions counts agent's sessions recorded at or after since.
func (t *tx) CountSessions(ctx context.Context, agent string, since time.Time) (int, error) {
	var n int
	err := t.tx.QueryRow(t.ctx(ctx), "SELECT count(*) FROM sessions WHERE agent = $1 AND created_at >= $2", agent, since).Scan(&n)
	if err != nil {
		return 0, translate(err, fmt.Sprintf("count sessions of %q", agent))
	}
	return n, nil
}

// sessionCounts is the rest of SessionState after the pending asks: the
// token's pending asks, and whether the session is recorded.
const sessionCounts = `
	SELECT (SELECT count(*) FROM asks WHERE status = 'pending' AND agent = $1),
		EXISTS (SELECT FROM sessions WHERE agent = $1 AND name = $2)`

// SessionState reads agent's session session as a new ask finds it: its
// pending asks (FindAsks: in a write transaction, locked), the token's
// pending count and whether the session is recorded. One round trip: the
// counts are held (pipe.go) and go with the read of the asks.
func (t *tx) SessionState(ctx context.Context, agent, session string) (*askd.SessionState, error) {
	st := &askd.SessionState{}
	t.p.hold(sessionCounts, []any{agent, session}, func(br pgx.BatchResults) error {
		return translate(br.QueryRow().Scan(&st.TokenPending, &st.Recorded), fmt.Sprintf("read session %q", session))
	})
	pending, err := t.FindAsks(ctx, askd.AskFilter{Agent: agent, Session: session, Status: askd.StatusPending})
	if err != nil {
		return nil, err
	}
	st.Pending = pending
	return st, nil
}

const deliveryColumns = `id, kind, idempotency_key, ask_id, session, channel, status, attempts,
	next_at, claimed_until, last_error, created_at, updated_at`

// CreateDelivery adds d and sets d.ID; ECONFLICT when d.Key is taken
// (insertDelivery: the transaction stays usable).
func (t *tx) CreateDelivery(ctx context.Context, d *askd.Delivery) error {
	if err := t.mustWrite("create delivery"); err != nil {
		return err
	}
	values, err := deliveryValues(d)
	if err != nil {
		return fmt.Errorf("create delivery %s: %w", d.Key, err)
	}
	err = t.tx.QueryRow(t.ctx(ctx), insertDelivery+" RETURNING id", values...).Scan(&d.ID)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return askd.Errorf(askd.ECONFLICT, "delivery %s already exists", d.Key)
	case foreignKeyViolation(err):
		return askd.Errorf(askd.ENOTFOUND, "ask %d not found", d.AskID)
	case err != nil:
		return translate(err, "create delivery "+d.Key)
	}
	return nil
}

// AddDelivery adds d unless d.Key is taken, held back and sent with the
// transaction's next statement or its COMMIT (see pipe), as AddEvent's
// insert is.
func (t *tx) AddDelivery(ctx context.Context, d *askd.Delivery) error {
	if err := t.mustWrite("add delivery"); err != nil {
		return err
	}
	values, err := deliveryValues(d)
	if err != nil {
		return fmt.Errorf("add delivery %s: %w", d.Key, err)
	}
	t.p.hold(insertDelivery, values, func(br pgx.BatchResults) error {
		_, err := br.Exec()
		if foreignKeyViolation(err) {
			return askd.Errorf(askd.ENOTFOUND, "ask %d not found", d.AskID)
		}
		return translate(err, "add delivery "+d.Key)
	})
	return nil
}

// insertDelivery inserts a delivery unless its key is taken (ON CONFLICT DO
// NOTHING keeps the transaction usable, where a unique violation would
// abort it), with deliveryValues.
const insertDelivery = `
	INSERT INTO deliveries (kind, idempotency_key, ask_id, session, channel, status, attempts,
		next_at, claimed_until, last_error, created_at, updated_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
	ON CONFLICT (idempotency_key) DO NOTHING`

// deliveryValues are d's values for insertDelivery.
func deliveryValues(d *askd.Delivery) ([]any, error) {
	ch, err := json.Marshal(d.Channel)
	if err != nil {
		return nil, err
	}
	return []any{string(d.Kind), d.Key, d.AskID, d.Session, ch, string(d.Status), d.Attempts,
		d.NextAt, d.ClaimedUntil, d.LastError, d.CreatedAt, d.UpdatedAt}, nil
}

// Delivery returns the delivery with the key; ENOTFOUND when there is none.
// In a write transaction the row stays locked until commit.
func (t *tx) Delivery(ctx context.Context, key string) (*askd.Delivery, error) {
	lock := ""
	if t.writable {
		lock = " FOR UPDATE"
	}
	rows, err := t.tx.Query(t.ctx(ctx), "SELECT "+deliveryColumns+" FROM deliveries WHERE idempotency_key = $1"+lock, key)
	if err != nil {
		return nil, translate(err, "read delivery "+key)
	}
	d, err := pgx.CollectExactlyOneRow(rows, scanDelivery)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "delivery %s not found", key)
	}
	if err != nil {
		return nil, translate(err, "read delivery "+key)
	}
	return d, nil
}

// ClaimDeliveries leases due deliveries. FOR UPDATE SKIP LOCKED makes
// concurrent claimers (of any process) pass over the rows another is taking;
// once that one commits, the rows carry its lease and are not due. So no two
// claimers get one delivery while its lease runs.
func (t *tx) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*askd.Delivery, error) {
	if err := t.mustWrite("claim deliveries"); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(t.ctx(ctx), `
		UPDATE deliveries SET claimed_until = $2, attempts = attempts + 1, updated_at = $1
		WHERE id IN (
			SELECT id FROM deliveries
			WHERE status = 'pending' AND next_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
			ORDER BY next_at, id LIMIT $3
			FOR UPDATE SKIP LOCKED)
		RETURNING `+deliveryColumns,
		now, now.Add(lease), limit)
	if err != nil {
		return nil, translate(err, "claim deliveries")
	}
	out, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return nil, translate(err, "claim deliveries")
	}
	// RETURNING has no order: as they were due.
	slices.SortFunc(out, func(a, b *askd.Delivery) int {
		if c := a.NextAt.Compare(*b.NextAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if out == nil {
		out = []*askd.Delivery{}
	}
	return out, nil
}

// NextDeliveryAt returns when the next pending delivery becomes claimable;
// zero when none will.
func (t *tx) NextDeliveryAt(ctx context.Context) (time.Time, error) {
	var at *time.Time
	// GREATEST ignores NULLs: an unclaimed delivery is due at next_at.
	err := t.tx.QueryRow(t.ctx(ctx), `
		SELECT min(GREATEST(next_at, claimed_until)) FROM deliveries
		WHERE status = 'pending' AND next_at IS NOT NULL`).Scan(&at)
	if err != nil {
		return time.Time{}, translate(err, "next delivery")
	}
	if at == nil {
		return time.Time{}, nil
	}
	return at.UTC(), nil
}

// UpdateDelivery stores d's state; ENOTFOUND when d.ID does not exist.
func (t *tx) UpdateDelivery(ctx context.Context, d *askd.Delivery) error {
	if err := t.mustWrite("update delivery"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), `
		UPDATE deliveries SET status = $1, attempts = $2, next_at = $3, claimed_until = $4, last_error = $5, updated_at = $6
		WHERE id = $7`,
		string(d.Status), d.Attempts, d.NextAt, d.ClaimedUntil, d.LastError, d.UpdatedAt, d.ID)
	if err != nil {
		return translate(err, fmt.Sprintf("update delivery %d", d.ID))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "delivery %d not found", d.ID)
	}
	return nil
}

// scanDelivery reads one row of deliveryColumns.
func scanDelivery(row pgx.CollectableRow) (*askd.Delivery, error) {
	var (
		d            askd.Delivery
		kind, status string
		ch           []byte
	)
	err := row.Scan(&d.ID, &kind, &d.Key, &d.AskID, &d.Session, &ch, &status, &d.Attempts,
		&d.NextAt, &d.ClaimedUntil, &d.LastError, &d.CreatedAt, &d.UpdatedAt)
	if err != nil {
		return nil, err
	}
	d.Kind, d.Status = askd.DeliveryKind(kind), askd.DeliveryStatus(status)
	d.NextAt, d.ClaimedUntil = utcPtr(d.NextAt), utcPtr(d.ClaimedUntil)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	if err := json.Unmarshal(ch, &d.Channel); err != nil {
		return nil, fmt.Errorf("delivery %d channel: %w", d.ID, err)
	}
	return &d, nil
}

// utcPtr is *t in UTC, nil for nil.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
