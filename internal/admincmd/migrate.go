package admincmd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/openstore"
)

// Migrate is askd migrate: the database's migrations applied, and named.
func Migrate(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "migrate", "[--db PATH|URL]")
	db := fs.String("db", "./askd.db", "database: a SQLite file (created if missing), or a postgres:// URL")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("migrate: unexpected argument %q", fs.Arg(0)))
	}
	if err := openstore.CheckDir(*db); err != nil {
		return err
	}
	applied, err := openstore.Migrate(ctx, *db)
	if err != nil {
		return err
	}
	if *asJSON {
		if applied == nil {
			applied = []string{}
		}
		return json.NewEncoder(e.Stdout).Encode(map[string]any{"applied": applied})
	}
	if len(applied) == 0 {
		fmt.Fprintln(e.Stdout, "database is up to date")
	}
	for _, m := range applied {
		fmt.Fprintln(e.Stdout, "applied", m)
	}
	return nil
}
