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
	stmts := []string{`CREATE TABLE schema_migrations (version TEXT NOT NULL PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`}
	for _, f := range files {
		v := strings.TrimSuffix(filepath.Base(f), ".sql")
		if v >= "014" {
			break
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, string(b), "INSERT INTO schema_migrations (version) VALUES ('"+v+"')")
	}
	stmts = append(stmts,
		`INSERT INTO tokens (name, role, hash, created_at) VALUES ('alice', 'human', 'aa', now()), ('ci', 'agent', 'cc', now())`,
		`INSERT INTO asks (kind, session, agent, status, title, created_at, updated_at) VALUES ('ready', 's', 'ci', 'pending', 'Review', now(), now())`)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%.60s: %v", s, err)
		}
	}

	storetest.CheckTeamsMigrated(t, open(t, url))
}
