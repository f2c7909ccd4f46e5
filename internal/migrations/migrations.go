// Package migrations reads a store's embedded schema migrations. Each store
// keeps its own SQL (one dialect each, side by side) and applies it its own
// way; the listing and the "newer database" check are the same for both.
package migrations

import (
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Migration is one schema change: its version (the file name without .sql)
// and its SQL.
type Migration struct {
	Version string
	SQL     string
}

// Load returns the migrations/*.sql files of fsys in the order of their
// names (001_…, 002_…). A migration, once released, is never edited: changes
// come as a new file.
func Load(fsys fs.FS) ([]Migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	slices.Sort(names)
	ms := make([]Migration, 0, len(names))
	for _, name := range names {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		ms = append(ms, Migration{Version: strings.TrimSuffix(path.Base(name), ".sql"), SQL: string(b)})
	}
	return ms, nil
}

// CheckKnown fails when the database has applied a migration that is not in
// ms, that is, when a newer askd has used it.
func CheckKnown(ms []Migration, applied []string) error {
	for _, v := range applied {
		if !slices.ContainsFunc(ms, func(m Migration) bool { return m.Version == v }) {
			return fmt.Errorf("the database has migration %s, which this askd does not know: it was used by a newer askd", v)
		}
	}
	return nil
}
