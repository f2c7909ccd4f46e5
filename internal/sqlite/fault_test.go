package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// writeToken stores a new token named name through s.Update.
func writeToken(s *Store, name string) error {
	return s.Update(context.Background(), func(tx askd.Tx) error {
		return tx.Tokens.CreateToken(context.Background(), &askd.Token{Name: name, Role: askd.RoleHuman,
			Hash: "hash of " + name, CreatedAt: time.Now().UTC().Truncate(time.Microsecond)})
	})
}

// readTokens reads every token through s.View.
func readTokens(s *Store) error {
	return s.View(context.Background(), func(tx askd.Tx) error {
		_, err := tx.Tokens.Tokens(context.Background())
		return err
	})
}

// The faults come from real SQLite errors, provoked on real files, and get
// their code and the message naming the cause, with SQLite's error kept.
func TestFaultClassifies(t *testing.T) {
	path := filepath.Join(t.TempDir(), "askd.db")
	s := openAt(t, path)
	if err := writeToken(s, "first"); err != nil {
		t.Fatal(err)
	}

	exec := func(dsn, query string) error {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, err = db.Exec(query)
		return err
	}
	t.Run("read-only", func(t *testing.T) {
		err := exec("file:"+path+"?mode=ro", "INSERT INTO schema_migrations VALUES ('x', 0)")
		check(t, fault(err, path), askd.EREADONLY, "the database file is read-only")
	})
	t.Run("busy", func(t *testing.T) {
		db, err := sql.Open("sqlite", path+"?_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		tx, err := db.Begin() // holds the write lock
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		err = exec(path+"?_pragma=busy_timeout(0)", "INSERT INTO schema_migrations VALUES ('x', 0)")
		check(t, fault(err, path), askd.EBUSY, "the database is busy")
	})
	t.Run("corrupt", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.db")
		if err := os.WriteFile(bad, []byte(strings.Repeat("not a database ", 512)), 0o600); err != nil {
			t.Fatal(err)
		}
		err := exec(bad, "SELECT * FROM sqlite_master")
		check(t, fault(err, bad), askd.ECORRUPT, "the database file is damaged (corrupt)")
	})
	t.Run("others stay as they are", func(t *testing.T) {
		err := exec(path, "SELECT * FROM no_such_table")
		if askd.ErrorCode(fault(err, path)) != askd.EINTERNAL {
			t.Errorf("a missing table became %v", fault(err, path))
		}
		keep := askd.Errorf(askd.ENOTFOUND, "ask 1 not found")
		if got := fault(fmt.Errorf("x: %w", keep), path); askd.ErrorCode(got) != askd.ENOTFOUND {
			t.Errorf("an askd error became %v", got)
		}
	})
}

func check(t *testing.T, err error, code, message string) {
	t.Helper()
	if askd.ErrorCode(err) != code || askd.ErrorMessage(err) != message {
		t.Errorf("got %v (%s, %q), want %s, %q", err, askd.ErrorCode(err), askd.ErrorMessage(err), code, message)
	}
}

// A store whose file is deleted or replaced under it refuses reads and
// writes with errMoved, rather than writing into a file no one will open
// again; once the file is back, it goes on.
func TestMovedFileRefused(t *testing.T) {
	for _, tt := range []struct {
		name    string
		replace func(t *testing.T, path string)
	}{
		{"deleted", func(t *testing.T, path string) {
			for _, n := range []string{path, path + "-wal", path + "-shm"} {
				if err := os.Remove(n); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
		}},
		{"replaced", func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "other.db")
			o, err := Open(t.Context(), other)
			if err != nil {
				t.Fatal(err)
			}
			o.Close()
			if err := os.Rename(other, path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "askd.db")
			s := openAt(t, path)
			if err := writeToken(s, "before"); err != nil {
				t.Fatal(err)
			}
			saved := filepath.Join(dir, "saved")
			for _, suffix := range []string{"", "-wal"} {
				if err := os.Link(path+suffix, saved+suffix); err != nil {
					t.Fatal(err)
				}
			}
			tt.replace(t, path)
			for what, err := range map[string]error{"write": writeToken(s, "after"), "read": readTokens(s), "ping": s.Ping(t.Context())} {
				if err != errMoved && askd.ErrorMessage(err) != errMoved.Message {
					t.Errorf("%s after the file was %s: %v, want %v", what, tt.name, err, errMoved)
				}
			}
			// The original files back at their paths: the store goes on.
			for _, suffix := range []string{"", "-wal"} {
				if err := os.Rename(saved+suffix, path+suffix); err != nil {
					t.Fatal(err)
				}
			}
			if err := writeToken(s, "back"); err != nil {
				t.Errorf("write once the file is back: %v", err)
			}
		})
	}
}
