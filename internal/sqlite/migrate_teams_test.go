package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/askd-dev/askd/internal/storetest"
)

// TestMigrateTeams: a database from before a team's inbox (migrations
// 001–012 applied), holding what storetest.CheckTeamsMigrated describes,
// has its human token made an admin once opened.
func TestMigrateTeams(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "askd.db")
	db, err := openWriter(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrationList()
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{`CREATE TABLE schema_migrations (version TEXT NOT NULL PRIMARY KEY, applied_at INTEGER NOT NULL) STRICT`}
	for _, m := range ms {
		if m.Version >= "013" {
			break
		}
		stmts = append(stmts, m.SQL, "INSERT INTO schema_migrations VALUES ('"+m.Version+"', 0)")
	}
	stmts = append(stmts,
		`INSERT INTO tokens (name, role, hash, created_at) VALUES ('alice', 'human', 'aa', 10), ('ci', 'agent', 'cc', 20)`,
		`INSERT INTO asks (kind, session, agent, status, title, created_at, updated_at) VALUES ('ready', 's', 'ci', 'pending', 'Review', 30, 30)`)
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	storetest.CheckTeamsMigrated(t, openAt(t, path))
}
