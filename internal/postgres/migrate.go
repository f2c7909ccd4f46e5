package postgres

import (
	"context"
	"embed"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd/internal/migrations"
)

// migrationFiles are the schema changes, applied in the order of their names
// (001_…, 002_…). A migration, once released, is never edited: changes come as
// a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationList returns the embedded migrations in order.
func migrationList() ([]migrations.Migration, error) { return migrations.Load(migrationFiles) }

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
	ms, err := migrationList()
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
	if err := migrations.CheckKnown(ms, done); err != nil {
		return nil, err
	}

	applied := []string{}
	for _, m := range ms {
		if slices.Contains(done, m.Version) {
			continue
		}
		// No arguments: pgx sends it as a simple query, which may hold many
		// statements, dollar-quoted function bodies included.
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return nil, translate(err, "apply migration "+m.Version)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version) VALUES ($1)", m.Version); err != nil {
			return nil, translate(err, "record migration "+m.Version)
		}
		applied = append(applied, m.Version)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, translate(err, "commit migrations")
	}
	return applied, nil
}
