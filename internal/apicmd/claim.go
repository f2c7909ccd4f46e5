package apicmd

import (
	"context"
	"fmt"
	"io"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

const claimSynopsis = `ID [--release]

Marks a pending ask as yours: "I'm on it", shown to everyone (claimed_by)
and holding off its team's escalation. It does not stop another approver
from answering; answering or dismissing it ends the claim. Someone else's
claim is refused, naming them. --release lets your claim go (an admin may
release anyone's). Needs the approver role.`

// Claim is askd claim: it marks a pending ask as the person's, with a
// human token, or with --release lets the claim go; the server refuses
// someone else's claim, naming them.
func Claim(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "claim", claimSynopsis)
	r := cli.RemoteFlags(e, fs, cli.PersonSide)
	release := fs.Bool("release", false, "let the claim go instead")
	e.SetEnvName("release", "")
	id, err := cli.ParseWithID(e, fs, args)
	if err != nil {
		return err
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	var a *askd.Ask
	if *release {
		a, err = c.Release(ctx, id)
	} else {
		a, err = c.Claim(ctx, id)
	}
	if err != nil {
		return err
	}
	return r.Print(e, a, func(w io.Writer) {
		if a.ClaimedBy != "" {
			fmt.Fprintf(w, "ask %d is claimed by %s\n", a.ID, cli.Term(a.ClaimedBy))
		} else {
			fmt.Fprintf(w, "ask %d is claimed by no one\n", a.ID)
		}
	})
}
