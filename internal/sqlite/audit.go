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
		INSERT INTO events (ask_id, session, action, actor, at, note, hash, chain)
		VALUES (NULL, ?, ?, ?, ?, ?, ?, 2)`,
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

// auditUnion is every row of the chain: the history's, whole, and the
// purged ones.
const auditUnion = `(
	SELECT id, COALESCE(ask_id, 0) AS ask_id, session, action, actor, at, note, '' AS body, 0 AS purged, COALESCE(hash, '') AS hash FROM events
	UNION ALL
	SELECT id, ask_id, COALESCE(session, ''), action, COALESCE(actor, ''), at, COALESCE(note, ''), COALESCE(body, ''), 1, hash FROM audit_purged
)`

// AuditRows returns the history rows with from <= at < until (zero times
// leave an end open) after afterID, purged ones too, oldest first, at most
// limit when limit is above 0.
func (t *tx) AuditRows(ctx context.Context, afterID int64, from, until time.Time, limit int) ([]askd.AuditRow, error) {
	query := "SELECT id, ask_id, session, action, actor, at, note, body, purged, hash FROM " + auditUnion + " WHERE id > ?"
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
		if err := rows.Scan(&r.ID, &r.AskID, &r.Session, &r.Action, &r.Actor, &at, &r.Note, &r.Body, &r.Purged, &r.Hash); err != nil {
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
// leave an end open), purged ones too.
func (t *tx) CountAudit(ctx context.Context, from, until time.Time) (int, error) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	if !from.IsZero() {
		lo = micros(from)
	}
	if !until.IsZero() {
		hi = micros(until)
	}
	var n int
	err := t.tx.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM events WHERE at >= ?1 AND at < ?2) +
		(SELECT count(*) FROM audit_purged WHERE at >= ?1 AND at < ?2)`, lo, hi).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count audit rows: %w", err)
	}
	return n, nil
}

// LastConfigEvent returns the newest change of configuration whose action
// is action; ENOTFOUND when there is none.
func (t *tx) LastConfigEvent(ctx context.Context, action string) (*askd.Event, error) {
	row := t.tx.QueryRowContext(ctx, "SELECT id, 0, session, action, actor, at, note FROM events WHERE ask_id IS NULL AND action = ? ORDER BY id DESC LIMIT 1", action)
	e, err := scanEvent(row, false)
	if err != nil {
		return nil, translate(err, "read the last "+action, says{notFound: "no " + action + " recorded"})
	}
	return e, nil
}

// purge moves the rows of the asks list names (a JSON array of ids) to
// audit_purged, each with its body, before the asks and their events go,
// and adds a record for each run of rows purged: a run is rows next to each
// other among those the history still holds whole. Each row's neighbour
// before it is looked up by the primary key: the purge reads the rows it
// purges, not the history around them.
func (t *tx) purge(ctx context.Context, p askd.Purge, list string) error {
	rows, err := t.tx.QueryContext(ctx, `
		SELECT e.id, e.ask_id, e.session, e.action, e.actor, e.at, e.note, COALESCE(e.hash, ''), e.chain IS NOT NULL,
		       COALESCE((SELECT b.id FROM events b WHERE b.id < e.id ORDER BY b.id DESC LIMIT 1), 0)
		FROM events e WHERE e.ask_id IN (SELECT value FROM json_each(?)) ORDER BY e.id`, list)
	if err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	type kept struct {
		r          askd.AuditRow
		at, before int64
		second     bool
	}
	var all []kept
	for rows.Next() {
		var k kept
		if err := rows.Scan(&k.r.ID, &k.r.AskID, &k.r.Session, &k.r.Action, &k.r.Actor, &k.at, &k.r.Note, &k.r.Hash, &k.second, &k.before); err != nil {
			rows.Close()
			return fmt.Errorf("purge: %w", err)
		}
		all = append(all, k)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	// A second-version row is kept as its body, a first-version one whole.
	// SQLite has no SHA-256 in SQL: the bodies are computed here.
	var runs askd.PurgeRuns
	for _, k := range all {
		runs.Row(k.r.ID, k.before)
		var body, session, actor, note any
		if k.second {
			body = askd.AuditBody(k.r.Session, k.r.Actor, k.r.Note)
		} else {
			session, actor, note = k.r.Session, k.r.Actor, k.r.Note
		}
		if _, err := t.tx.ExecContext(ctx, `
			INSERT INTO audit_purged (id, ask_id, action, at, body, session, actor, note, hash)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			k.r.ID, k.r.AskID, k.r.Action, k.at, body, session, actor, note, k.r.Hash); err != nil {
			return fmt.Errorf("purge: keep row %d: %w", k.r.ID, err)
		}
	}
	for _, e := range runs.Events(p) {
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
