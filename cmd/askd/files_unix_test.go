//go:build unix

package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBinaryCreatesOwnerOnlyFiles runs the real binary's serve, migrate and
// token create under umask 022, which would make new files world-readable,
// and checks that the database files they create are 0600 (SPEC §7).
func TestBinaryCreatesOwnerOnlyFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "askd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	old := syscall.Umask(0o022) // inherited by the processes started below
	t.Cleanup(func() { syscall.Umask(old) })

	askd := func(t *testing.T, args ...string) {
		t.Helper()
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Fatalf("askd %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	t.Run("migrate", func(t *testing.T) {
		db := filepath.Join(dir, "migrate.db")
		askd(t, "migrate", "--db", db)
		wantOwnerOnly(t, db)
	})
	t.Run("token create", func(t *testing.T) {
		db := filepath.Join(dir, "token.db")
		askd(t, "migrate", "--db", db)
		if err := os.Chmod(db, 0o644); err != nil { // as a copy or a restore might leave it
			t.Fatal(err)
		}
		askd(t, "token", "create", "--agent", "a1", "--db", db)
		wantOwnerOnly(t, db)
	})
	t.Run("serve", func(t *testing.T) {
		db := filepath.Join(dir, "serve.db")
		cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", db)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		})
		listening := make(chan bool, 1)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "listening on") {
					listening <- true
				}
			}
		}()
		select {
		case <-listening:
		case <-time.After(30 * time.Second):
			t.Fatal("askd serve did not start listening")
		}
		// Serving, with its first tokens written: the WAL and shared
		// memory are there beside the file.
		wantOwnerOnly(t, db, db+"-wal", db+"-shm")
	})
	t.Run("existing world-readable database", func(t *testing.T) {
		db := filepath.Join(dir, "migrate.db")
		if err := os.Chmod(db, 0o644); err != nil {
			t.Fatal(err)
		}
		askd(t, "token", "create", "--human", "h1", "--db", db)
		wantOwnerOnly(t, db)
	})
}

func wantOwnerOnly(t *testing.T, files ...string) {
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
