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

// ClaimSessionTells leases the session's tells that wait for the agent. On
// SQLite every write transaction runs alone on the one writer, so selecting
// and marking in one statement is all a claim needs.
func (t *tx) ClaimSessionTells(ctx context.Context, agent, session string, now time.Time, lease time.Duration, limit int) ([]*askd.Delivery, error) {
	if err := t.mustWrite("claim session tells"); err != nil {
		return nil, err
	}
	n := micros(now)
	rows, err := t.tx.QueryContext(ctx, `
		UPDATE deliveries SET claimed_until = ?, attempts = attempts + 1, updated_at = ?
		WHERE id IN (
			SELECT d.id FROM deliveries d JOIN asks a ON a.id = d.ask_id
			WHERE a.agent = ? AND a.session = ? AND a.status <> 'pending' AND a.tell = 1 AND a.told_at IS NULL
			  AND d.kind = 'tell' AND d.status = 'pending' AND d.next_at IS NULL
			  AND (d.claimed_until IS NULL OR d.claimed_until <= ?)
			ORDER BY d.id LIMIT ?)
		RETURNING `+deliveryColumns,
		micros(now.Add(lease)), n, agent, session, n, limit)
	out, err := collect(rows, err, "claim session tells", scanDelivery)
	if err != nil {
		return nil, err
	}
	sortByID(out)
	return out, nil
}

// sortByID orders claimed deliveries oldest first (RETURNING has no order).
func sortByID(ds []*askd.Delivery) {
	slices.SortFunc(ds, func(a, b *askd.Delivery) int { return cmp.Compare(a.ID, b.ID) })
}

// AttachBridge records a bridge lease of agent's session, keeping a later one.
func (t *tx) AttachBridge(ctx context.Context, agent, session string, until time.Time) error {
	if err := t.mustWrite("attach bridge"); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, `
		UPDATE sessions SET bridge_until = max(coalesce(bridge_until, 0), ?) WHERE agent = ? AND name = ?`,
		micros(until), agent, session)
	if err != nil {
		return fmt.Errorf("attach bridge to %q: %w", session, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("attach bridge to %q: %w", session, err)
	} else if n == 0 {
		return askd.Errorf(askd.ENOTFOUND, "session %q is not recorded", session)
	}
	return nil
}

// DetachBridge ends the bridge lease until, unless a later one replaced it.
func (t *tx) DetachBridge(ctx context.Context, agent, session string, until time.Time) error {
	if err := t.mustWrite("detach bridge"); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `
		UPDATE sessions SET bridge_until = NULL WHERE agent = ? AND name = ? AND bridge_until = ?`,
		agent, session, micros(until))
	if err != nil {
		return fmt.Errorf("detach bridge from %q: %w", session, err)
	}
	return nil
}

// TellChannel returns the session's channel (nil: none set) and the end of
// its bridge lease (zero: none), in one statement.
func (t *tx) TellChannel(ctx context.Context, agent, session string) (*askd.Channel, time.Time, error) {
	var raw sql.NullString
	var until sql.NullInt64
	err := t.tx.QueryRowContext(ctx, "SELECT channel, bridge_until FROM sessions WHERE agent = ? AND name = ?", agent, session).Scan(&raw, &until)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, time.Time{}, nil
	case err != nil:
		return nil, time.Time{}, translate(err, fmt.Sprintf("read channel of %q", session), says{})
	}
	var end time.Time
	if until.Valid {
		end = fromMicros(until.Int64)
	}
	if !raw.Valid {
		return nil, end, nil
	}
	var c askd.Channel
	if err := json.Unmarshal([]byte(raw.String), &c); err != nil {
		return nil, time.Time{}, fmt.Errorf("channel of %q: %w", session, err)
	}
	return &c, end, nil
}

// BridgeUntil returns the end of the session's last bridge lease; zero when
// none is recorded.
func (t *tx) BridgeUntil(ctx context.Context, agent, session string) (time.Time, error) {
	var until sql.NullInt64
	err := t.tx.QueryRowContext(ctx, "SELECT bridge_until FROM sessions WHERE agent = ? AND name = ?", agent, session).Scan(&until)
	switch {
	case errors.Is(err, sql.ErrNoRows) || err == nil && !until.Valid:
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("read bridge of %q: %w", session, err)
	}
	return fromMicros(until.Int64), nil
}
