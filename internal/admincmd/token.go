package admincmd

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"text/tabwriter"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
)

const tokenUsage = `Usage: askd token create --human NAME [--role admin|approver|viewer] [--db PATH|URL] [--json]
       askd token create --agent NAME [--owner PERSON|team:NAME] [--db PATH|URL] [--json]
       askd token list [--db PATH|URL] [--json]
       askd token set-role NAME --role admin|approver|viewer [--db PATH|URL] [--json]
       askd token set-owner NAME --owner PERSON|team:NAME|"" [--db PATH|URL] [--json]
       askd token revoke NAME [--db PATH|URL] [--json]
       askd token rotate NAME [--db PATH|URL] [--json]
       askd token link NAME --issuer URL --subject SUB [--db PATH|URL] [--json]

Tokens work on the database directly (no server is asked), and never create
one: --db (ASKD_DB) must name the database askd serve uses. A human token is
a person, who answers (the inbox, askd list/show/answer/dismiss/claim, as
ASKD_HUMAN_TOKEN); an agent token asks (MCP, hooks, askd ask/check/cancel,
as ASKD_TOKEN). A new token is shown once.

A person's role: admin (everything, teams included), approver (the default:
answers, dismisses, snoozes, claims, makes rules from asks routed to them or
to nobody) or viewer (reads only). --role reads no ASKD_ROLE, which is askd
serve's, and --owner no ASKD_OWNER. An agent's owner: a person or team:NAME, to whom its asks are
routed (askd list --mine); none, and its asks are everyone's. Revoking a
token, or changing a role or an owner, reaches running servers within 5 s
(a revoked token's event streams, waits and signed-in browsers end).

People who sign in with an identity provider (askd serve --oidc-issuer) or
through a trusted proxy are people like any other. rotate prints a new
secret for a token (a person made by a sign-in has one nobody was shown);
the old one is refused from then on. link links a person to their account
at a provider, by the provider's issuer URL and the account's subject (sub),
never by an email address or a user name: their sign-ins with it sign in as
NAME. Revoking a linked person keeps their identity, marked revoked, and
refuses it until it is linked again. The proxy's issuer is "proxy", its
subject the header's value. --issuer and --subject read no ASKD_* variable.`

// tokenSubcommands are askd token's subcommands, each with its synopsis.
var tokenSubcommands = map[string]string{
	"create":    "--human NAME [--role R] | --agent NAME [--owner PERSON|team:NAME]",
	"list":      "",
	"set-role":  "NAME --role admin|approver|viewer",
	"set-owner": `NAME --owner PERSON|team:NAME|""`,
	"revoke":    "NAME",
	"rotate":    "NAME",
	"link":      "NAME --issuer URL --subject SUB",
}

// Token is askd token: create, list, set-role, set-owner and revoke, on
// the database --db names.
func Token(ctx context.Context, e *cli.Env, args []string) error {
	sub, args, err := cli.Subcommand(e, "token", tokenUsage, args, "create", "list", "set-role", "set-owner", "revoke", "rotate", "link")
	if sub == "" {
		return err
	}
	fs := cli.Flags(e, "token "+sub, tokenSubcommands[sub]+" [--db PATH|URL] [--json]")
	t := tokenCmd{e: e, fs: fs,
		db:     fs.String("db", "./askd.db", "the database askd serve uses: a SQLite file, or a postgres:// URL"),
		asJSON: fs.Bool("json", false, "print JSON")}
	switch sub {
	case "create":
		return t.create(ctx, args)
	case "list":
		return t.list(ctx, args)
	case "set-role":
		return t.setRole(ctx, args)
	case "set-owner":
		return t.setOwner(ctx, args)
	case "rotate":
		return t.rotate(ctx, args)
	case "link":
		return t.link(ctx, args)
	default:
		return t.revoke(ctx, args)
	}
}

// tokenCmd is one askd token subcommand: its flags, shared ones set.
type tokenCmd struct {
	e      *cli.Env
	fs     *flag.FlagSet
	db     *string
	asJSON *bool
}

// roleFlag defines --role, which reads no environment variable (SPEC §10:
// ASKD_ROLE is askd serve's).
func (t tokenCmd) roleFlag(usage string) *string {
	t.e.SetEnvName("role", "")
	return t.fs.String("role", "", usage)
}

// ownerFlag defines --owner, which reads no environment variable either:
// an ASKD_OWNER left in a shell would give every agent token made there an
// owner unasked, and refuse every person's (who has none).
func (t tokenCmd) ownerFlag(usage string) *string {
	t.e.SetEnvName("owner", "")
	return t.fs.String("owner", "", usage)
}

