package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/askd-dev/askd"
)

// chain returns the hash of e as the next row of the audit chain and makes
// it the chain's head. The caller inserts the row in this transaction, which
// holds SQLite's one write lock: no other writer can come between.
func (t *tx) chain(ctx context.Context, e *askd.Event) (string, error) {
	var head string
	if err := t.tx.QueryRowContext(ctx, "SELECT hash FROM audit_head").Scan(&head); err != nil {
		return "", fmt.Errorf("audit head: %w", err)
	}
	hash := askd.AuditHash(head, e.AskID, e.Session, e.Action, e.Actor, stored(e.At), e.Note)
	if _, err := t.tx.ExecContext(ctx, "UPDATE audit_head SET hash = ?", hash); err != nil {
		return "", fmt.Errorf("audit head: %w", err)
	}
	return hash, nil
}

// AddConfigEvent appends a change of configuration, a row with no ask, to
// the chain and sets e.ID. Watchers do not hear of it.
func (t *tx) AddConfigEvent(ctx context.Context, e *askd.Event) error {
	if err := t.mustWrite("add config event"); err != nil {
		return err
	}
	e.AskID = 0
	return t.insertUnattached(ctx, e)
}

// insertUnattached inserts e, a row of the chain with no ask.
func (t *tx) insertUnattached(ctx context.Context, e *askd.Event) error {
	hash, err := t.chain(ctx, e)
	if err != nil {
		return fmt.Errorf("add %s: %w", e.Action, err)
	}
	res, err := t.tx.ExecContext(ctx, `
		INSERT INTO events (ask_id, session, action, actor, at, note, hash)
		VALUES (NULL, ?, ?, ?, ?, ?, ?)`,
		e.Session, e.Action, e.Actor, micros(e.At), e.Note, hash)
	if err != nil {
		return fmt.Errorf("add %s: %w", e.Action, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("add %s: %w", e.Action, err)
	}
	e.ID = id
	return nil
}

// AuditRows returns the history rows with from <= at < until (zero times
// leave an end open) after afterID, oldest first, at most limit when limit
// is above 0.
func (t *tx) AuditRows(ctx context.Context, afterID int64, from, until time.Time, limit int) ([]askd.AuditRow, error) {
	query := "SELECT id, COALESCE(ask_id, 0), session, action, actor, at, note, COALESCE(hash, '') FROM events WHERE id > ?"
	args := []any{afterID}
	if !from.IsZero() {
		query += " AND at >= ?"
		args = append(args, micros(from))
	}
	if !until.IsZero() {
		query += " AND at < ?"
		args = append(args, micros(until))
	}
	query += " ORDER BY id"
	if limit > 0 {
		query += " LIMIT ?"
		args = append(args, limit)
	}
	rows, err := t.tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read audit rows: %w", err)
	}
	defer rows.Close()
	out := []askd.AuditRow{}
	for rows.Next() {
		var (
			r  askd.AuditRow
			at int64
		)
		if err := rows.Scan(&r.ID, &r.AskID, &r.Session, &r.Action, &r.Actor, &at, &r.Note, &r.Hash); err != nil {
			return nil, fmt.Errorf("read audit rows: %w", err)
		}
		r.At = fromMicros(at)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read audit rows: %w", err)
	}
	return out, nil
}

// CountAudit counts the history rows with from <= at < until (zero times
// leave an end open).
func (t *tx) CountAudit(ctx context.Context, from, until time.Time) (int, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !from.IsZero() {
		lo = micros(from)
	}
	if !until.IsZero() {
		hi = micros(until)
	}
	var n int
	if err := t.tx.QueryRowContext(ctx, "SELECT count(*) FROM events WHERE at >= ? AND at < ?", lo, hi).Scan(&n); err != nil {
		return 0, fmt.Errorf("count audit rows: %w", err)
	}
	return n, nil
}

// purgeRuns leaves one purged row for each run of rows that deleting the
// asks settled before settledBefore is about to remove (with the asks, by
// cascade): a run is rows next to each other in the chain once the kept
// ones are counted, and its purged row records the last removed hash.
func (t *tx) purgeRuns(ctx context.Context, settledBefore time.Time) error {
	rows, err := t.tx.QueryContext(ctx, `
		SELECT e.id, COALESCE(e.hash, ''),
		       e.ask_id IS NOT NULL AND e.ask_id IN
		           (SELECT id FROM asks WHERE status <> 'pending' AND settled_at < ?)
		FROM events e ORDER BY e.id`, micros(settledBefore))
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	var runs askd.PurgeRuns
	for rows.Next() {
		var (
			id      int64
			hash    string
			removed bool
		)
		if err := rows.Scan(&id, &hash, &removed); err != nil {
			rows.Close()
			return fmt.Errorf("purge: %w", err)
		}
		runs.Row(id, hash, removed)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	for _, e := range runs.Events(time.Now()) {
		if err := t.insertUnattached(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// chainUnhashed chains the rows without a hash, oldest first, after the
// head: on migration 014, every row the database had.
func chainUnhashed(ctx context.Context, q *sql.Tx) error {
	rows, err := q.QueryContext(ctx, "SELECT id, COALESCE(ask_id, 0), session, action, actor, at, note FROM events WHERE hash IS NULL ORDER BY id")
	if err != nil {
		return fmt.Errorf("chain history: %w", err)
	}
	var all []askd.AuditRow
	for rows.Next() {
		var (
			r  askd.AuditRow
			at int64
		)
		if err := rows.Scan(&r.ID, &r.AskID, &r.Session, &r.Action, &r.Actor, &at, &r.Note); err != nil {
			rows.Close()
			return fmt.Errorf("chain history: %w", err)
		}
		r.At = fromMicros(at)
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("chain history: %w", err)
	}
	var head string
	if err := q.QueryRowContext(ctx, "SELECT hash FROM audit_head").Scan(&head); err != nil {
		return fmt.Errorf("chain history: %w", err)
	}
	for _, r := range all {
		head = askd.AuditHash(head, r.AskID, r.Session, r.Action, r.Actor, r.At, r.Note)
		if _, err := q.ExecContext(ctx, "UPDATE events SET hash = ? WHERE id = ?", head, r.ID); err != nil {
			return fmt.Errorf("chain history: %w", err)
		}
	}
	if _, err := q.ExecContext(ctx, "UPDATE audit_head SET hash = ?", head); err != nil {
		return fmt.Errorf("chain history: %w", err)
	}
	return nil
}
