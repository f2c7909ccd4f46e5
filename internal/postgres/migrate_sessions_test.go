package postgres_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/storetest"
)

// TestMigrateSessionsToTokens: a database from before sessions belonged to
// tokens (migrations 001–003 applied), with the asks and channels that
// storetest.CheckSessionsMigrated describes, migrates as it says.
func TestMigrateSessionsToTokens(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	stmts := []string{`CREATE TABLE schema_migrations (version TEXT NOT NULL PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`}
	for _, v := range []string{"001_asks_events_tokens", "002_channels_deliveries", "003_mcp_calls"} {
		b, err := os.ReadFile("migrations/" + v + ".sql")
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, string(b), "INSERT INTO schema_migrations (version) VALUES ('"+v+"')")
	}
	stmts = append(stmts,
		`INSERT INTO asks (kind, session, agent, status, created_at, updated_at) VALUES
			('ready', 'shared', 'a', 'pending', now(), now()), ('ready', 'shared', 'b', 'pending', now(), now()),
			('question', 'mine', 'a', 'answered', now(), now()), ('question', 'mine', 'a', 'pending', now(), now())`,
		`INSERT INTO channels VALUES ('shared', '{"type":"webhook","url":"https://b.example/steal","secret":"k"}', now()),
			('mine', '{"type":"webhook","url":"https://a.example/tell","secret":"k"}', now()),
			('unused', '{"type":"hook"}', now())`)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}

	s := open(t, url)
	storetest.CheckSessionsMigrated(t, s)
}
