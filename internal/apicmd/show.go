package apicmd

import (
	"context"
	"fmt"
	"io"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

const showSynopsis = `ID

Prints the ask, everything the agent acts on, and its history. A form ask
(an MCP server's question): its message, "asked by SERVER through SESSION",
then each field as [NAME] TITLE with what it takes (type, bounds, format,
required, default; a choice's values as VALUE (TITLE)) and, once answered,
its answer; a url-mode form: the address on a line of its own, never opened,
and its host set apart. A pending form ends with how to answer it.`

// Show is askd show: one ask, with a human token, as describe prints it,
// then its history; a pending form ends with how to answer it.
func Show(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "show", showSynopsis)
	r := cli.RemoteFlags(e, fs, cli.PersonSide)
	id, err := cli.ParseWithID(e, fs, args)
	if err != nil {
		return err
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	d, err := c.Show(ctx, id)
	if err != nil {
		return err
	}
	return r.Print(e, d, func(w io.Writer) {
		describe(w, &d.Ask)
		if d.Kind == askd.KindForm && d.Pending() {
			formHowTo(w, &d.Ask)
		}
		fmt.Fprintln(w, "\nHistory:")
		for _, ev := range d.History {
			line := fmt.Sprintf("  %s  %-10s by %s", ev.At.Local().Format("2006-01-02 15:04:05"), cli.Term(ev.Action), cli.Term(ev.Actor))
			if ev.Note != "" {
				line += "  " + cli.Term(ev.Note)
			}
			fmt.Fprintln(w, line)
		}
	})
}
