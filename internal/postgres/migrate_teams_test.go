package postgres_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/storetest"
)

// TestMigrateTeams: a database from before a team's inbox (migrations
// 001–013 applied), holding what storetest.CheckTeamsMigrated describes,
// has its human token made an admin once opened.
func TestMigrateTeams(t *testing.T) {
	url := oldDatabase(t, "014",
		`INSERT INTO tokens (name, role, hash, created_at) VALUES ('alice', 'human', 'aa', now()), ('ci', 'agent', 'cc', now())`,
		`INSERT INTO asks (kind, session, agent, status, title, created_at, updated_at) VALUES ('ready', 's', 'ci', 'pending', 'Review', now(), now())`)
	storetest.CheckTeamsMigrated(t, open(t, url))
}

// oldDatabase makes a database of pgtest's as an askd from before
// migration before left it: the migrations below it applied and recorded,
// then stmts run (its rows). It returns its URL, for a migration test to
// open.
func oldDatabase(t *testing.T, before string, stmts ...string) string {
	t.Helper()
	ctx := t.Context()
	url := pgtest.URL(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	files, err := filepath.Glob("migrations/*.sql") // in order of their names
	if err != nil {
		t.Fatal(err)
	}
	all := []string{`CREATE TABLE schema_migrations (version TEXT NOT NULL PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`}
	for _, f := range files {
		v := strings.TrimSuffix(filepath.Base(f), ".sql")
		if v >= before {
			break
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, string(b), "INSERT INTO schema_migrations (version) VALUES ('"+v+"')")
	}
	for _, s := range append(all, stmts...) {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}
	return url
}
