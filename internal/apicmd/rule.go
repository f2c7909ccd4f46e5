package apicmd

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

const ruleUsage = `Usage: askd rule list [--agent NAME] [--session NAME] [--json]
       askd rule revoke ID [--json]

Rules answer a session's approvals at once, allowed or denied, while they
live: a person makes one in the inbox while answering a permission prompt or
an approval (POST /api/rules), for that agent token's session only, for at
most 30 days. list shows the live ones (not expired, not revoked); revoke
ends one now. Both need a human token, from ASKD_HUMAN_TOKEN or --token.
Flags may come before or after the arguments.`

// Rule is askd rule list and askd rule revoke, with a human token: the
// live rules that answer a session's approvals at once, or ending one now.
func Rule(ctx context.Context, e *cli.Env, args []string) error {
	sub, args, err := cli.Subcommand(e, "rule", ruleUsage, args, "list", "revoke")
	switch sub {
	case "list":
		return ruleList(ctx, e, args)
	case "revoke":
		return ruleRevoke(ctx, e, args)
	}
	return err
}

// ruleList is askd rule list.
func ruleList(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "rule list", "[--agent NAME] [--session NAME] [--json]")
	r := cli.RemoteFlags(e, fs, cli.PersonSide)
	agent := fs.String("agent", "", "only this agent token's rules (with --session: of its session of that name)")
	session := fs.String("session", "", "only rules of sessions of this name (of every agent token, unless --agent)")
	for _, n := range []string{"agent", "session"} {
		e.SetEnvName(n, "") // an agent's ASKD_SESSION must not narrow the person's list
	}
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("rule list: unexpected argument %q", fs.Arg(0)))
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	rules, err := c.Rules(ctx, *agent, *session)
	if err != nil {
		return err
	}
	if rules == nil {
		rules = []*askd.Rule{}
	}
	return r.Print(e, rules, func(w io.Writer) {
		if len(rules) == 0 {
			fmt.Fprintln(w, "no live rules")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tEFFECT\tAGENT\tSESSION\tWHAT\tEXPIRES\tMADE BY")
		for _, rule := range rules {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", rule.ID, cli.Term(string(rule.Effect)), cli.Term(rule.Agent), cli.Term(rule.Session),
				oneLine(ruleWhat(rule), 60), rule.ExpiresAt.Local().Format("2006-01-02 15:04"), cli.Term(rule.CreatedBy))
		}
		tw.Flush()
	})
}

// ruleRevoke is askd rule revoke.
func ruleRevoke(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "rule revoke", "ID [--json]")
	r := cli.RemoteFlags(e, fs, cli.PersonSide)
	id, err := cli.ParseListedID(e, fs, args, "rule")
	if err != nil {
		return err
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	rule, err := c.RevokeRule(ctx, id)
	if err != nil {
		return err
	}
	return r.Print(e, rule, func(w io.Writer) {
		fmt.Fprintf(w, "revoked rule %d (%s %s, session %s of agent %s): its session's approvals come to the inbox again\n",
			rule.ID, cli.Term(string(rule.Effect)), oneLine(ruleWhat(rule), 60), cli.Term(rule.Session), cli.Term(rule.Agent))
	})
}

// ruleWhat says what a rule matches: "Bash", "Bash: npm test…", "title
// \"Deploy?\"".
func ruleWhat(r *askd.Rule) string {
	switch r.Match {
	case askd.MatchPrefix:
		return r.Tool + ": " + r.Prefix + "…"
	case askd.MatchTitle:
		return fmt.Sprintf("title %q", r.Title)
	}
	return r.Tool
}
