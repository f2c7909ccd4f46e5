package main

import (
	"context"
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

func cmdToken(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageError("usage: askd token create --human NAME | --agent NAME; askd token list; askd token revoke NAME")
	}
	sub, args := args[0], args[1:]
	fs := flags(e, "token "+sub, "[flags]")
	db := fs.String("db", "./askd.db", "database: a SQLite file, or a postgres:// URL")
	asJSON := fs.Bool("json", false, "print JSON")
	var humanName, agentName string
	if sub == "create" {
		fs.StringVar(&humanName, "human", "", "create a human token (answers in the inbox) with this name")
		fs.StringVar(&agentName, "agent", "", "create an agent token (asks) with this name")
	}
	if err := parse(e, fs, args); err != nil {
		return err
	}
	store, err := openStore(ctx, *db)
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
		if (humanName == "") == (agentName == "") {
			return usageError("token create: give exactly one of --human NAME or --agent NAME")
		}
		secret, err := app.CreateToken(ctx, store, name, role)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.stdout).Encode(map[string]string{"name": name, "role": string(role), "token": secret})
		}
		fmt.Fprintf(e.stdout, "%s token %q (shown once, keep it safe):\n%s\n", role, name, secret)
		return nil
	case "list":
		var ts []*askd.Token
		err := store.View(ctx, func(tx askd.Tx) (err error) {
			ts, err = tx.Tokens(ctx)
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
			fmt.Fprintf(tw, "%s\t%s\t%s\n", term(t.Name), term(string(t.Role)), t.CreatedAt.Local().Format("2006-01-02 15:04"))
		}
		return tw.Flush()
	case "revoke":
		if fs.NArg() != 1 {
			return usageError("usage: askd token revoke NAME")
		}
		name := fs.Arg(0)
		if err := store.Update(ctx, func(tx askd.Tx) error { return tx.RevokeToken(ctx, name) }); err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.stdout).Encode(map[string]string{"revoked": name})
		}
		fmt.Fprintf(e.stdout, "revoked token %q\n", name)
		return nil
	}
	return usageError(fmt.Sprintf("unknown token command %q: use create, list or revoke", sub))
}

func cmdMigrate(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "migrate", "[--db PATH|URL]")
	db := fs.String("db", "./askd.db", "database: a SQLite file, or a postgres:// URL")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(e, fs, args); err != nil {
		return err
	}
	applied, err := migrateDB(ctx, *db)
	if err != nil {
		return err
	}
	if *asJSON {
		if applied == nil {
			applied = []string{}
		}
		return json.NewEncoder(e.stdout).Encode(map[string]any{"applied": applied})
	}
	if len(applied) == 0 {
		fmt.Fprintln(e.stdout, "database is up to date")
	}
	for _, m := range applied {
		fmt.Fprintln(e.stdout, "applied", m)
	}
	return nil
}
