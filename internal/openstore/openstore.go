// Package openstore opens the database a --db flag names: a SQLite file or
// a postgres:// URL, for askd serve (Served, which refuses a file it must
// not serve) and for the commands that work on the database directly
// (Existing, Migrate). Its refusals are worded for the operator: what is
// wrong and what to do.
package openstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/postgres"
	"github.com/askd-dev/askd/internal/sqlite"
)

// IsPostgres reports whether --db names a PostgreSQL database.
func IsPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Open opens the database --db names, applying migrations; a SQLite
// file is created if missing.
func Open(ctx context.Context, db string) (askd.Store, error) {
	if IsPostgres(db) {
		return postgres.Open(ctx, db)
	}
	if err := CheckDir(db); err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, db)
}

// Existing opens the database --db names for the commands that work on it
// directly (token, team, signin-link, audit): a SQLite file that is not
// there is a usage error, not a fresh database whose tokens no server knows.
func Existing(ctx context.Context, db string) (askd.Store, error) {
	if !IsPostgres(db) {
		abs, _ := filepath.Abs(db)
		switch _, err := os.Stat(db); {
		case errors.Is(err, fs.ErrNotExist):
			return nil, cli.UsageError(fmt.Sprintf("--db: no database at %s; give the --db (or ASKD_DB) that askd serve uses, which creates it on first start", abs))
		case err != nil:
			return nil, fmt.Errorf("--db: %w", err)
		}
	}
	return Open(ctx, db)
}

// CheckDir refuses a SQLite path whose directory is missing, in words
// rather than SQLite's "unable to open database file (14)": a usage error.
func CheckDir(db string) error {
	if IsPostgres(db) {
		return nil
	}
	dir := filepath.Dir(db)
	switch st, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return cli.UsageError(fmt.Sprintf("--db: the directory %s does not exist; create it first (mkdir -p %s)", dir, dir))
	case err != nil:
		return fmt.Errorf("--db: %w", err)
	case !st.IsDir():
		return cli.UsageError(fmt.Sprintf("--db: %s is not a directory", dir))
	}
	return nil
}

// Migrate applies migrations to the database --db names and returns the
// ones that were new.
func Migrate(ctx context.Context, db string) ([]string, error) {
	if IsPostgres(db) {
		return postgres.Migrate(ctx, db)
	}
	return sqlite.Migrate(ctx, db)
}

// quickCheckMax is the largest SQLite file Served checks (PRAGMA
// quick_check) before it serves; a larger one is checked in the background,
// /readyz failing until the check passes. quick_check reads every page:
// measured at 0.12 s for a 64 MiB file in the page cache on a 2-core
// machine, so the wait before serving stays well under a second.
const quickCheckMax = 64 << 20

// Served opens the database askd serve serves. On SQLite it refuses,
// with what to do:
//   - a file, -wal file or directory askd cannot write (read-only,
//     immutable, a read-only mount);
//   - no file where askd served one before (its marker, markerPath, is
//     there), or a file other than the one it served (its database id is not
//     the marker's), unless create says to make a new one or take the one
//     there deliberately;
//   - a damaged file (PRAGMA quick_check), for files up to quickCheckMax.
//
// For a larger file, check is the quick_check for the caller to run in the
// background (app.Service.CheckFile); nil otherwise.
func Served(ctx context.Context, db string, create bool) (store askd.Store, check func() error, err error) {
	if IsPostgres(db) {
		store, err = postgres.Open(ctx, db)
		return store, nil, err
	}
	if err := CheckDir(db); err != nil {
		return nil, nil, err
	}
	abs, _ := filepath.Abs(db)
	if err := sqlite.Writable(db); err != nil {
		return nil, nil, fmt.Errorf("--db %s: %w.\n"+
			"askd must write its database: make the file, its -wal file and their directory writable\n"+
			"(chmod u+w; chattr -i for an immutable file; remount read-write), then start again", abs, err)
	}
	marker := markerPath(abs)
	recorded, err := readMarker(marker)
	if err != nil {
		return nil, nil, err
	}
	fi, statErr := os.Stat(db)
	missing := errors.Is(statErr, fs.ErrNotExist)
	if missing && recorded != "" && !create {
		return nil, nil, fmt.Errorf("--db %s: no database there, but askd served one at this path before (id %s, recorded in %s):\n"+
			"it was deleted or moved. Put it back, or restore the latest backup (askd backup; see docs/operations.md),\n"+
			"then start again. To start over with a new, empty database, start once with --create", abs, recorded, marker)
	}
	s, err := sqlite.Open(ctx, db)
	if err != nil {
		return nil, nil, startupFault(abs, err)
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	id, err := s.DatabaseID(ctx)
	if err != nil {
		return nil, nil, startupFault(abs, err)
	}
	if recorded != "" && recorded != id && !create {
		return nil, nil, fmt.Errorf("--db %s: this is not the database askd served at this path (its id is %s; %s records %s):\n"+
			"the file was replaced. Put the right file back, or start once with --create to serve this one from now on", abs, id, marker, recorded)
	}
	if recorded != id {
		if err := writeMarker(marker, id); err != nil {
			return nil, nil, err
		}
	}
	quick := func() error { return s.QuickCheck(context.Background()) }
	if !missing && fi.Size() > quickCheckMax {
		return s, quick, nil
	}
	if err := quick(); err != nil {
		return nil, nil, startupFault(abs, err)
	}
	return s, nil, nil
}

// startupFault words a storage fault found at start for the operator.
func startupFault(abs string, err error) error {
	if askd.ErrorCode(err) == askd.ECORRUPT {
		return fmt.Errorf("--db %s: %w.\n"+
			"askd will not serve a damaged file. Stop everything using it, keep a copy of it, and restore\n"+
			"the latest backup in its place (see docs/operations.md, \"Restore\"); sqlite3's .recover may save\n"+
			"what the backup lacks", abs, err)
	}
	return fmt.Errorf("--db %s: %w", abs, err)
}

// markerPath is the marker file of the SQLite database at db: beside it,
// hidden and named after it (askd.db: .askd.db.id), so that rm askd.db*
// leaves it. It holds the database id (database_info) of the file askd
// serve last served at that path.
func markerPath(db string) string {
	return filepath.Join(filepath.Dir(db), "."+filepath.Base(db)+".id")
}

// readMarker returns the id the marker at path holds, "" when there is none.
func readMarker(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the database marker: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// writeMarker makes the marker at path hold id, replacing it whole (a
// temporary file renamed over it).
func writeMarker(path, id string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return fmt.Errorf("write the database marker: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write the database marker: %w", err)
	}
	return nil
}