// parse parses args, wanting n positional arguments (the token's NAME)
// named in missing when absent.
func (t tokenCmd) parse(args []string, n int, missing string) error {
	if err := cli.Parse(t.e, t.fs, args); err != nil {
		return err
	}
	switch {
	case t.fs.NArg() < n:
		return cli.UsageError(fmt.Sprintf("%s: %s", t.fs.Name(), missing))
	case t.fs.NArg() > n:
		return cli.UsageError(fmt.Sprintf("%s: unexpected argument %q", t.fs.Name(), t.fs.Arg(n)))
	}
	return nil
}

func (t tokenCmd) create(ctx context.Context, args []string) error {
	var humanName, agentName string
	t.fs.StringVar(&humanName, "human", "", "create a human token (a person, who answers) with this name")
	t.fs.StringVar(&agentName, "agent", "", "create an agent token (asks) with this name")
	role := t.roleFlag("the person's role: admin, approver or viewer (default approver); no ASKD_ROLE")
	owner := t.ownerFlag("the agent's owner: a person, or team:NAME; its asks are routed there (default: everyone's); no ASKD_OWNER")
	if err := t.parse(args, 0, ""); err != nil {
		return err
	}
	if (humanName == "") == (agentName == "") {
		return cli.UsageError("token create: give exactly one of --human NAME or --agent NAME")
	}
	spec := app.TokenSpec{Name: humanName, Role: askd.RoleHuman, Access: askd.Access(*role), Owner: *owner}
	if agentName != "" {
		spec.Name, spec.Role = agentName, askd.RoleAgent
	}
	svc, done, err := openApp(ctx, *t.db)
	if err != nil {
		return err
	}
	defer done()
	tok, secret, err := svc.CreateToken(ctx, localAdmin(), spec)
	if err != nil {
		return err
	}
	if *t.asJSON {
		out := map[string]string{"name": tok.Name, "role": string(tok.Role), "token": secret}
		if tok.Role == askd.RoleHuman {
			out["access"] = string(tok.Access)
		} else if tok.Owner != "" {
			out["owner"] = tok.Owner
		}
		return json.NewEncoder(t.e.Stdout).Encode(out)
	}
	variable, what := "ASKD_TOKEN", ""
	if tok.Role == askd.RoleHuman {
		variable, what = "ASKD_HUMAN_TOKEN", ", "+string(tok.Access)
	} else if tok.Owner != "" {
		what = ", owned by " + cli.Term(tok.Owner)
	}
	fmt.Fprintf(t.e.Stdout, "%s token %q%s (shown once, keep it safe; commands read it from %s):\n%s\n", tok.Role, tok.Name, what, variable, secret)
	return nil
}

func (t tokenCmd) list(ctx context.Context, args []string) error {
	if err := t.parse(args, 0, ""); err != nil {
		return err
	}
	svc, done, err := openApp(ctx, *t.db)
	if err != nil {
		return err
	}
	defer done()
	ts, err := svc.Tokens(ctx, localAdmin())
	if err != nil {
		return err
	}
	if *t.asJSON {
		if ts == nil {
			ts = []*askd.Token{}
		}
		return cli.WriteJSON(t.e.Stdout, ts)
	}
	tw := tabwriter.NewWriter(t.e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tACCESS\tOWNER\tCREATED")
	for _, tok := range ts {
		created := "unknown" // made before askd stored when
		if !tok.CreatedAt.IsZero() && tok.CreatedAt.Unix() > 0 {
			created = tok.CreatedAt.Local().Format("2006-01-02 15:04")
		}
		// "-": not of this role (a person has no owner, an agent no
		// access), or an agent of no owner (its asks are everyone's).
		access, owner := orDash(string(tok.Access)), orDash(tok.Owner)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cli.Term(tok.Name), cli.Term(string(tok.Role)), cli.Term(access), cli.Term(owner), created)
	}
	return tw.Flush()
}

func (t tokenCmd) setRole(ctx context.Context, args []string) error {
	role := t.roleFlag("the person's new role: admin, approver or viewer; no ASKD_ROLE")
	if err := t.parse(args, 1, "give the person's NAME, as askd token list shows it"); err != nil {
		return err
	}
	if *role == "" {
		return cli.UsageError("token set-role: give --role admin, approver or viewer")
	}
	svc, done, err := openApp(ctx, *t.db)
	if err != nil {
		return err
	}
	defer done()
	name := t.fs.Arg(0)
	if err := svc.SetAccess(ctx, localAdmin(), name, askd.Access(*role)); err != nil {
		return err
	}
	if *t.asJSON {
		return json.NewEncoder(t.e.Stdout).Encode(map[string]string{"name": name, "access": *role})
	}
	fmt.Fprintf(t.e.Stdout, "%s is now %s %s; running servers follow within 5 s\n", cli.Term(name), article(*role), cli.Term(*role))
	return nil
}

