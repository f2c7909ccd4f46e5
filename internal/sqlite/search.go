package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/askd-dev/askd"
)

// SearchAsks returns the settled asks matching q, most recently settled
// first (on a tie the higher id first); at most q.Limit when it is above 0,
// after q.After. Words are looked up in the full-text index asks_search
// (migration 006), and matched one by one in the asks settled since it was
// last written (see index.go).
func (t *tx) SearchAsks(ctx context.Context, q askd.SearchQuery) ([]*askd.Ask, error) {
	where, args := searchWhere(q)
	if q.After != nil {
		// settled_at <= ? bounds the range of the index asks_settled_at
		// (settled_at, then the rowid), walked backwards.
		at := micros(q.After.SettledAt)
		where += " AND settled_at <= ? AND (settled_at < ? OR id < ?)"
		args = append(args, at, at, q.After.ID)
	}
	return t.selectAsks(ctx, "search asks", "asks", where, args, "settled_at DESC, id DESC", q.Limit)
}

// CountSearch counts the settled asks matching q, After and Limit aside.
func (t *tx) CountSearch(ctx context.Context, q askd.SearchQuery) (int, error) {
	where, args := searchWhere(q)
	var n int
	if err := t.tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM asks"+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count searched asks: %w", err)
	}
	return n, nil
}

// searchWhere returns the WHERE clause, with a leading space, for every field
// of q but After and Limit, and its arguments.
func searchWhere(q askd.SearchQuery) (string, []any) {
	// Settled asks all have settled_at; saying so lets SQLite use the
	// partial index on it.
	conds := []string{"status <> 'pending'", "settled_at IS NOT NULL"}
	var args []any
	add := func(cond string, arg ...any) {
		conds = append(conds, cond)
		args = append(args, arg...)
	}
	if len(q.Words) > 0 {
		// The index, or the queue of asks not in it yet (index.go), each
		// walked from its own side: id IN (queue), not a join, which SQLite
		// would run over every ask.
		add(`(id IN (SELECT rowid FROM asks_search WHERE asks_search MATCH ?)
			OR id IN (SELECT id FROM asks_search_docs WHERE id IN (SELECT id FROM asks_search_queue) AND askd_match(doc, ?)))`,
			matchWords(q.Words), strings.Join(q.Words, " "))
	}
	if q.Agent != "" {
		add("agent = ?", q.Agent)
	}
	if q.Session != "" {
		add("session = ?", q.Session)
	}
	if q.Kind != "" {
		add("kind = ?", string(q.Kind))
	}
	if q.Outcome != "" {
		status, reason := q.Outcome.Status()
		add("status = ? AND cancel_reason = ?", string(status), string(reason))
	}
	if q.SettledBy != "" {
		add("settled_by = ?", q.SettledBy)
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// matchWords is an FTS5 query for words: each one as a string (so nothing in
// it is read as query syntax), all of them required, the last as a prefix
// too: "deploy" "frid"* .
func matchWords(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(w, `"`, `""`))
		b.WriteByte('"')
	}
	b.WriteByte('*')
	return b.String()
}
