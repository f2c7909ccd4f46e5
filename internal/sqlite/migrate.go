package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"slices"
	"time"

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

// migrate applies the migrations db lacks, in one transaction, and returns
// their versions. db is the writer: its transactions are IMMEDIATE, so two
// processes starting at once apply each migration once, one after the other.
func migrate(ctx context.Context, db *sql.DB) ([]string, error) {
	ms, err := migrationList()
	if err != nil {
		return nil, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback()

	if _, err := tx.ExecContext(ctx, `
		CREATE TABLE IF NOT EXISTS schema_migrations (
			version    TEXT    NOT NULL PRIMARY KEY,
			applied_at INTEGER NOT NULL -- microseconds since the Unix epoch
		) STRICT`); err != nil {
		return nil, fmt.Errorf("create schema_migrations: %w", err)
	}
	done, err := appliedVersions(ctx, tx)
	if err != nil {
		return nil, err
	}
	if err := migrations.CheckKnown(ms, done); err != nil {
		return nil, err
	}

	applied := []string{}
	for _, m := range ms {
		if slices.Contains(done, m.Version) {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return nil, fmt.Errorf("apply migration %s: %w", m.Version, err)
		}
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
			m.Version, micros(time.Now())); err != nil {
			return nil, fmt.Errorf("record migration %s: %w", m.Version, err)
		}
		applied = append(applied, m.Version)
		if m.Version == "014_audit" {
			if err := chainUnhashed(ctx, tx); err != nil {
				return nil, err
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("commit migrations: %w", err)
	}
	return applied, nil
}

// appliedVersions returns the versions recorded in schema_migrations.
func appliedVersions(ctx context.Context, tx *sql.Tx) ([]string, error) {
	rows, err := tx.QueryContext(ctx, "SELECT version FROM schema_migrations ORDER BY version")
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	var versions []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		versions = append(versions, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	return versions, nil
}
