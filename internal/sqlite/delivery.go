package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

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
	now := micros(time.Now())
	_, err = t.tx.ExecContext(ctx, `
		INSERT INTO sessions (agent, name, created_at, channel, channel_updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (agent, name) DO UPDATE SET channel = excluded.channel, channel_updated_at = excluded.channel_updated_at`,
		agent, session, now, string(b), now)
	if err != nil {
		return fmt.Errorf("set channel of %q: %w", session, err)
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
	res, err := t.tx.ExecContext(ctx, `
		INSERT INTO sessions (agent, name, created_at) VALUES (?, ?, ?)
		ON CONFLICT (agent, name) DO NOTHING`, agent, session, micros(at))
	if err != nil {
		return false, fmt.Errorf("add session %q: %w", session, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("add session %q: %w", session, err)
	}
	return n == 1, nil
}

// CountSessions counts agent's sessions recorded at or after since.
func (t *tx) CountSessions(ctx context.Context, agent string, since time.Time) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM sessions WHERE agent = ? AND created_at >= ?", agent, micros(since)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count sessions of %q: %w", agent, err)
	}
	return n, nil
}

// SessionState reads agent's session session as a new ask finds it: its
// pending asks, the token's pending count, and whether it is recorded.
func (t *tx) SessionState(ctx context.Context, agent, session string) (*askd.SessionState, error) {
	pending, err := t.FindAsks(ctx, askd.AskFilter{Agent: agent, Session: session, Status: askd.StatusPending})
	if err != nil {
		return nil, err
	}
	n, err := t.CountAsks(ctx, askd.AskFilter{Agent: agent, Status: askd.StatusPending})
	if err != nil {
		return nil, err
	}
	st := &askd.SessionState{Pending: pending, TokenPending: n}
	err = t.tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM sessions WHERE agent = ? AND name = ?)", agent, session).Scan(&st.Recorded)
	if err != nil {
		return nil, fmt.Errorf("read session %q: %w", session, err)
	}
	return st, nil
}

const deliveryColumns = `id, kind, idempotency_key, ask_id, session, channel, status, attempts,
	next_at, claimed_until, last_error, created_at, updated_at`

// CreateDelivery adds d and sets d.ID; ECONFLICT when d.Key is taken.
func (t *tx) CreateDelivery(ctx context.Context, d *askd.Delivery) error {
	if err := t.mustWrite("create delivery"); err != nil {
		return err
	}
	ch, err := json.Marshal(d.Channel)
	if err != nil {
		return fmt.Errorf("create delivery %s: %w", d.Key, err)
	}
	// DO NOTHING rather than a constraint error, as PostgreSQL needs it to keep
	// the transaction usable; the same here so both stores behave alike.
	err = t.tx.QueryRowContext(ctx, `
		INSERT INTO deliveries (kind, idempotency_key, ask_id, session, channel, status, attempts,
			next_at, claimed_until, last_error, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (idempotency_key) DO NOTHING
		RETURNING id`,
		string(d.Kind), d.Key, d.AskID, d.Session, string(ch), string(d.Status), d.Attempts,
		nullMicros(d.NextAt), nullMicros(d.ClaimedUntil), d.LastError, micros(d.CreatedAt), micros(d.UpdatedAt),
	).Scan(&d.ID)
	if errors.Is(err, sql.ErrNoRows) {
		// Not the driver's: DO NOTHING returned no id, as the key is taken.
		return askd.Errorf(askd.ECONFLICT, "delivery %s already exists", d.Key)
	}
	return translate(err, "create delivery "+d.Key, says{missing: fmt.Sprintf("ask %d not found", d.AskID)})
}

// AddDelivery is CreateDelivery with a taken key no error.
func (t *tx) AddDelivery(ctx context.Context, d *askd.Delivery) error {
	if err := t.CreateDelivery(ctx, d); askd.ErrorCode(err) != askd.ECONFLICT {
		return err
	}
	return nil
}

