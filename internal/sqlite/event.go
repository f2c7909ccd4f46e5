package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/askd-dev/askd"
)

// AddEvent appends e, with a snapshot of its ask, and sets e.ID. The snapshot
// is e.Ask when set, else the ask as stored in this transaction. ENOTFOUND
// when ask e.AskID does not exist. Watchers hear of the event once the
// transaction commits.
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
	hash, err := t.chain(ctx, e)
	if err != nil {
		return fmt.Errorf("add event to ask %d: %w", e.AskID, err)
	}
	res, err := t.tx.ExecContext(ctx, `
		INSERT INTO events (ask_id, session, action, actor, at, note, snapshot, hash, chain)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 2)`,
		e.AskID, e.Session, e.Action, e.Actor, micros(e.At), e.Note, snapshot, hash)
	if err != nil {
		return translate(err, fmt.Sprintf("add event to ask %d", e.AskID), says{missing: fmt.Sprintf("ask %d not found", e.AskID)})
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("add event to ask %d: %w", e.AskID, err)
	}
	e.ID = id
	t.changes = append(t.changes, askd.Change{EventID: id, AskID: e.AskID, Ask: e.Ask})
	return nil
}

// eventColumns are an event's columns, its snapshot left out.
const eventColumns = "id, ask_id, session, action, actor, at, note"

// AskHistory returns the events of ask askID, oldest first, without their
// snapshots.
func (t *tx) AskHistory(ctx context.Context, askID int64) ([]*askd.Event, error) {
	rows, err := t.tx.QueryContext(ctx, "SELECT "+eventColumns+" FROM events WHERE ask_id = ? ORDER BY id", askID)
	return collect(rows, err, fmt.Sprintf("read history of ask %d", askID), func(row scanner) (*askd.Event, error) {
		return scanEvent(row, false)
	})
}

// EventsAfter returns the events of every ask after afterID, oldest first
// and at most limit when limit is above 0, each with the ask as it was right
// after it in Event.Ask.
func (t *tx) EventsAfter(ctx context.Context, afterID int64, limit int) ([]*askd.Event, error) {
	query := "SELECT " + eventColumns + ", snapshot FROM events WHERE id > ? AND ask_id IS NOT NULL ORDER BY id"
	args := []any{afterID}
	if limit > 0 {
		query += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := t.tx.QueryContext(ctx, query, args...)
	return collect(rows, err, "read events", func(row scanner) (*askd.Event, error) {
		return scanEvent(row, true)
	})
}

// scanEvent reads one row of eventColumns, followed by the snapshot when
// withSnapshot.
func scanEvent(row scanner, withSnapshot bool) (*askd.Event, error) {
	var (
		e        askd.Event
		at       int64
		snapshot sql.NullString
	)
	dest := []any{&e.ID, &e.AskID, &e.Session, &e.Action, &e.Actor, &at, &e.Note}
	if withSnapshot {
		dest = append(dest, &snapshot)
	}
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	e.At = fromMicros(at)
	if snapshot.Valid {
		e.Ask = new(askd.Ask)
		if err := json.Unmarshal([]byte(snapshot.String), e.Ask); err != nil {
			return nil, fmt.Errorf("event %d: snapshot: %w", e.ID, err)
		}
	}
	return &e, nil
}

// LastEventID returns the id of the newest event, 0 when there is none.
func (t *tx) LastEventID(ctx context.Context) (int64, error) {
	var id int64
	if err := t.tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM events").Scan(&id); err != nil {
		return 0, fmt.Errorf("last event id: %w", err)
	}
	return id, nil
}

// snapshotOf is a as JSON, its times as the store keeps them (UTC, to the
// microsecond), so that a snapshot and the row it copies agree.
func snapshotOf(a *askd.Ask) (string, error) {
	c := *a
	c.CreatedAt, c.UpdatedAt = stored(c.CreatedAt), stored(c.UpdatedAt)
	c.Deadline, c.SnoozedUntil = storedPtr(c.Deadline), storedPtr(c.SnoozedUntil)
	c.SettledAt, c.ToldAt = storedPtr(c.SettledAt), storedPtr(c.ToldAt)
	c.ClaimedAt, c.EscalatedAt = storedPtr(c.ClaimedAt), storedPtr(c.EscalatedAt)
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// stored is t as a read gives it back.
func stored(t time.Time) time.Time { return fromMicros(micros(t)) }

// storedPtr is *t as a read gives it back, nil for nil.
func storedPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	s := stored(*t)
	return &s
}
