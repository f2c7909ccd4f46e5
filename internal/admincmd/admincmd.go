// Package admincmd holds askd's commands that work on the database directly,
// with no server asked: token, team, signin-link and audit (whose changes
// the audit trail records as the command line's, cli:<user>), backup and
// migrate. Each is a func(ctx, *cli.Env, args) error that cmd/askd's
// command table points at; the database is opened with openstore.
package admincmd

import (
	"os"
	"os/user"
)

// cliActor is who the CLI working on the database is, for the audit trail:
// "cli:" and the operating-system user.
func cliActor() string {
	name := "unknown"
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	} else if v := os.Getenv("USER"); v != "" {
		name = v
	}
	return "cli:" + name
}

// orDash is s, or "-" for none, as the tables print an empty cell.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
