package main

import (
	"context"
	"encoding/json"
	"fmt"
)

// cmdMigrate is askd migrate: the database's migrations applied, and named.
func cmdMigrate(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "migrate", "[--db PATH|URL]")
	db := fs.String("db", "./askd.db", "database: a SQLite file (created if missing), or a postgres:// URL")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("migrate: unexpected argument %q", fs.Arg(0)))
	}
	if err := checkDBDir(*db); err != nil {
		return err
	}
	applied, err := migrateDB(ctx, *db)
	if err != nil {
		return err
	}
	if *asJSON {
		if applied == nil {
			applied = []string{}
		}
		return json.NewEncoder(e.stdout).Encode(map[string]any{"applied": applied})
	}
	if len(applied) == 0 {
		fmt.Fprintln(e.stdout, "database is up to date")
	}
	for _, m := range applied {
		fmt.Fprintln(e.stdout, "applied", m)
	}
	return nil
}
