package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

// lockEventLog takes the event log's transaction advisory lock, the write
// lock every write transaction takes first (see the package comment). It is
// in the two-key space (classid 'askd' as an int4, objid 1), which never
// meets the one-key space of session locks.
const lockEventLog = "SELECT pg_advisory_xact_lock(1634954084, 1)"

const insertEvent = `
	INSERT INTO events (ask_id, session, action, actor, at, note, snapshot)
	VALUES ($1, $2, $3, $4, $5, $6, $7)
	RETURNING id`

// AddEvent appends e, with a snapshot of its ask, and sets e.ID. The snapshot
// is e.Ask when set, else the ask as stored in this transaction. ENOTFOUND
// when ask e.AskID does not exist. Watchers hear of the event once the
// transaction commits (the events_added trigger notifies askd_asks with the
// snapshot, and askd_events for older builds: migration 012).
//
// The insert is held back and sent with the transaction's next statement or
// its COMMIT (see pipe): e.ID is set, and an error such as ENOTFOUND comes,
// from that statement or from Update.
//
// Ids are drawn in commit order, since every write transaction holds the
// write lock from its BEGIN to its end: a reader that has seen an id has
// seen every lower one (a sequence alone hands out ids in the order
// transactions ask, which is not the order they commit).
func (t *tx) AddEvent(ctx context.Context, e *askd.Event) error {
	if err := t.mustWrite("add event"); err != nil {
		return err
	}
	ask := e.Ask
	if ask == nil {
		a, err := t.Ask(ctx, e.AskID)
		if err != nil {
			return fmt.Errorf("add event: %w", err)
		}
		ask = a
	}
	snapshot, err := snapshotOf(ask)
	if err != nil {
		return fmt.Errorf("add event to ask %d: snapshot: %w", e.AskID, err)
	}
	t.p.hold(insertEvent, []any{e.AskID, e.Session, e.Action, e.Actor, e.At, e.Note, snapshot}, func(br pgx.BatchResults) error {
		err := br.QueryRow().Scan(&e.ID)
		if foreignKeyViolation(err) {
			return askd.Errorf(askd.ENOTFOUND, "ask %d not found", e.AskID)
		}
		if err != nil {
			return translate(err, fmt.Sprintf("add event to ask %d", e.AskID))
		}
		return nil
	})
	return nil
}

// eventColumns are an event's columns, its snapshot left out.
const eventColumns = "id, ask_id, session, action, actor, at, note"

// AskHistory returns the events of ask askID, oldest first, without their
// snapshots.
func (t *tx) AskHistory(ctx context.Context, askID int64) ([]*askd.Event, error) {
	return t.events(ctx, fmt.Sprintf("read history of ask %d", askID), false,
		"SELECT "+eventColumns+" FROM events WHERE ask_id = $1 ORDER BY id", askID)
}

// EventsAfter returns the events of every ask after afterID, oldest first
// and at most limit when limit is above 0, each with the ask as it was right
// after it in Event.Ask.
func (t *tx) EventsAfter(ctx context.Context, afterID int64, limit int) ([]*askd.Event, error) {
	query := "SELECT " + eventColumns + ", snapshot FROM events WHERE id > $1 AND ask_id IS NOT NULL ORDER BY id"
	args := []any{afterID}
	if limit > 0 {
		query += " LIMIT $2"
		args = append(args, limit)
	}
	return t.events(ctx, "read events", true, query, args...)
}

// events runs query, which selects eventColumns followed by the snapshot
// when withSnapshot, and returns its events.
func (t *tx) events(ctx context.Context, what string, withSnapshot bool, query string, args ...any) ([]*askd.Event, error) {
	rows, err := t.tx.Query(t.ctx(ctx), query, args...)
	if err != nil {
		return nil, translate(err, what)
	}
	events, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*askd.Event, error) {
		var (
			e        askd.Event
			snapshot []byte
		)
		dest := []any{&e.ID, &e.AskID, &e.Session, &e.Action, &e.Actor, &e.At, &e.Note}
		if withSnapshot {
			dest = append(dest, &snapshot)
		}
		if err := row.Scan(dest...); err != nil {
			return nil, err
		}
		e.At = e.At.UTC()
		if snapshot != nil {
			a, err := decodeSnapshot(snapshot)
			if err != nil {
				return nil, fmt.Errorf("event %d: snapshot: %w", e.ID, err)
			}
			e.Ask = a
		}
		return &e, nil
	})
	if err != nil {
		return nil, translate(err, what)
	}
	if events == nil {
		events = []*askd.Event{}
	}
	return events, nil
}

// LastEventID returns the id of the newest event, 0 when there is none.
func (t *tx) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	if err := t.tx.QueryRow(t.ctx(ctx), "SELECT COALESCE(max(id), 0) FROM events").Scan(&id); err != nil {
		return 0, translate(err, "last event id")
	}
	return id, nil
}

// snapshotOf is a as JSON, its times as the store keeps them (UTC, to the
// microsecond), so that a snapshot and the row it copies agree.
func snapshotOf(a *askd.Ask) ([]byte, error) {
	c := *a
	c.CreatedAt, c.UpdatedAt = stored(c.CreatedAt), stored(c.UpdatedAt)
	c.Deadline, c.SnoozedUntil = storedPtr(c.Deadline), storedPtr(c.SnoozedUntil)
	c.SettledAt, c.ToldAt = storedPtr(c.SettledAt), storedPtr(c.ToldAt)
	c.ClaimedAt, c.EscalatedAt = storedPtr(c.ClaimedAt), storedPtr(c.EscalatedAt)
	return json.Marshal(&c)
}

// stored is t as a read gives it back: UTC, truncated to the microsecond as
// pgx sends it.
func stored(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

// storedPtr is *t as a read gives it back, nil for nil.
func storedPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	s := stored(*t)
	return &s
}
