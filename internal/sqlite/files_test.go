//go:build unix

package sqlite

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// withUmask runs the test under umask mask, the usual 022 that makes new files
// world-readable. The umask is the process's: these tests do not run in
// parallel.
func withUmask(t *testing.T, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// wantMode fails unless each file exists with mode 0600.
func wantMode(t *testing.T, files ...string) {
	t.Helper()
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", filepath.Base(f), m)
		}
	}
}

// write makes SQLite write, so that the WAL and shared-memory files exist.
func write(t *testing.T, s *Store) {
	t.Helper()
	err := s.Update(t.Context(), func(tx askd.Tx) error {
		return tx.Tokens.CreateToken(t.Context(), &askd.Token{Name: "n" + time.Now().Format("150405.000000000"),
			Role: askd.RoleHuman, Hash: time.Now().String(), CreatedAt: time.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestFilesOwnerOnly(t *testing.T) {
	withUmask(t, 0o022)
	t.Run("new database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "askd.db")
		s := openAt(t, path)
		write(t, s)
		wantMode(t, path, path+"-wal", path+"-shm")
	})
	t.Run("new database through Migrate", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "askd.db")
		if _, err := Migrate(t.Context(), path); err != nil {
			t.Fatal(err)
		}
		wantMode(t, path)
	})
	t.Run("new database as a file URI", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "askd.db")
		s := openAt(t, "file:"+path)
		write(t, s)
		wantMode(t, path, path+"-wal", path+"-shm")
	})
	t.Run("existing world-readable files tightened", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "askd.db")
		s, err := Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		write(t, s)
		for _, f := range []string{path, path + "-wal", path + "-shm"} {
			if err := os.Chmod(f, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// A WAL left behind by a crash keeps its mode; open while the old
		// store still has the files, as a token command beside a server.
		s2 := openAt(t, path)
		write(t, s2)
		wantMode(t, path, path+"-wal", path+"-shm")
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("group permissions taken too", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "askd.db")
		if _, err := Migrate(t.Context(), path); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o660); err != nil {
			t.Fatal(err)
		}
		openAt(t, path)
		wantMode(t, path)
	})
}
