package apicmd

import (
	"context"
	"io"

	"github.com/askd-dev/askd/internal/cli"
)

// Cancel is askd cancel: it withdraws one of the session's pending asks,
// with an agent token, and prints it.
func Cancel(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "cancel", "ID")
	r := cli.RemoteFlags(e, fs, cli.AskingSide)
	id, err := cli.ParseWithID(e, fs, args)
	if err != nil {
		return err
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	a, err := c.Withdraw(ctx, id)
	if err != nil {
		return err
	}
	return r.Print(e, a, func(w io.Writer) { describe(w, a) })
}
