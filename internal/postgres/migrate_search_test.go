package postgres_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/storetest"
)

// TestMigrateSearch: a database from before the history was searched
// (migrations 001–005 applied), holding the asks that
// storetest.CheckSearchMigrated describes, has them indexed once opened.
func TestMigrateSearch(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	stmts := []string{`CREATE TABLE schema_migrations (version TEXT NOT NULL PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`}
	for _, v := range []string{"001_asks_events_tokens", "002_channels_deliveries", "003_mcp_calls", "004_sessions", "005_browser_sessions"} {
		b, err := os.ReadFile("migrations/" + v + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, string(b), "INSERT INTO schema_migrations (version) VALUES ('"+v+"')")
	}
	stmts = append(stmts, `INSERT INTO asks (kind, session, agent, status, title, questions, answer, created_at, updated_at, settled_at, settled_by) VALUES
		('question', 's', 'a', 'answered', '',
			'[{"question":"Which region?","header":"Region","options":[{"label":"eu-west"},{"label":"us-east"}],"multiSelect":false}]',
			'{"answers":{"Which region?":"Frankfurt please"}}', now() - interval '4 hours', now() - interval '3 hours', now() - interval '3 hours', 'alice'),
		('approval', 's', 'a', 'answered', 'Drop the table', NULL, '{"decision":"rejected","comment":"never on Fridays"}',
			now() - interval '4 hours', now() - interval '2 hours', now() - interval '2 hours', 'alice'),
		('decision', 's', 'a', 'answered', 'Ship it?', NULL, '{"answer":"tomorrow morning"}',
			now() - interval '4 hours', now() - interval '1 hour', now() - interval '1 hour', 'alice'),
		('approval', 's', 'a', 'answered', 'Rotate keys', NULL, '{"decision":"modified","payload":{"k":"\u0000"},"comment":"lunchtime please"}',
			now() - interval '4 hours', now() - interval '30 minutes', now() - interval '30 minutes', 'alice'),
		('approval', 's', 'a', 'answered', 'Flush the caches', NULL, '{"decision":"modified","payload":{"k":"\ud800"},"comment":"teatime"}',
			now() - interval '9 hours', now() - interval '8 hours', now() - interval '8 hours', 'alice'),
		('ready', 's', 'a', 'pending', 'Pending frankfurt', NULL, NULL, now(), now(), NULL, '')`)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}

	s := open(t, url)
	// A lone surrogate escape, which json keeps and no json function reads:
	// the migration indexes that ask by its title and details alone, and
	// goes on. Then it goes, for the check both stores share.
	err = s.Update(ctx, func(tx askd.Tx) error {
		found, err := tx.Asks.SearchAsks(ctx, askd.SearchQuery{Words: []string{"caches"}})
		if err != nil {
			return err
		}
		if len(found) != 1 || found[0].Title != "Flush the caches" {
			t.Errorf("search caches after migration = %d asks, want the one with the unreadable payload", len(found))
		}
		_, err = tx.Asks.DeleteAsks(ctx, askd.Purge{SettledBefore: time.Now().Add(-5 * time.Hour), At: time.Now(), Retain: 5 * time.Hour}, 1000)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	storetest.CheckSearchMigrated(t, s)
}
