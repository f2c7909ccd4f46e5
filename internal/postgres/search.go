package postgres

import (
	"context"
	"strings"

	"github.com/askd-dev/askd"
)

// SearchAsks returns the settled asks matching q, most recently settled
// first (on a tie the higher id first); at most q.Limit when it is above 0,
// after q.After. It locks nothing. Words are matched against the column
// search (migration 006), which every write of an ask sets.
func (t *tx) SearchAsks(ctx context.Context, q askd.SearchQuery) ([]*askd.Ask, error) {
	where, args := searchWhere(q)
	if q.After != nil {
		// settled_at <= ? bounds the range of the index asks_settled_at
		// (settled_at, id), walked backwards.
		at := q.After.SettledAt
		where, args = and(where, args, "settled_at <= ? AND (settled_at < ? OR id < ?)", at, at, q.After.ID)
	}
	return t.selectAsks(ctx, "search asks", where, args, "settled_at DESC, id DESC", q.Limit, "")
}

// CountSearch counts the settled asks matching q, After and Limit aside.
func (t *tx) CountSearch(ctx context.Context, q askd.SearchQuery) (int, error) {
	where, args := searchWhere(q)
	var n int
	if err := t.tx.QueryRow(t.ctx(ctx), "SELECT count(*) FROM asks"+where, args...).Scan(&n); err != nil {
		return 0, translate(err, "count searched asks")
	}
	return n, nil
}

// searchWhere returns the WHERE clause, with a leading space, for every field
// of q but After and Limit, and its arguments ($1, $2, ...).
func searchWhere(q askd.SearchQuery) (string, []any) {
	// An ask has settled_at from when it settles (askd.Ask.Settle), and no
	// ask goes back to pending: settled_at alone says settled. Saying only
	// that lets the planner use the partial indexes on it, and count a
	// session's or a person's asks from an index alone.
	where, args := " WHERE settled_at IS NOT NULL", []any(nil)
	if len(q.Words) > 0 {
		where, args = and(where, args, "search @@ to_tsquery('simple', ?)", tsquery(q.Words))
	}
	if q.Agent != "" {
		where, args = and(where, args, "agent = ?", q.Agent)
	}
	if q.Session != "" {
		where, args = and(where, args, "session = ?", q.Session)
	}
	if q.Kind != "" {
		where, args = and(where, args, "kind = ?", string(q.Kind))
	}
	if q.Outcome != "" {
		status, reason := q.Outcome.Status()
		where, args = and(where, args, "status = ? AND cancel_reason = ?", string(status), string(reason))
	}
	if q.SettledBy != "" {
		where, args = and(where, args, "settled_by = ?", q.SettledBy)
	}
	return where, args
}

// tsquery is to_tsquery's text for words: each one quoted (so nothing in it
// is read as query syntax), all of them required, the last as a prefix too:
// 'deploy' & 'frid':* . The 'simple' configuration folds each to lower
// case, as it did the words of the asks.
func tsquery(words []string) string {
	var b strings.Builder
	quote := strings.NewReplacer(`'`, `''`, `\`, `\\`)
	for i, w := range words {
		if i > 0 {
			b.WriteString(" & ")
		}
		b.WriteByte('\'')
		b.WriteString(quote.Replace(w))
		b.WriteByte('\'')
	}
	b.WriteString(":*")
	return b.String()
}
