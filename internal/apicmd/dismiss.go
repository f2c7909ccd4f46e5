package apicmd

import (
	"context"
	"io"

	"github.com/askd-dev/askd/internal/cli"
)

// Dismiss is askd dismiss: it closes an ask without answering it, with a
// human token, passing --response to the agent, and prints the ask.
func Dismiss(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "dismiss", "ID [--response TEXT]")
	r := cli.RemoteFlags(e, fs, cli.PersonSide)
	response := fs.String("response", "", "a reply passed to the agent")
	id, err := cli.ParseWithID(e, fs, args)
	if err != nil {
		return err
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	a, err := c.Dismiss(ctx, id, *response)
	if err != nil {
		return err
	}
	return r.Print(e, a, func(w io.Writer) { describe(w, a) })
}
