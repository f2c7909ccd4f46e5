// Package admincmd holds askd's commands that work on the database directly,
// with no server asked: token, team, signin-link and audit, which go through
// the app as a local admin (app.LocalAdmin, whose changes the audit trail
// records as cli:<user>), and backup and migrate, which work on the database
// below the app. Each is a func(ctx, *cli.Env, args) error that cmd/askd's
// command table points at; the database is opened with openstore.
package admincmd

import (
	"context"
	"os"
	"os/user"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/openstore"
)

// openApp opens the database db names, which must exist
// (openstore.Existing), and returns the app over it, for the commands that
// change or read what askd serve uses: each makes its one call into the app
// as localAdmin, as the HTTP API does as the person signed in. done closes
// the database.
func openApp(ctx context.Context, db string) (svc *app.Service, done func(), err error) {
	store, err := openstore.Existing(ctx, db)
	if err != nil {
		return nil, nil, err
	}
	return app.New(store, app.Config{}), func() { store.Close() }, nil
}

// localAdmin is the command line's caller (app.LocalAdmin), recorded in the
// audit trail as "cli:" and the operating-system user.
func localAdmin() askd.Caller {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	return app.LocalAdmin(name)
}

// orDash is s, or "-" for none, as the tables print an empty cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
