package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
)

// ownerOnly makes the database's files readable and writable by their owner
// only (SPEC §7: they hold every answer, and webhook secrets), whatever the
// umask: it creates the main file with mode 0600 when it is missing, before
// SQLite does (SQLite would use 0644 less the umask), and takes group and
// other permissions away from existing files. SQLite gives the -wal, -shm
// and -journal files it creates the main file's mode, so those follow. A file
// that cannot be made owner-only (another user's) is an error naming it:
// askd does not run on a database others can read.
func ownerOnly(path string) error {
	name := filePath(path)
	if name == "" {
		return nil
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		// The umask can only take bits away from 0600; Chmod sets it
		// exactly, should a umask have taken the owner's.
		err = errors.Join(f.Chmod(0o600), f.Close())
		if err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		return nil
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("create %s: %w", name, err)
	}
	for _, n := range []string{name, name + "-wal", name + "-shm", name + "-journal"} {
		fi, err := os.Stat(n)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", n, err)
		}
		if fi.Mode().Perm()&0o077 == 0 {
			continue
		}
		if err := os.Chmod(n, fi.Mode().Perm()&0o700); err != nil {
			return fmt.Errorf("open %s: readable by others (mode %04o) and could not be made owner-only: %w", n, fi.Mode().Perm(), err)
		}
	}
	return nil
}

// filePath is the file a database path names: the path itself, or a file:
// URI's path; "" when there is no file.
func filePath(path string) string {
	if !strings.HasPrefix(path, "file:") {
		return path
	}
	u, err := url.Parse(path)
	if err != nil {
		return ""
	}
	if u.Opaque != "" { // file:askd.db
		return u.Opaque
	}
	return u.Path
}

// Backup writes a consistent copy of the database at path to dest with
// VACUUM INTO, which is safe beside a running server (it reads one
// snapshot, as any reader does, and takes no write lock). dest must not
// exist: it is created readable by its owner only. The copy is compact,
// holds every commit made before it started, and keeps the database's id
// (database_info), so askd serve takes it as the same database.
func Backup(ctx context.Context, path, dest string) error {
	if err := checkPath(path); err != nil {
		return err
	}
	f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	// Not the read pool's DSN: query_only refuses VACUUM INTO, which
	// writes (the copy, not the database).
	db, err := sql.Open("sqlite", path+"?"+pragmaBusyTimeout)
	if err != nil {
		os.Remove(dest)
		return fmt.Errorf("backup %s: %w", path, err)
	}
	defer db.Close()
	// VACUUM INTO takes an empty file as a new one.
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, dest); err != nil {
		os.Remove(dest)
		return fault(fmt.Errorf("backup %s into %s: %w", path, dest, err), path)
	}
	return nil
}
