package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
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

// migrate applies the migrations db lacks, in one transaction, and returns
// their versions. db is the writer: its transactions are IMMEDIATE, so two
// processes starting at once apply each migration once, one after the other.
func migrate(ctx context.Context, db *sql.DB) ([]string, error) {
	ms, err := migrations()
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
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return nil, fmt.Errorf("apply migration %s: %w", m.version, err)
		}
		if _, err := tx.ExecContext(ctx,
			"INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
			m.version, micros(time.Now())); err != nil {
			return nil, fmt.Errorf("record migration %s: %w", m.version, err)
		}
		applied = append(applied, m.version)
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
