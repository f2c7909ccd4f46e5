package sqlite

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/storetest"
)

// TestMigrateSearch: a database from before the history was searched
// (migrations 001–005 applied), holding the asks that
// storetest.CheckSearchMigrated describes, has them indexed once opened.
func TestMigrateSearch(t *testing.T) {
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
		if m.Version >= "006" {
			break
		}
		stmts = append(stmts, m.SQL, "INSERT INTO schema_migrations VALUES ('"+m.Version+"', 0)")
	}
	stmts = append(stmts, `INSERT INTO asks (kind, session, agent, status, title, questions, answer, created_at, updated_at, settled_at, settled_by) VALUES
		('question', 's', 'a', 'answered', '',
			'[{"question":"Which region?","header":"Region","options":[{"label":"eu-west"},{"label":"us-east"}],"multiSelect":false}]',
			'{"answers":{"Which region?":"Frankfurt please"}}', 10, 100, 100, 'alice'),
		('approval', 's', 'a', 'answered', 'Drop the table', NULL, '{"decision":"rejected","comment":"never on Fridays"}', 20, 200, 200, 'alice'),
		('decision', 's', 'a', 'answered', 'Ship it?', NULL, '{"answer":"tomorrow morning"}', 30, 300, 300, 'alice'),
		('ready', 's', 'a', 'pending', 'Pending frankfurt', NULL, NULL, 40, 40, NULL, '')`)
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%.60s: %v", stmt, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := openAt(t, path)
	storetest.CheckSearchMigrated(t, s)
}

// TestPurgeLeavesNoWords: the index itself, not only the asks it is joined
// with, loses a purged ask's words.
func TestPurgeLeavesNoWords(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	if _, err := s.write.ExecContext(ctx, `INSERT INTO asks (kind, session, agent, status, title, created_at, updated_at, settled_at)
		VALUES ('ready', 's', 'a', 'answered', 'Kestrel', 1, 1, 1), ('ready', 's', 'a', 'answered', 'Kestrel too', 1, 1, 1000)`); err != nil {
		t.Fatal(err)
	}
	indexed := func() int {
		t.Helper()
		var n int
		if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM asks_search WHERE asks_search MATCH '"kestrel"'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := indexed(); n != 2 {
		t.Fatalf("%d rows of the index hold the word, want 2", n)
	}
	if err := s.Update(ctx, func(tx askd.Tx) error {
		_, err := tx.DeleteAsks(ctx, time.UnixMicro(500))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n := indexed(); n != 1 {
		t.Errorf("after purging one ask %d rows of the index hold the word, want 1", n)
	}
}