// Delivery returns the delivery with the key; ENOTFOUND when there is none.
func (t *tx) Delivery(ctx context.Context, key string) (*askd.Delivery, error) {
	row := t.tx.QueryRowContext(ctx, "SELECT "+deliveryColumns+" FROM deliveries WHERE idempotency_key = ?", key)
	d, err := scanDelivery(row)
	if err != nil {
		return nil, translate(err, "read delivery "+key, says{notFound: fmt.Sprintf("delivery %s not found", key)})
	}
	return d, nil
}

// ClaimDeliveries leases due deliveries. On SQLite every write transaction
// runs alone on the one writer, so selecting and marking in one statement is
// all a claim needs.
func (t *tx) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*askd.Delivery, error) {
	if err := t.mustWrite("claim deliveries"); err != nil {
		return nil, err
	}
	n := micros(now)
	rows, err := t.tx.QueryContext(ctx, `
		UPDATE deliveries SET claimed_until = ?, attempts = attempts + 1, updated_at = ?
		WHERE id IN (
			SELECT id FROM deliveries
			WHERE status = 'pending' AND next_at <= ? AND (claimed_until IS NULL OR claimed_until <= ?)
			ORDER BY next_at, id LIMIT ?)
		RETURNING `+deliveryColumns,
		micros(now.Add(lease)), n, n, n, limit)
	out, err := collect(rows, err, "claim deliveries", scanDelivery)
	if err != nil {
		return nil, err
	}
	sortDue(out)
	return out, nil
}

// sortDue orders claimed deliveries as they were due (RETURNING has no order).
func sortDue(ds []*askd.Delivery) {
	slices.SortFunc(ds, func(a, b *askd.Delivery) int {
		if c := a.NextAt.Compare(*b.NextAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
}

// NextDeliveryAt returns when the next pending delivery becomes claimable;
// zero when none will.
func (t *tx) NextDeliveryAt(ctx context.Context) (time.Time, error) {
	var at sql.NullInt64
	err := t.tx.QueryRowContext(ctx, `
		SELECT min(max(next_at, coalesce(claimed_until, next_at))) FROM deliveries
		WHERE status = 'pending' AND next_at IS NOT NULL`).Scan(&at)
	if err != nil {
		return time.Time{}, fmt.Errorf("next delivery: %w", err)
	}
	if !at.Valid {
		return time.Time{}, nil
	}
	return fromMicros(at.Int64), nil
}

// UpdateDelivery stores d's state; ENOTFOUND when d.ID does not exist.
func (t *tx) UpdateDelivery(ctx context.Context, d *askd.Delivery) error {
	if err := t.mustWrite("update delivery"); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, `
		UPDATE deliveries SET status = ?, attempts = ?, next_at = ?, claimed_until = ?, last_error = ?, updated_at = ?
		WHERE id = ?`,
		string(d.Status), d.Attempts, nullMicros(d.NextAt), nullMicros(d.ClaimedUntil), d.LastError, micros(d.UpdatedAt), d.ID)
	if err != nil {
		return fmt.Errorf("update delivery %d: %w", d.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("update delivery %d: %w", d.ID, err)
	} else if n == 0 {
		return askd.Errorf(askd.ENOTFOUND, "delivery %d not found", d.ID)
	}
	return nil
}

// scanDelivery reads one row of deliveryColumns.
func scanDelivery(row scanner) (*askd.Delivery, error) {
	var (
		d                    askd.Delivery
		kind, status, ch     string
		nextAt, claimedUntil sql.NullInt64
		createdAt, updatedAt int64
	)
	err := row.Scan(&d.ID, &kind, &d.Key, &d.AskID, &d.Session, &ch, &status, &d.Attempts,
		&nextAt, &claimedUntil, &d.LastError, &createdAt, &updatedAt)
	if err != nil {
		return nil, err
	}
	d.Kind, d.Status = askd.DeliveryKind(kind), askd.DeliveryStatus(status)
	d.NextAt, d.ClaimedUntil = fromNullMicros(nextAt), fromNullMicros(claimedUntil)
	d.CreatedAt, d.UpdatedAt = fromMicros(createdAt), fromMicros(updatedAt)
	if err := json.Unmarshal([]byte(ch), &d.Channel); err != nil {
		return nil, fmt.Errorf("delivery %d channel: %w", d.ID, err)
	}
	return &d, nil
}
