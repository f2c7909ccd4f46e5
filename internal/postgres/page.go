package postgres

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

// and adds cond to where, a WHERE clause (empty or with a leading space)
// whose arguments are args: each ? in cond becomes the next $n, for the
// next of more.
func and(where string, args []any, cond string, more ...any) (string, []any) {
	args = slices.Clip(args)
	for _, a := range more {
		args = append(args, a)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(args)), 1)
	}
	if where == "" {
		return " WHERE " + cond, args
	}
	return where + " AND " + cond, args
}

// PendingAsks returns the pending asks matching q in urgency order: those
// with a deadline, soonest first (on a tie the lower id first), then the
// others newest first; at most q.Limit when it is above 0, after q.After.
// It locks nothing.
//
// Two queries, one per part, rather than one ORDER BY deadline IS NULL, ...:
// each walks the partial index asks_deadline (deadline, id) from the cursor
// and stops at the limit, where one query would sort every pending ask first.
func (t *tx) PendingAsks(ctx context.Context, q askd.PendingQuery) ([]*askd.Ask, error) {
	where, args := askWhere(askd.AskFilter{Status: askd.StatusPending, Agent: q.Agent, Session: q.Session, Kind: q.Kind, Routes: q.Routes})
	var asks []*askd.Ask
	if q.After == nil || q.After.Deadline != nil {
		w, a := and(where, args, "deadline IS NOT NULL")
		if q.After != nil {
			d := *q.After.Deadline
			w, a = and(where, args, "deadline >= ? AND (deadline > ? OR id > ?)", d, d, q.After.ID)
		}
		dated, err := t.selectAsks(ctx, "list pending asks", w, a, "deadline, id", q.Limit, "")
		if err != nil {
			return nil, err
		}
		if q.Limit > 0 && len(dated) >= q.Limit {
			return dated, nil
		}
		asks = dated
	}
	w, a := and(where, args, "deadline IS NULL")
	if q.After != nil && q.After.Deadline == nil {
		w, a = and(where, args, "deadline IS NULL AND id < ?", q.After.ID)
	}
	limit := 0
	if q.Limit > 0 {
		limit = q.Limit - len(asks)
	}
	undated, err := t.selectAsks(ctx, "list pending asks", w, a, "id DESC", limit, "")
	if err != nil {
		return nil, err
	}
	return append(asks, undated...), nil
}

// Sessions returns the sessions that have asks, by agent then name, with
// their counts; at most q.Limit when it is above 0, after q.After; with
// q.Routes, of the asks it matches.
func (t *tx) Sessions(ctx context.Context, q askd.SessionQuery) ([]*askd.SessionInfo, error) {
	where, args := askWhere(askd.AskFilter{Routes: q.Routes})
	if q.After != nil {
		// COLLATE "C": by bytes, as SQLite orders, whatever the database's
		// locale; equality needs none.
		where, args = and(where, args, `agent COLLATE "C" >= ? AND (agent COLLATE "C" > ? OR session COLLATE "C" > ?)`,
			q.After.Agent, q.After.Agent, q.After.Name)
	}
	query := `SELECT agent, session, count(*) FILTER (WHERE status = 'pending'), count(*), max(created_at)
		FROM asks` + where + ` GROUP BY agent, session ORDER BY agent COLLATE "C", session COLLATE "C"`
	if q.Limit > 0 {
		args = append(args, q.Limit)
		query += " LIMIT $" + strconv.Itoa(len(args))
	}
	rows, err := t.tx.Query(t.ctx(ctx), query, args...)
	if err != nil {
		return nil, translate(err, "list sessions")
	}
	sessions, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*askd.SessionInfo, error) {
		var s askd.SessionInfo
		if err := row.Scan(&s.Agent, &s.Name, &s.Pending, &s.Total, &s.LastAskAt); err != nil {
			return nil, err
		}
		s.LastAskAt = s.LastAskAt.UTC()
		return &s, nil
	})
	if err != nil {
		return nil, translate(err, "list sessions")
	}
	if sessions == nil {
		sessions = []*askd.SessionInfo{}
	}
	return sessions, nil
}

// CountSessionsWithAsks counts the sessions that have asks (with routes,
// asks it matches).
func (t *tx) CountSessionsWithAsks(ctx context.Context, routes []string) (int, error) {
	where, args := askWhere(askd.AskFilter{Routes: routes})
	var n int
	err := t.tx.QueryRow(t.ctx(ctx), "SELECT count(*) FROM (SELECT 1 FROM asks"+where+" GROUP BY agent, session) AS s", args...).Scan(&n)
	if err != nil {
		return 0, translate(err, "count sessions")
	}
	return n, nil
}
