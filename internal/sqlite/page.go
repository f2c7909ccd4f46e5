package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/askd-dev/askd"
)

// PendingAsks returns the pending asks matching q in urgency order: those
// with a deadline, soonest first (on a tie the lower id first), then the
// others newest first; at most q.Limit when it is above 0, after q.After.
//
// Two queries, one per part, rather than one ORDER BY deadline IS NULL, ...:
// each walks the partial index asks_deadline (deadline, then the rowid)
// forwards or backwards from the cursor and stops at the limit, where one
// query would sort every pending ask first.
//
// SQLite, without statistics, judges status = 'pending' on the index
// asks_status_agent_session the narrower and sorts what it finds, every
// pending ask of the inbox; INDEXED BY keeps it on asks_deadline for the
// dated part. Not for one agent's asks: it has at most
// --max-pending-per-token of them, and that index finds just those. A
// person's Mine (q.Routes) walks asks_deadline too, past the asks routed to
// others: a page of Mine reads no more than a page of everyone's.
func (t *tx) PendingAsks(ctx context.Context, q askd.PendingQuery) ([]*askd.Ask, error) {
	where, args := askWhere(askd.AskFilter{Status: askd.StatusPending, Agent: q.Agent, Session: q.Session, Kind: q.Kind, Routes: q.Routes})
	var asks []*askd.Ask
	if q.After == nil || q.After.Deadline != nil {
		cond, more := "deadline IS NOT NULL", []any(nil)
		if q.After != nil {
			d := micros(*q.After.Deadline)
			cond, more = "deadline >= ? AND (deadline > ? OR id > ?)", []any{d, d, q.After.ID}
		}
		from := "asks INDEXED BY asks_deadline"
		if q.Agent != "" {
			from = "asks"
		}
		dated, err := t.selectAsks(ctx, "list pending asks", from, and(where, cond), append(slices.Clip(args), more...), "deadline, id", q.Limit)
		if err != nil {
			return nil, err
		}
		if q.Limit > 0 && len(dated) >= q.Limit {
			return dated, nil
		}
		asks = dated
	}
	cond, more := "deadline IS NULL", []any(nil)
	if q.After != nil && q.After.Deadline == nil {
		cond, more = "deadline IS NULL AND id < ?", []any{q.After.ID}
	}
	limit := 0
	if q.Limit > 0 {
		limit = q.Limit - len(asks)
	}
	undated, err := t.selectAsks(ctx, "list pending asks", "asks", and(where, cond), append(slices.Clip(args), more...), "id DESC", limit)
	if err != nil {
		return nil, err
	}
	return append(asks, undated...), nil
}

// Sessions returns the sessions that have asks, by agent then name (by
// bytes: SQLite's BINARY collation), with their counts; at most q.Limit
// when it is above 0, after q.After; with q.Routes, of the asks it matches.
func (t *tx) Sessions(ctx context.Context, q askd.SessionQuery) ([]*askd.SessionInfo, error) {
	var b strings.Builder
	where, args := askWhere(askd.AskFilter{Routes: q.Routes})
	if q.After != nil {
		// agent >= ? bounds the index range; the rest steps past the key.
		where = and(where, "agent >= ? AND (agent > ? OR session > ?)")
		args = append(args, q.After.Agent, q.After.Agent, q.After.Name)
	}
	b.WriteString("SELECT agent, session, SUM(status = 'pending'), COUNT(*), MAX(created_at) FROM asks")
	b.WriteString(where)
	b.WriteString(" GROUP BY agent, session ORDER BY agent, session")
	if q.Limit > 0 {
		b.WriteString(" LIMIT ?")
		args = append(args, q.Limit)
	}
	rows, err := t.tx.QueryContext(ctx, b.String(), args...)
	return collect(rows, err, "list sessions", func(row scanner) (*askd.SessionInfo, error) {
		var (
			s    askd.SessionInfo
			last int64
		)
		if err := row.Scan(&s.Agent, &s.Name, &s.Pending, &s.Total, &last); err != nil {
			return nil, err
		}
		s.LastAskAt = fromMicros(last)
		return &s, nil
	})
}

// CountSessionsWithAsks counts the sessions that have asks (with routes,
// asks it matches).
func (t *tx) CountSessionsWithAsks(ctx context.Context, routes []string) (int, error) {
	where, args := askWhere(askd.AskFilter{Routes: routes})
	var n int
	if err := t.tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM (SELECT 1 FROM asks"+where+" GROUP BY agent, session)", args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count sessions: %w", err)
	}
	return n, nil
}
