package main

import (
	"context"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/postgres"
	"github.com/askd-dev/askd/internal/sqlite"
)

// isPostgres reports whether --db names a PostgreSQL database.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// openStore opens the database --db names, applying migrations.
func openStore(ctx context.Context, db string) (askd.Store, error) {
	if isPostgres(db) {
		return postgres.Open(ctx, db)
	}
	return sqlite.Open(ctx, db)
}

// migrateDB applies migrations and returns the ones that were new.
func migrateDB(ctx context.Context, db string) ([]string, error) {
	if isPostgres(db) {
		return postgres.Migrate(ctx, db)
	}
	return sqlite.Migrate(ctx, db)
}
