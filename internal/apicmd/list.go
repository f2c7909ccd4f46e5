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

// List is askd list: the asks in the inbox, with a human token, as a table
// or --json: the pending ones, then the last settled, unless --status says
// which.
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
			// An MCP gate's approval says through which server, cut
			// short with its summary rather than cut off.
			what = oneLine(what, 60)
			if t := a.Through(); t != "" {
				t = " (" + oneLine(t, 30) + ")"
				what = oneLine(what, 60-len([]rune(t))) + t
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", a.ID, cli.Term(st), cli.Term(string(a.Kind)), cli.Term(a.Agent), cli.Term(a.Session), what)
		}
		tw.Flush()
	})
}
