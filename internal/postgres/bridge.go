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

// ClaimSessionTells leases the session's tells that wait for the agent. FOR
// UPDATE OF d SKIP LOCKED locks the deliveries only (asks are locked first
// by every transaction that takes both, see app.ClaimDeliveries) and passes
// over rows another claimer is taking, so no two bridges get one delivery
// while its lease runs.
func (t *tx) ClaimSessionTells(ctx context.Context, agent, session string, now time.Time, lease time.Duration, limit int) ([]*askd.Delivery, error) {
	if err := t.mustWrite("claim session tells"); err != nil {
		return nil, err
	}
	rows, err := t.tx.Query(t.ctx(ctx), `
		UPDATE deliveries SET claimed_until = $2, attempts = attempts + 1, updated_at = $1
		WHERE id IN (
			SELECT d.id FROM deliveries d JOIN asks a ON a.id = d.ask_id
			WHERE a.agent = $3 AND a.session = $4 AND a.status <> 'pending' AND a.tell AND a.told_at IS NULL
			  AND d.kind = 'tell' AND d.status = 'pending' AND d.next_at IS NULL
			  AND (d.claimed_until IS NULL OR d.claimed_until <= $1)
			ORDER BY d.id LIMIT $5
			FOR UPDATE OF d SKIP LOCKED)
		RETURNING `+deliveryColumns,
		now, now.Add(lease), agent, session, limit)
	if err != nil {
		return nil, translate(err, "claim session tells")
	}
	out, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return nil, translate(err, "claim session tells")
	}
	// RETURNING has no order: oldest first.
	slices.SortFunc(out, func(a, b *askd.Delivery) int { return cmp.Compare(a.ID, b.ID) })
	if out == nil {
		out = []*askd.Delivery{}
	}
	return out, nil
}

// AttachBridge records a bridge lease of agent's session, keeping a later one.
func (t *tx) AttachBridge(ctx context.Context, agent, session string, until time.Time) error {
	if err := t.mustWrite("attach bridge"); err != nil {
		return err
	}
	// GREATEST ignores NULLs: a session without a lease gets this one.
	tag, err := t.tx.Exec(t.ctx(ctx), `
		UPDATE sessions SET bridge_until = GREATEST(bridge_until, $3) WHERE agent = $1 AND name = $2`,
		agent, session, until)
	if err != nil {
		return translate(err, fmt.Sprintf("attach bridge to %q", session))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "session %q is not recorded", session)
	}
	return nil
}

// DetachBridge ends the bridge lease until, unless a later one replaced it.
func (t *tx) DetachBridge(ctx context.Context, agent, session string, until time.Time) error {
	if err := t.mustWrite("detach bridge"); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx(ctx), `
		UPDATE sessions SET bridge_until = NULL WHERE agent = $1 AND name = $2 AND bridge_until = $3`,
		agent, session, until)
	return translate(err, fmt.Sprintf("detach bridge from %q", session))
}

// TellChannel returns the session's channel (nil: none set) and the end of
// its bridge lease (zero: none), in one statement.
func (t *tx) TellChannel(ctx context.Context, agent, session string) (*askd.Channel, time.Time, error) {
	var raw []byte
	var until *time.Time
	err := t.tx.QueryRow(t.ctx(ctx), "SELECT channel, bridge_until FROM sessions WHERE agent = $1 AND name = $2", agent, session).Scan(&raw, &until)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, time.Time{}, nil
	case err != nil:
		return nil, time.Time{}, translate(err, fmt.Sprintf("read channel of %q", session))
	}
	var end time.Time
	if until != nil {
		end = until.UTC()
	}
	if raw == nil {
		return nil, end, nil
	}
	var c askd.Channel
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, time.Time{}, fmt.Errorf("channel of %q: %w", session, err)
	}
	return &c, end, nil
}

// BridgeUntil returns the end of the session's last bridge lease; zero when
// none is recorded.
func (t *tx) BridgeUntil(ctx context.Context, agent, session string) (time.Time, error) {
	var until *time.Time
	err := t.tx.QueryRow(t.ctx(ctx), "SELECT bridge_until FROM sessions WHERE agent = $1 AND name = $2", agent, session).Scan(&until)
	switch {
	case errors.Is(err, pgx.ErrNoRows) || err == nil && until == nil:
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, translate(err, fmt.Sprintf("read bridge of %q", session))
	}
	return until.UTC(), nil
}
