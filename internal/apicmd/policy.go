package apicmd

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

const policyUsage = `Usage: askd policy add --match tool|prefix|title [--tool T] [--prefix P] [--title T]
                       --approvals N [--agent A | --team T] [--exclude-owner] [--json]
       askd policy list [--json]
       askd policy revoke ID [--json]

A policy makes the approvals it covers need N distinct people (2 to 5)
before they are decided; one rejection decides at once. It matches as a rule
does: any call of a tool, a Bash command or file path starting with a
prefix, or a request_approval's exact title; for every agent, one agent
token (--agent) or the agents a team owns (--team). With --exclude-owner the
agent's owner may not approve. All three need an admin's token, from
ASKD_HUMAN_TOKEN or --token. Flags may come before or after the arguments.`

// Policy is askd policy add, list and revoke, with an admin's token: the
// policies that make the approvals they cover need several people.
func Policy(ctx context.Context, e *cli.Env, args []string) error {
	sub, args, err := cli.Subcommand(e, "policy", policyUsage, args, "add", "list", "revoke")
	switch sub {
	case "add":
		return policyAdd(ctx, e, args)
	case "list":
		return policyList(ctx, e, args)
	case "revoke":
		return policyRevoke(ctx, e, args)
	}
	return err
}

// policyAdd is askd policy add.
func policyAdd(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "policy add", "--match tool|prefix|title ... --approvals N [--json]")
	r := cli.RemoteFlags(e, fs, cli.PersonSide)
	var in askd.PolicyInput
	match := fs.String("match", "", "what the policy compares: tool, prefix or title")
	fs.StringVar(&in.Tool, "tool", "", "the tool's name (match tool or prefix)")
	fs.StringVar(&in.Prefix, "prefix", "", "the command or path prefix (match prefix)")
	fs.StringVar(&in.Title, "title", "", "the approval's exact title (match title)")
	fs.StringVar(&in.Agent, "agent", "", "only this agent token's approvals")
	fs.StringVar(&in.Team, "team", "", "only approvals of agents this team owns")
	fs.IntVar(&in.Approvals, "approvals", 0, "how many distinct people must approve, 2 to 5")
	fs.BoolVar(&in.ExcludeOwner, "exclude-owner", false, "the agent's owner may not approve")
	for _, n := range []string{"match", "tool", "prefix", "title", "agent", "team", "approvals", "exclude-owner"} {
		e.SetEnvName(n, "") // what a policy covers is said on the command line, never inherited
	}
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("policy add: unexpected argument %q", fs.Arg(0)))
	}
	in.Match = askd.RuleMatch(*match)
	c, err := r.Client()
	if err != nil {
		return err
	}
	p, err := c.CreatePolicy(ctx, &in)
	if err != nil {
		return err
	}
	return r.Print(e, p, func(w io.Writer) {
		fmt.Fprintf(w, "policy %d: %s needs %d approvals\n", p.ID, oneLine(policyWhat(p), 80), p.Approvals)
	})
}

// policyList is askd policy list.
func policyList(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "policy list", "[--json]")
	r := cli.RemoteFlags(e, fs, cli.PersonSide)
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("policy list: unexpected argument %q", fs.Arg(0)))
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	ps, err := c.Policies(ctx)
	if err != nil {
		return err
	}
	if ps == nil {
		ps = []*askd.Policy{}
	}
	return r.Print(e, ps, func(w io.Writer) {
		if len(ps) == 0 {
			fmt.Fprintln(w, "no policies")
			return
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tAPPROVALS\tWHAT\tMADE BY")
		for _, p := range ps {
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\n", p.ID, p.Approvals, oneLine(policyWhat(p), 80), cli.Term(p.CreatedBy))
		}
		tw.Flush()
	})
}

// policyRevoke is askd policy revoke.
func policyRevoke(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "policy revoke", "ID [--json]")
	r := cli.RemoteFlags(e, fs, cli.PersonSide)
	id, err := cli.ParseListedID(e, fs, args, "policy")
	if err != nil {
		return err
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	if err := c.RevokePolicy(ctx, id); err != nil {
		return err
	}
	return r.Print(e, map[string]int64{"revoked": id}, func(w io.Writer) {
		fmt.Fprintf(w, "revoked policy %d: approvals made from now on are not covered by it\n", id)
	})
}

// policyWhat says what a policy covers: "title \"Deploy?\" of team ops,
// not by its owner".
func policyWhat(p *askd.Policy) string {
	what := ruleWhat(&askd.Rule{Match: p.Match, Tool: p.Tool, Prefix: p.Prefix, Title: p.Title})
	switch {
	case p.Agent != "":
		what += " of agent " + cli.Term(p.Agent)
	case p.Team != "":
		what += " of team " + cli.Term(p.Team)
	}
	if p.ExcludeOwner {
		what += ", not by its owner"
	}
	return what
}
