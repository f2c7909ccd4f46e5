package apicmd

import (
	"context"
	"io"

	"github.com/askd-dev/askd/internal/cli"
)

// Check is askd check: it prints one of the session's asks, with an agent
// token, waiting up to --wait for it to settle. Another token's ask, or
// another session's, is not found.
func Check(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "check", "ID [--wait 30s]")
	r := cli.RemoteFlags(e, fs, cli.AskingSide)
	wait := fs.Duration("wait", 0, "wait up to this long for the ask to settle")
	id, err := cli.ParseWithID(e, fs, args)
	if err != nil {
		return err
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	a, err := c.Check(ctx, id, *wait)
	if err != nil {
		return err
	}
	return r.Print(e, a, func(w io.Writer) { describe(w, a) })
}
