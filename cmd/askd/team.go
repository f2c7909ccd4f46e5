package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
)

const teamUsage = `Usage: askd team create NAME [--escalate-after D --escalate-to PERSON|team:NAME] [--db PATH|URL] [--json]
       askd team set NAME --escalate-after D --escalate-to PERSON|team:NAME [--db PATH|URL] [--json]
       askd team add NAME PERSON... [--db PATH|URL] [--json]
       askd team remove NAME PERSON... [--db PATH|URL] [--json]
       askd team list [--db PATH|URL] [--json]
       askd team delete NAME [--db PATH|URL] [--json]

Teams work on the database directly, like askd token (an admin can also use
the API, /api/teams). A team is people (human tokens' names); an agent token
owned by team:NAME (askd token set-owner) has its asks routed to them. With
an escalation, an ask routed to the team that is still pending, unclaimed
and not snoozed --escalate-after (at least 1s) after it was made is
escalated once to --escalate-to: a person, or team:NAME, who is notified and
sees it in their Mine. team set --escalate-after 0 --escalate-to "" ends it.
A team that owns agent tokens, or that another team escalates to, cannot be
deleted until they are changed.`

// teamSubcommands are askd team's subcommands, each with its synopsis.
var teamSubcommands = map[string]string{
	"create": "NAME [--escalate-after D --escalate-to PERSON|team:NAME]",
	"set":    "NAME --escalate-after D --escalate-to PERSON|team:NAME",
	"add":    "NAME PERSON...",
	"remove": "NAME PERSON...",
	"list":   "",
	"delete": "NAME",
}

func cmdTeam(ctx context.Context, e *cli.Env, args []string) error {
	sub, args, err := cli.Subcommand(e, "team", teamUsage, args, "create", "set", "add", "remove", "list", "delete")
	if sub == "" {
		return err
	}
	fs := cli.Flags(e, "team "+sub, teamSubcommands[sub]+" [--db PATH|URL] [--json]")
	db := fs.String("db", "./askd.db", "the database askd serve uses: a SQLite file, or a postgres:// URL")
	asJSON := fs.Bool("json", false, "print JSON")
	var after *time.Duration
	var to *string
	if sub == "create" || sub == "set" {
		after = fs.Duration("escalate-after", 0, "escalate an ask of the team's still pending, unclaimed and not snoozed this long (at least 1s)")
		to = fs.String("escalate-to", "", "to whom: a person, or team:NAME")
	}
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if err := teamArgs(fs, sub); err != nil {
		return err
	}
	store, err := openExisting(ctx, *db)
	if err != nil {
		return err
	}
	defer store.Close()
	ctx = app.WithActor(ctx, cliActor())
	name, people := fs.Arg(0), fs.Args()[min(1, fs.NArg()):]
	var team *askd.Team
	switch sub {
	case "create":
		team, err = app.CreateTeam(ctx, store, app.TeamInput{Name: name, EscalateAfter: *after, EscalateTo: *to})
	case "set":
		team, err = app.SetEscalation(ctx, store, name, *after, *to)
	case "add":
		team, err = app.AddMembers(ctx, store, name, people)
	case "remove":
		team, err = app.RemoveMembers(ctx, store, name, people...)
	case "list":
		teams, err := app.Teams(ctx, store)
		if err != nil {
			return err
		}
		if *asJSON {
			if teams == nil {
				teams = []*askd.Team{}
			}
			return cli.WriteJSON(e.Stdout, teams)
		}
		printTeams(e.Stdout, teams)
		return nil
	default: // delete
		if err := app.DeleteTeam(ctx, store, name); err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.Stdout).Encode(map[string]string{"deleted": name})
		}
		fmt.Fprintf(e.Stdout, "deleted team %q\n", cli.Term(name))
		return nil
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return cli.WriteJSON(e.Stdout, team)
	}
	printTeams(e.Stdout, []*askd.Team{team})
	return nil
}

// teamArgs checks the positional arguments and flags of subcommand sub.
func teamArgs(fs *flag.FlagSet, sub string) error {
	n := fs.NArg()
	switch {
	case sub == "list" && n > 0:
		return cli.UsageError(fmt.Sprintf("team list: unexpected argument %q", fs.Arg(0)))
	case sub != "list" && n == 0:
		return cli.UsageError(fmt.Sprintf("team %s: give the team's NAME", sub))
	case (sub == "add" || sub == "remove") && n == 1:
		return cli.UsageError(fmt.Sprintf("team %s: give one or more PERSON after the team's name", sub))
	case (sub == "create" || sub == "set" || sub == "delete") && n > 1:
		return cli.UsageError(fmt.Sprintf("team %s: unexpected argument %q (members: askd team add NAME PERSON...)", sub, fs.Arg(1)))
	}
	if sub == "set" {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		if !given["escalate-after"] || !given["escalate-to"] {
			return cli.UsageError(`team set: give both --escalate-after D and --escalate-to PERSON|team:NAME (--escalate-after 0 --escalate-to "" for none)`)
		}
	}
	return nil
}

// printTeams writes teams as a table: name, members, escalation.
func printTeams(w io.Writer, teams []*askd.Team) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEAM\tMEMBERS\tESCALATION")
	for _, t := range teams {
		members := make([]string, len(t.Members))
		for i, m := range t.Members {
			members[i] = cli.Term(m)
		}
		escalation := "-"
		if t.EscalateAfter > 0 {
			escalation = fmt.Sprintf("after %s to %s", askd.ShortDuration(t.EscalateAfter), cli.Term(t.EscalateTo))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", cli.Term(t.Name), orDash(strings.Join(members, ",")), escalation)
	}
	tw.Flush()
}
