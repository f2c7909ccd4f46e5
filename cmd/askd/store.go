package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/postgres"
	"github.com/askd-dev/askd/internal/sqlite"
)

// isPostgres reports whether --db names a PostgreSQL database.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// openStore opens the database --db names, applying migrations; a SQLite
// file is created if missing (askd serve, on first start).
func openStore(ctx context.Context, db string) (askd.Store, error) {
	if isPostgres(db) {
		return postgres.Open(ctx, db)
	}
	if err := checkDBDir(db); err != nil {
		return nil, err
	}
	return sqlite.Open(ctx, db)
}

// openExisting opens the database --db names for the commands that work on
// it directly (token, signin-link): a SQLite file that is not there is an
// error, not a fresh database whose tokens no server knows.
func openExisting(ctx context.Context, db string) (askd.Store, error) {
	if !isPostgres(db) {
		abs, _ := filepath.Abs(db)
		switch _, err := os.Stat(db); {
		case errors.Is(err, fs.ErrNotExist):
			return nil, usageError(fmt.Sprintf("--db: no database at %s; give the --db (or ASKD_DB) that askd serve uses, which creates it on first start", abs))
		case err != nil:
			return nil, fmt.Errorf("--db: %w", err)
		}
	}
	return openStore(ctx, db)
}

// checkDBDir refuses a SQLite path whose directory is missing, in words
// rather than SQLite's "unable to open database file (14)".
func checkDBDir(db string) error {
	if isPostgres(db) {
		return nil
	}
	dir := filepath.Dir(db)
	switch st, err := os.Stat(dir); {
	case errors.Is(err, fs.ErrNotExist):
		return usageError(fmt.Sprintf("--db: the directory %s does not exist; create it first (mkdir -p %s)", dir, dir))
	case err != nil:
		return fmt.Errorf("--db: %w", err)
	case !st.IsDir():
		return usageError(fmt.Sprintf("--db: %s is not a directory", dir))
	}
	return nil
}

// migrateDB applies migrations and returns the ones that were new.
func migrateDB(ctx context.Context, db string) ([]string, error) {
	if isPostgres(db) {
		return postgres.Migrate(ctx, db)
	}
	return sqlite.Migrate(ctx, db)
}
