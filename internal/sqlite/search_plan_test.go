package sqlite

import (
	"context"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
)

// TestHistoryCountsFromIndexes: counting a session's settled asks, a
// person's reads an index, never every settled
// ask (SPEC §8: a search of a million settled asks within 50 ms; the
// history page counts its matches on each search). SQLite's own plan for
// each count says what it reads.
func TestHistoryCountsFromIndexes(t *testing.T) {
	s := openTest(t)
	tests := []struct {
		name string
		q    askd.SearchQuery
		want string // in the plan
	}{
		{"a session", askd.SearchQuery{Session: "s1"}, "COVERING INDEX asks_session_settled_at (session=?"},
		{"a person", askd.SearchQuery{SettledBy: "alice"}, "COVERING INDEX asks_settled_by_settled_at (settled_by=?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			query, args := countQuery(tt.q)
			plan := queryPlan(t, s, query, args...)
			if !strings.Contains(plan, tt.want) || strings.Contains(plan, "SCAN asks\n") || strings.Contains(plan, "SCAN asks ") {
				t.Errorf("the count of %+v reads\n%s\nwant %q, and no scan of asks", tt.q, plan, tt.want)
			}
		})
	}
}

// queryPlan is SQLite's EXPLAIN QUERY PLAN of query, a line a step.
func queryPlan(t *testing.T, s *Store, query string, args ...any) string {
	t.Helper()
	var b strings.Builder
	err := s.View(context.Background(), func(tx askd.Tx) error {
		rows, err := txOf(tx).tx.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				return err
			}
			b.WriteString(detail + "\n")
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPurgeLeavesSearchSegments: the full-text index does not rewrite a
// segment in the commit that deletes a tenth of it (FTS5's deletemerge),
// which put six of a purge's batches in a row at 130-280 ms with a million
// asks (migration 022): the setting is stored in the index.
func TestPurgeLeavesSearchSegments(t *testing.T) {
	s := openTest(t)
	var v int
	err := s.View(t.Context(), func(tx askd.Tx) error {
		return txOf(tx).tx.QueryRowContext(t.Context(), "SELECT v FROM asks_search_config WHERE k = 'deletemerge'").Scan(&v)
	})
	if err != nil || v != 0 {
		t.Errorf("asks_search's deletemerge = %d (%v), want 0", v, err)
	}
}
