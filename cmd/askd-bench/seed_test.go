package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/openstore"
	"github.com/askd-dev/askd/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestSeed: askd-bench seed writes what the scale figures are taken on, on
// both stores: the settled asks answered by people, each with its created
// and answered rows, found by a search for their words, a session and a
// person; the pending ones in the inbox; and an audit chain that verifies.
func TestSeed(t *testing.T) {
	for _, tc := range []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "askd.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.URL(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			db := tc.db(t)
			var out bytes.Buffer
			args := []string{"seed", "--db", db, "--settled", "41", "--pending", "7", "--session-asks", "5", "--per-transaction", "16", "--people", "3"}
			if err := run(ctx, args, &out); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), "seeded 41 settled asks (89 history rows) and 7 pending") {
				t.Errorf("output %q", out.String())
			}
			st, err := openstore.Existing(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			checkSeeded(ctx, t, st)
		})
	}
}

func checkSeeded(ctx context.Context, t *testing.T, st askd.Store) {
	t.Helper()
	err := st.View(ctx, func(tx askd.Tx) error {
		for status, want := range map[askd.Status]int{askd.StatusPending: 7, askd.StatusAnswered: 41} {
			if n, err := tx.Asks.CountAsks(ctx, askd.AskFilter{Status: status}); err != nil || n != want {
				t.Errorf("%s asks: %d (%v), want %d", status, n, err, want)
			}
		}
		asks, err := tx.Asks.SearchAsks(ctx, askd.SearchQuery{Session: "seed-s-3"})
		if err != nil || len(asks) != 5 {
			t.Fatalf("session seed-s-3: %d asks (%v), want 5", len(asks), err)
		}
		a := asks[0]
		if a.SettledAt == nil || !a.SettledAt.Before(time.Now().Add(-99*24*time.Hour)) || !strings.HasPrefix(a.SettledBy, "person-") {
			t.Errorf("settled ask %+v: want settled by a person over 100 days ago", a)
		}
		word := askd.SearchWords(a.SearchText())[0]
		found, err := tx.Asks.SearchAsks(ctx, askd.SearchQuery{Words: []string{word}})
		if err != nil || !containsAsk(found, a.ID) {
			t.Errorf("a search for %q does not find ask %d (%v)", word, a.ID, err)
		}
		byPerson, err := tx.Asks.CountSearch(ctx, askd.SearchQuery{SettledBy: a.SettledBy})
		if err != nil || byPerson == 0 || byPerson == 41 {
			t.Errorf("asks settled by %s: %d (%v), want some, not all", a.SettledBy, byPerson, err)
		}
		history, err := tx.Events.AskHistory(ctx, a.ID)
		if err != nil || len(history) != 2 || history[0].Action != askd.ActionCreated || history[1].Action != askd.ActionAnswered {
			t.Errorf("ask %d's history: %+v (%v), want created, answered", a.ID, history, err)
		}
		rows, err := tx.Audit.AuditRows(ctx, 0, time.Time{}, time.Time{}, 0)
		if err != nil || len(rows) != 89 {
			t.Fatalf("audit rows: %d (%v), want 89", len(rows), err)
		}
		if b := askd.VerifyAudit(rows, false); b != nil {
			t.Errorf("the seeded chain does not verify: %v", b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func containsAsk(asks []*askd.Ask, id int64) bool {
	for _, a := range asks {
		if a.ID == id {
			return true
		}
	}
	return false
}
