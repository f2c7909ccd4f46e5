package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

// The chain's hashes are computed by the database (migration 015_audit.sql,
// the events_chained trigger), for every row whoever writes it.

const insertUnattached = `
	INSERT INTO events (ask_id, session, action, actor, at, note)
	VALUES (NULL, $1, $2, $3, $4, $5)
	RETURNING id`

// AddConfigEvent appends a change of configuration, a row with no ask, to
// the chain and sets e.ID (held back like AddEvent's insert). Watchers do not
// hear of it.
func (t *tx) AddConfigEvent(ctx context.Context, e *askd.Event) error {
	if err := t.mustWrite("add config event"); err != nil {
		return err
	}
	e.AskID = 0
	t.holdUnattached(e)
	return nil
}

// holdUnattached holds back the insert of e, a row of the chain with no ask.
func (t *tx) holdUnattached(e *askd.Event) {
	t.p.hold(insertUnattached, []any{e.Session, e.Action, e.Actor, e.At, e.Note}, func(br pgx.BatchResults) error {
		if err := br.QueryRow().Scan(&e.ID); err != nil {
			return translate(err, "add "+e.Action)
		}
		return nil
	})
}

// AuditRows returns the history rows with from <= at < until (zero times
// leave an end open) after afterID, oldest first, at most limit when limit
// is above 0.
func (t *tx) AuditRows(ctx context.Context, afterID int64, from, until time.Time, limit int) ([]askd.AuditRow, error) {
	query := "SELECT id, COALESCE(ask_id, 0), session, action, actor, at, note, COALESCE(hash, '') FROM events WHERE id > $1"
	args := []any{afterID}
	if !from.IsZero() {
		args = append(args, from)
		query += fmt.Sprintf(" AND at >= $%d", len(args))
	}
	if !until.IsZero() {
		args = append(args, until)
		query += fmt.Sprintf(" AND at < $%d", len(args))
	}
	query += " ORDER BY id"
	if limit > 0 {
		args = append(args, limit)
		query += fmt.Sprintf(" LIMIT $%d", len(args))
	}
	rows, err := t.tx.Query(t.ctx(ctx), query, args...)
	if err != nil {
		return nil, translate(err, "read audit rows")
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (askd.AuditRow, error) {
		var r askd.AuditRow
		err := row.Scan(&r.ID, &r.AskID, &r.Session, &r.Action, &r.Actor, &r.At, &r.Note, &r.Hash)
		r.At = r.At.UTC()
		return r, err
	})
	if err != nil {
		return nil, translate(err, "read audit rows")
	}
	if out == nil {
		out = []askd.AuditRow{}
	}
	return out, nil
}

// CountAudit counts the history rows with from <= at < until (zero times
// leave an end open).
func (t *tx) CountAudit(ctx context.Context, from, until time.Time) (int, error) {
	var lo, hi *time.Time
	if !from.IsZero() {
		lo = &from
	}
	if !until.IsZero() {
		hi = &until
	}
	var n int
	err := t.tx.QueryRow(t.ctx(ctx), "SELECT count(*) FROM events WHERE ($1::timestamptz IS NULL OR at >= $1) AND ($2::timestamptz IS NULL OR at < $2)", lo, hi).Scan(&n)
	if err != nil {
		return 0, translate(err, "count audit rows")
	}
	return n, nil
}

// purgeRuns holds back one purged row for each run of rows that deleting
// the asks settled before settledBefore is about to remove (with the asks,
// by cascade), recording the last removed hash so the chain stays
// checkable.
func (t *tx) purgeRuns(ctx context.Context, settledBefore time.Time) error {
	rows, err := t.tx.Query(t.ctx(ctx), `
		SELECT e.id, COALESCE(e.hash, ''),
		       COALESCE(e.ask_id IN (SELECT id FROM asks WHERE status <> 'pending' AND settled_at < $1), false)
		FROM events e ORDER BY e.id`, settledBefore)
	if err != nil {
		return translate(err, "purge")
	}
	var runs askd.PurgeRuns
	var (
		id      int64
		hash    string
		removed bool
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &hash, &removed}, func() error {
		runs.Row(id, hash, removed)
		return nil
	})
	if err != nil {
		return translate(err, "purge")
	}
	for _, e := range runs.Events(time.Now()) {
		t.holdUnattached(e)
	}
	return nil
}
