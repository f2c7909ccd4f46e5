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
	from := "asks"
	if len(q.Words) > 0 && q.Session == "" && q.SettledBy == "" {
		n, err := t.indexedMatches(ctx, q.Words)
		if err != nil {
			return nil, err
		}
		if n > walkAbove {
			from = "asks INDEXED BY asks_settled_at"
		}
	}
	return t.selectAsks(ctx, "search asks", from, where, args, "settled_at DESC, id DESC", q.Limit)
}

// walkAbove is how many asks the index must match for a search of words
// to walk the settled asks from the most recent, keeping those that match,
// rather than read every match and sort them. SQLite cannot tell which is
// quicker, so it reads every match: a word in one ask in 13 of a million
// took 0.2 to 0.7 s that way, 14 ms walking (a page of 50 is found after
// about 650); but a word in 1 of a million walks them all. Walking reads
// about 50 times (settled asks / matches), reading every match costs about
// the matches: they meet at a few thousand for a million settled asks.
const walkAbove = 5000

// indexedMatches counts the asks whose words the full-text index holds
// that match words: settled asks all (the queue aside). A read transaction
// counts each search once.
func (t *tx) indexedMatches(ctx context.Context, words []string) (int, error) {
	match := matchWords(words)
	if n, ok := t.matches[match]; ok {
		return n, nil
	}
	var n int
	if err := t.tx.QueryRowContext(ctx, "SELECT count(*) FROM asks_search WHERE asks_search MATCH ?", match).Scan(&n); err != nil {
		return 0, fmt.Errorf("search asks: %w", err)
	}
	if !t.writable {
		if t.matches == nil {
			t.matches = map[string]int{}
		}
		t.matches[match] = n
	}
	return n, nil
}

// CountSearch counts the settled asks matching q, After and Limit aside.
// Words alone are counted in the index and in the queue, which hold settled
// asks only and never the same one: not ask by ask.
func (t *tx) CountSearch(ctx context.Context, q askd.SearchQuery) (int, error) {
	query, args := countQuery(q)
	indexed := 0
	if rest := q; len(q.Words) > 0 {
		if rest.Words = nil; sameWhere(rest, askd.SearchQuery{}) {
			n, err := t.indexedMatches(ctx, q.Words)
			if err != nil {
				return 0, err
			}
			indexed = n
			query, args = `SELECT count(*) FROM asks_search_docs
				WHERE id IN (SELECT id FROM asks_search_queue) AND status <> 'pending' AND askd_match(doc, ?)`,
				[]any{strings.Join(q.Words, " ")}
		}
	}
	var n int
	if err := t.tx.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count searched asks: %w", err)
	}
	return indexed + n, nil
}

// countQuery is the statement that counts the settled asks matching q,
// ask by ask.
func countQuery(q askd.SearchQuery) (string, []any) {
	where, args := searchWhere(q)
	return "SELECT COUNT(*) FROM asks" + where, args
}

// sameWhere reports whether a and b select the same asks, After and Limit
// aside.
func sameWhere(a, b askd.SearchQuery) bool {
	wa, argsA := searchWhere(a)
	wb, argsB := searchWhere(b)
	return wa == wb && fmt.Sprint(argsA) == fmt.Sprint(argsB)
}

// searchWhere returns the WHERE clause, with a leading space, for every field
// of q but After and Limit, and its arguments.
func searchWhere(q askd.SearchQuery) (string, []any) {
	// An ask has settled_at from when it settles (askd.Ask.Settle), and no
	// ask goes back to pending: settled_at alone says settled. Saying only
	// that lets SQLite use the partial indexes on it, and answer a count
	// from an index alone (a person's 50,000 of a million: 2 ms, where
	// reading each ask's status took 120).
	conds := []string{"settled_at IS NOT NULL"}
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
