package admincmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/openstore"
	"github.com/askd-dev/askd/internal/sqlite"
)

// Backup is askd backup: it copies the SQLite database to a new file (sqlite.Backup: VACUUM
// INTO, safe while askd serves). Restoring is putting the copy in place of
// the database while askd is stopped (docs/operations.md).
func Backup(ctx context.Context, e *cli.Env, args []string) error {
	fl := cli.Flags(e, "backup", "[--db PATH] FILE")
	db := fl.String("db", "./askd.db", "the SQLite database to copy")
	asJSON := fl.Bool("json", false, "print JSON")
	if err := cli.Parse(e, fl, args); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return cli.UsageError("backup: give the file to write, which must not exist: askd backup FILE")
	}
	dest := fl.Arg(0)
	if openstore.IsPostgres(*db) {
		return cli.UsageError("backup: --db is PostgreSQL: back it up with pg_dump (pg_dump -Fc -f askd.dump 'postgres://...'; restore with pg_restore), see docs/operations.md")
	}
	if _, err := os.Stat(dest); err == nil {
		return cli.UsageError(fmt.Sprintf("backup: %s exists; askd does not overwrite a file: give a new name", dest))
	}
	if _, err := os.Stat(*db); errors.Is(err, fs.ErrNotExist) {
		return cli.UsageError(fmt.Sprintf("backup: no database at %s (--db)", *db))
	}
	if err := sqlite.Backup(ctx, *db, dest); err != nil {
		return err
	}
	st, err := os.Stat(dest)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(map[string]any{"backup": dest, "bytes": st.Size()})
	}
	fmt.Fprintf(e.Stdout, "backed up %s to %s (%d bytes)\n", *db, dest, st.Size())
	return nil
}
