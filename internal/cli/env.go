// Package cli is what askd's commands share: the environment a command runs
// in (Env), flags that also read ASKD_* variables and may follow the
// arguments (Flags, Parse), exit statuses carried by errors (ExitCode), and
// the connection to a running askd with its token (Remote), printing what
// it returns safely for a terminal (Term, WriteJSON).
//
// Each subsystem's commands live in a package of their own that takes an
// *Env and returns an error carrying the exit status; cmd/askd is the table
// of commands.
package cli

import (
	"context"
	"io"
)

// Env is what a command gets besides its arguments.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// envNames overrides a flag's environment variable (flag name to
	// variable, "" for none): the person's commands take their token
	// from ASKD_HUMAN_TOKEN, not ASKD_TOKEN.
	envNames map[string]string
}

// Command is one of askd's commands: what askd help says of it, and what
// runs it with the arguments after its name.
type Command struct {
	Summary string
	Run     func(ctx context.Context, e *Env, args []string) error
}
