package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/askd-dev/askd"
)

const ruleUsage = `Usage: askd rule list [--agent NAME] [--session NAME] [--json]
       askd rule revoke ID [--json]

Rules answer a session's approvals at once, allowed or denied, while they
live: a person makes one in the inbox while answering a permission prompt or
an approval (POST /api/rules), for that agent token's session only, for at
most 30 days. list shows the live ones (not expired, not revoked); revoke
ends one now. Both need a human token, from ASKD_HUMAN_TOKEN or --token.
Flags may come before or after the arguments.`

func cmdRule(ctx context.Context, e *env, args []string) error {
	sub, args, err := subcommand(e, "rule", ruleUsage, args, "list", "revoke")
	switch sub {
	case "list":
		return cmdRuleList(ctx, e, args)
	case "revoke":
		return cmdRuleRevoke(ctx, e, args)
	}
	return err
}

func cmdRuleList(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "rule list", "[--agent NAME] [--session NAME] [--json]")
	r := remoteFlags(e, fs, personSide)
	agent := fs.String("agent", "", "only this agent token's rules (with --session: of its session of that name)")
	session := fs.String("session", "", "only rules of sessions of this name (of every agent token, unless --agent)")
	for _, n := range []string{"agent", "session"} {
		e.envName(n, "") // an agent's ASKD_SESSION must not narrow the person's list
	}
	if err := parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("rule list: unexpected argument %q", fs.Arg(0)))
	}
	c, err := r.client()
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
	return r.print(e, rules, func(w io.Writer) {
		if len(rules) == 0 {
			fmt.Fprintln(w, "no live rules")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tEFFECT\tAGENT\tSESSION\tWHAT\tEXPIRES\tMADE BY")
		for _, rule := range rules {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", rule.ID, term(string(rule.Effect)), term(rule.Agent), term(rule.Session),
				oneLine(ruleWhat(rule), 60), rule.ExpiresAt.Local().Format("2006-01-02 15:04"), term(rule.CreatedBy))
		}
		tw.Flush()
	})
}

func cmdRuleRevoke(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "rule revoke", "ID [--json]")
	r := remoteFlags(e, fs, personSide)
	id, err := parseListedID(e, fs, args, "rule")
	if err != nil {
		return err
	}
	c, err := r.client()
	if err != nil {
		return err
	}
	rule, err := c.RevokeRule(ctx, id)
	if err != nil {
		return err
	}
	return r.print(e, rule, func(w io.Writer) {
		fmt.Fprintf(w, "revoked rule %d (%s %s, session %s of agent %s): its session's approvals come to the inbox again\n",
			rule.ID, term(string(rule.Effect)), oneLine(ruleWhat(rule), 60), term(rule.Session), term(rule.Agent))
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
