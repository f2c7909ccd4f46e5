package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrationFiles are the schema changes, applied in the order of their names
// (001_…, 002_…). A migration, once released, is never edited: changes come as
// a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one schema change: its version (the file name without .sql)
// and its SQL.
type migration struct {
	version string
	sql     string
}

// migrations returns the embedded migrations in order.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	slices.Sort(names)
	ms := make([]migration, 0, len(names))
	for _, name := range names {
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		ms = append(ms, migration{version: strings.TrimSuffix(path.Base(name), ".sql"), sql: string(b)})
	}
	return ms, nil
}

// Migrate applies to the database at url the migrations it lacks, in order and
// in one transaction, and returns the versions it applied (none when it was up
// to date). It fails when the database holds a migration this build does not
// know, that is, when a newer askd has used it. Open migrates too; Migrate is
// for `askd migrate`.
func Migrate(ctx context.Context, url string) ([]string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, translate(err, "connect")
	}
	defer conn.Close(context.WithoutCancel(ctx))
	return migrate(ctx, conn)
}

// migrateLock is the advisory lock key that makes processes starting at once
// take turns: the first applies the migrations, the others then find nothing
// left to do. (CREATE TABLE IF NOT EXISTS alone is not safe against a
// concurrent twin: both may try to create the table.)
const migrateLock = "SELECT pg_advisory_xact_lock(hashtextextended('askd migrations', 0))"

// conn is what migrate needs of a connection: *pgx.Conn and *pgxpool.Conn both have it.
type conn interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// migrate applies the migrations c's database lacks, in one transaction that
// first takes migrateLock, and returns their versions.
func migrate(ctx context.Context, c conn) ([]string, error) {
	ms, err := migrations()
	if err != nil {
		return nil, err
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return nil, translate(err, "begin migration")
	}
	defer rollback(ctx, tx)

	if _, err := tx.Exec(ctx, migrateLock); err != nil {
		return nil, translate(err, "lock for migration")
	}
	if _, err := tx.Exec(ctx, `
		CREATE TABLE IF NOT EXISTS schema_migrations (
			version    TEXT        NOT NULL PRIMARY KEY,
			applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
		)`); err != nil {
		return nil, translate(err, "create schema_migrations")
	}
	rows, err := tx.Query(ctx, "SELECT version FROM schema_migrations ORDER BY version")
	if err != nil {
		return nil, translate(err, "read schema_migrations")
	}
	done, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, translate(err, "read schema_migrations")
	}
	known := make(map[string]bool, len(ms))
	for _, m := range ms {
		known[m.version] = true
	}
	for _, v := range done {
		if !known[v] {
			return nil, fmt.Errorf("the database has migration %s, which this askd does not know: it was used by a newer askd", v)
		}
	}

	applied := []string{}
	for _, m := range ms {
		if slices.Contains(done, m.version) {
			continue
		}
		// No arguments: pgx sends it as a simple query, which may hold many
		// statements, dollar-quoted function bodies included.
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return nil, translate(err, "apply migration "+m.version)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", m.version); err != nil {
			return nil, translate(err, "record migration "+m.version)
		}
		applied = append(applied, m.version)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, translate(err, "commit migrations")
	}
	return applied, nil
}
