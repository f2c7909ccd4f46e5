package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

const tokenUsage = `Usage: askd token create --human NAME | --agent NAME [--db PATH|URL] [--json]
       askd token list [--db PATH|URL] [--json]
       askd token revoke NAME [--db PATH|URL] [--json]

Tokens work on the database directly (no server is asked), and never create
one: --db (ASKD_DB) must name the database askd serve uses. A human token
answers (the inbox, askd list/show/answer/dismiss, as ASKD_HUMAN_TOKEN); an
agent token asks (MCP, hooks, askd ask/check/cancel, as ASKD_TOKEN). A new
token is shown once. Revoking one ends its event streams, waits and signed-in
browsers within 5 s.`

func cmdToken(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageError("token: say create, list or revoke (askd token -h)")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "-h", "--help", "help":
		fmt.Fprintln(e.stdout, tokenUsage)
		return nil
	case "create", "list", "revoke":
	default:
		return usageError(fmt.Sprintf("token: %q is not create, list or revoke (askd token -h)", sub))
	}
	synopsis := map[string]string{"create": "--human NAME | --agent NAME", "list": "", "revoke": "NAME"}[sub]
	fs := flags(e, "token "+sub, synopsis+" [--db PATH|URL] [--json]")
	db := fs.String("db", "./askd.db", "the database askd serve uses: a SQLite file, or a postgres:// URL")
	asJSON := fs.Bool("json", false, "print JSON")
	var humanName, agentName string
	if sub == "create" {
		fs.StringVar(&humanName, "human", "", "create a human token (answers in the inbox) with this name")
		fs.StringVar(&agentName, "agent", "", "create an agent token (asks) with this name")
	}
	if err := parse(e, fs, args); err != nil {
		return err
	}
	switch {
	case sub == "create" && (humanName == "") == (agentName == ""):
		return usageError("token create: give exactly one of --human NAME or --agent NAME")
	case sub == "revoke" && fs.NArg() != 1:
		return usageError("token revoke: give the token's NAME, as askd token list shows it")
	case sub != "revoke" && fs.NArg() > 0:
		return usageError(fmt.Sprintf("token %s: unexpected argument %q", sub, fs.Arg(0)))
	}
	store, err := openExisting(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	switch sub {
	case "create":
		name, role := humanName, askd.RoleHuman
		if agentName != "" {
			name, role = agentName, askd.RoleAgent
		}
		secret, err := app.CreateToken(ctx, store, name, role)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.stdout).Encode(map[string]string{"name": name, "role": string(role), "token": secret})
		}
		variable := "ASKD_TOKEN"
		if role == askd.RoleHuman {
			variable = "ASKD_HUMAN_TOKEN"
		}
		fmt.Fprintf(e.stdout, "%s token %q (shown once, keep it safe; commands read it from %s):\n%s\n", role, name, variable, secret)
		return nil
	case "list":
		var ts []*askd.Token
		err := store.View(ctx, func(tx askd.Tx) (err error) {
			ts, err = tx.Tokens.Tokens(ctx)
			return err
		})
		if err != nil {
			return err
		}
		if *asJSON {
			if ts == nil {
				ts = []*askd.Token{}
			}
			return writeJSON(e.stdout, ts)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tROLE\tCREATED")
		for _, t := range ts {
			created := "unknown" // made before askd stored when
			if !t.CreatedAt.IsZero() && t.CreatedAt.Unix() > 0 {
				created = t.CreatedAt.Local().Format("2006-01-02 15:04")
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", term(t.Name), term(string(t.Role)), created)
		}
		return tw.Flush()
	default: // revoke
		name := fs.Arg(0)
		if err := store.Update(ctx, func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctx, name) }); err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.stdout).Encode(map[string]string{"revoked": name})
		}
		fmt.Fprintf(e.stdout, "revoked token %q: new requests with it are refused now; its open event streams,\n"+
			"waiting calls and signed-in browsers end within 5 s\n", term(name))
		return nil
	}
}
