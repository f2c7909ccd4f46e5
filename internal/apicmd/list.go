package apicmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/cli"
)

// The person's commands, with a human token: list, show, dismiss (askd
// answer is in answer.go). Their shared flags and client are in remote.go,
// what they print in describe.go.

func List(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "list", "[--mine] [--status S] [--agent NAME] [--session NAME] [--kind K] [--limit N]")
	r := cli.RemoteFlags(e, fs, cli.PersonSide)
	mine := fs.Bool("mine", false, "only the asks routed to you, a team of yours, or nobody")
	status := fs.String("status", "", "pending, answered or cancelled (default: pending, then the last settled)")
	agent := fs.String("agent", "", "only this agent token's asks (with --session: its session of that name)")
	session := fs.String("session", "", "only sessions of this name (of every agent token, unless --agent)")
	kind := fs.String("kind", "", "only this kind")
	limit := fs.Int("limit", 0, "at most this many settled asks")
	for _, n := range []string{"mine", "status", "agent", "session", "kind", "limit"} {
		e.SetEnvName(n, "") // an agent's ASKD_SESSION must not narrow the person's list
	}
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	asks, err := c.List(ctx, client.ListOptions{Mine: *mine, Status: askd.Status(*status), Agent: *agent, Session: *session, Kind: askd.Kind(*kind), Limit: *limit})
	if err != nil {
		return err
	}
	return r.Print(e, asks, func(w io.Writer) {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tKIND\tAGENT\tSESSION\tWHAT")
		for _, a := range asks {
			st := string(a.Status)
			if a.CancelReason != "" {
				st += "/" + string(a.CancelReason)
			}
			what := a.Summary()
			if a.Kind == askd.KindForm { // a form's message may run to several lines: the first says what it is
				what, _, _ = strings.Cut(strings.TrimSpace(what), "\n")
			}
			if a.ClaimedBy != "" {
				st += " (claimed by " + a.ClaimedBy + ")"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", a.ID, cli.Term(st), cli.Term(string(a.Kind)), cli.Term(a.Agent), cli.Term(a.Session), oneLine(what, 60))
		}
		tw.Flush()
	})
}

const showSynopsis = `ID

Prints the ask, everything the agent acts on, and its history. A form ask
(an MCP server's question): its message, "asked by SERVER through SESSION",
then each field as [NAME] TITLE with what it takes (type, bounds, format,
required, default; a choice's values as VALUE (TITLE)) and, once answered,
its answer; a url-mode form: the address on a line of its own, never opened,
and its host set apart. A pending form ends with how to answer it.`

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

const claimSynopsis = `ID [--release]

Marks a pending ask as yours: "I'm on it", shown to everyone (claimed_by)
and holding off its team's escalation. It does not stop another approver
from answering; answering or dismissing it ends the claim. Someone else's
claim is refused, naming them. --release lets your claim go (an admin may
release anyone's). Needs the approver role.`

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
