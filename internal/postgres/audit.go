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

// auditUnion is every row of the chain: the history's, whole, and the
// purged ones.
const auditUnion = `(
	SELECT id, COALESCE(ask_id, 0) AS ask_id, session, action, actor, at, note, '' AS body, false AS purged, COALESCE(hash, '') AS hash FROM events
	UNION ALL
	SELECT id, ask_id, COALESCE(session, ''), action, COALESCE(actor, ''), at, COALESCE(note, ''), COALESCE(body, ''), true, hash FROM audit_purged
) AS chain`

// AuditRows returns the history rows with from <= at < until (zero times
// leave an end open) after afterID, purged ones too, oldest first, at most
// limit when limit is above 0.
func (t *tx) AuditRows(ctx context.Context, afterID int64, from, until time.Time, limit int) ([]askd.AuditRow, error) {
	query := "SELECT id, ask_id, session, action, actor, at, note, body, purged, hash FROM " + auditUnion + " WHERE id > $1"
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
		err := row.Scan(&r.ID, &r.AskID, &r.Session, &r.Action, &r.Actor, &r.At, &r.Note, &r.Body, &r.Purged, &r.Hash)
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
// leave an end open), purged ones too.
func (t *tx) CountAudit(ctx context.Context, from, until time.Time) (int, error) {
	var lo, hi *time.Time
	if !from.IsZero() {
		lo = &from
	}
	if !until.IsZero() {
		hi = &until
	}
	var n int
	err := t.tx.QueryRow(t.ctx(ctx), `SELECT
		(SELECT count(*) FROM events WHERE ($1::timestamptz IS NULL OR at >= $1) AND ($2::timestamptz IS NULL OR at < $2)) +
		(SELECT count(*) FROM audit_purged WHERE ($1::timestamptz IS NULL OR at >= $1) AND ($2::timestamptz IS NULL OR at < $2))`, lo, hi).Scan(&n)
	if err != nil {
		return 0, translate(err, "count audit rows")
	}
	return n, nil
}

// LastConfigEvent returns the newest change of configuration whose action
// is action; ENOTFOUND when there is none.
func (t *tx) LastConfigEvent(ctx context.Context, action string) (*askd.Event, error) {
	var e askd.Event
	err := t.tx.QueryRow(t.ctx(ctx), "SELECT id, session, action, actor, at, note FROM events WHERE ask_id IS NULL AND action = $1 ORDER BY id DESC LIMIT 1", action).
		Scan(&e.ID, &e.Session, &e.Action, &e.Actor, &e.At, &e.Note)
	if err != nil {
		return nil, translate(err, "read the last "+action)
	}
	e.At = e.At.UTC()
	return &e, nil
}

// purge copies the rows of the asks ids to audit_purged, each with its
// body (a first-version row whole), before the asks and their events go,
// and holds back a record for each run of rows purged: a run is rows next
// to each other among those the history still holds whole. Each row's
// neighbour before it is looked up by the primary key: the purge reads the
// rows it purges, not the history around them.
func (t *tx) purge(ctx context.Context, p askd.Purge, ids []int64) error {
	rows, err := t.tx.Query(t.ctx(ctx), `
		SELECT e.id, COALESCE((SELECT b.id FROM events b WHERE b.id < e.id ORDER BY b.id DESC LIMIT 1), 0)
		FROM events e WHERE e.ask_id = ANY($1) ORDER BY e.id`, ids)
	if err != nil {
		return translate(err, "purge")
	}
	var runs askd.PurgeRuns
	var id, before int64
	_, err = pgx.ForEachRow(rows, []any{&id, &before}, func() error {
		runs.Row(id, before)
		return nil
	})
	if err != nil {
		return translate(err, "purge")
	}
	_, err = t.tx.Exec(t.ctx(ctx), `
		INSERT INTO audit_purged (id, ask_id, action, at, body, session, actor, note, hash)
		SELECT id, ask_id, action, at,
		       CASE WHEN chain IS NOT NULL THEN askd_audit_body(session, actor, note) END,
		       CASE WHEN chain IS NULL THEN session END,
		       CASE WHEN chain IS NULL THEN actor END,
		       CASE WHEN chain IS NULL THEN note END,
		       COALESCE(hash, '')
		FROM events WHERE ask_id = ANY($1)`, ids)
	if err != nil {
		return translate(err, "purge: keep the purged rows")
	}
	for _, e := range runs.Events(p) {
		t.holdUnattached(e)
	}
	return nil
}