// article is "an" before admin, "a" before the other roles.
func article(role string) string {
	if role == string(askd.AccessAdmin) {
		return "an"
	}
	return "a"
}

func (t tokenCmd) setOwner(ctx context.Context, args []string) error {
	owner := t.ownerFlag(`the agent's new owner: a person, team:NAME, or "" for none (everyone's); no ASKD_OWNER`)
	if err := t.parse(args, 1, "give the agent token's NAME, as askd token list shows it"); err != nil {
		return err
	}
	given := false
	t.fs.Visit(func(f *flag.Flag) { given = given || f.Name == "owner" })
	if !given {
		return cli.UsageError(`token set-owner: give --owner PERSON, --owner team:NAME, or --owner "" for none`)
	}
	svc, done, err := openApp(ctx, *t.db)
	if err != nil {
		return err
	}
	defer done()
	name := t.fs.Arg(0)
	if err := svc.SetOwner(ctx, localAdmin(), name, *owner); err != nil {
		return err
	}
	if *t.asJSON {
		return json.NewEncoder(t.e.Stdout).Encode(map[string]string{"name": name, "owner": *owner})
	}
	if *owner == "" {
		fmt.Fprintf(t.e.Stdout, "%s has no owner now: its new asks are everyone's\n", cli.Term(name))
	} else {
		fmt.Fprintf(t.e.Stdout, "%s is owned by %s now: its new asks are routed there\n", cli.Term(name), cli.Term(*owner))
	}
	return nil
}

func (t tokenCmd) revoke(ctx context.Context, args []string) error {
	if err := t.parse(args, 1, "give the token's NAME, as askd token list shows it"); err != nil {
		return err
	}
	svc, done, err := openApp(ctx, *t.db)
	if err != nil {
		return err
	}
	defer done()
	name := t.fs.Arg(0)
	if err := svc.RevokeToken(ctx, localAdmin(), name); err != nil {
		return err
	}
	if *t.asJSON {
		return json.NewEncoder(t.e.Stdout).Encode(map[string]string{"revoked": name})
	}
	fmt.Fprintf(t.e.Stdout, "revoked token %q: new requests with it are refused now; its open event streams,\n"+
		"waiting calls and signed-in browsers end within 5 s\n", cli.Term(name))
	return nil
}

func (t tokenCmd) rotate(ctx context.Context, args []string) error {
	if err := t.parse(args, 1, "give the token's NAME, as askd token list shows it"); err != nil {
		return err
	}
	svc, done, err := openApp(ctx, *t.db)
	if err != nil {
		return err
	}
	defer done()
	tok, secret, err := svc.RotateToken(ctx, localAdmin(), t.fs.Arg(0))
	if err != nil {
		return err
	}
	if *t.asJSON {
		return json.NewEncoder(t.e.Stdout).Encode(map[string]string{"name": tok.Name, "role": string(tok.Role), "token": secret})
	}
	variable := "ASKD_TOKEN"
	if tok.Role == askd.RoleHuman {
		variable = "ASKD_HUMAN_TOKEN"
	}
	fmt.Fprintf(t.e.Stdout, "new secret for %s token %q (shown once, keep it safe; commands read it from %s; the old one is refused\n"+
		"now, and within 5 s by running servers):\n%s\n", tok.Role, tok.Name, variable, secret)
	return nil
}

func (t tokenCmd) link(ctx context.Context, args []string) error {
	// Like --role, these read no environment variable (SPEC §15).
	t.e.SetEnvName("issuer", "")
	t.e.SetEnvName("subject", "")
	issuer := t.fs.String("issuer", "", "the provider's issuer URL, as askd serve --oidc-issuer gives it (\"proxy\" for the proxy's header); no ASKD_ISSUER")
	subject := t.fs.String("subject", "", "the account's subject (sub) at the provider; no ASKD_SUBJECT")
	if err := t.parse(args, 1, "give the person's NAME, as askd token list shows it"); err != nil {
		return err
	}
	if *issuer == "" || *subject == "" {
		return cli.UsageError("token link: give --issuer URL and --subject SUB")
	}
	svc, done, err := openApp(ctx, *t.db)
	if err != nil {
		return err
	}
	defer done()
	name := t.fs.Arg(0)
	if err := svc.LinkIdentity(ctx, localAdmin(), name, *issuer, *subject); err != nil {
		return err
	}
	if *t.asJSON {
		return json.NewEncoder(t.e.Stdout).Encode(map[string]string{"name": name, "issuer": *issuer, "subject": *subject})
	}
	fmt.Fprintf(t.e.Stdout, "%s now signs in with subject %q at %s\n", cli.Term(name), cli.Term(*subject), cli.Term(*issuer))
	return nil
}
