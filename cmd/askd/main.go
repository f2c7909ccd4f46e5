// Command askd is a self-hosted inbox where AI agents ask people things. Run
// `askd serve` for the server, `askd help` for the rest.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var said exitStatus
		if !errors.Is(err, flag.ErrHelp) && !errors.As(err, &said) {
			// An error can quote what a server or database holds: each
			// line is made printable; the lines after the first (what to
			// do, in refusals to start) are indented.
			for i, line := range strings.Split(err.Error(), "\n") {
				if i == 0 {
					fmt.Fprintln(os.Stderr, "askd:", term(line))
				} else {
					fmt.Fprintln(os.Stderr, "     ", term(line))
				}
			}
		}
		os.Exit(exitCode(err))
	}
}

// env is what a command gets besides its arguments.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	// envNames overrides a flag's environment variable (flag name to
	// variable, "" for none): the person's commands take their token
	// from ASKD_HUMAN_TOKEN, not ASKD_TOKEN.
	envNames map[string]string
}

type command struct {
	summary string
	run     func(ctx context.Context, e *env, args []string) error
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"serve":       {"run the server (inbox, API, MCP, hooks)", cmdServe},
		"migrate":     {"apply database migrations and exit", cmdMigrate},
		"backup":      {"copy the SQLite database to a new file, safely beside a running server", cmdBackup},
		"token":       {"create, list, change or revoke tokens: people's roles, agents' owners (works on the database directly)", cmdToken},
		"signin-link": {"print a one-time link that signs a browser in to the inbox (works on the database directly)", cmdSignInLink},
		"ask":         {"ask a person something (agent token)", cmdAsk},
		"check":       {"show the state of one of your asks (agent token)", cmdCheck},
		"cancel":      {"withdraw one of your pending asks (agent token)", cmdCancel},
		"list":        {"list asks in the inbox (human token)", cmdList},
		"show":        {"show one ask with its history (human token)", cmdShow},
		"answer":      {"answer an ask (human token)", cmdAnswer},
		"dismiss":     {"close an ask without answering (human token)", cmdDismiss},
		"rule":        {"list or revoke the rules that answer a session's approvals at once (human token)", cmdRule},
		"policy":      {"add, list or revoke the policies that make approvals need several people (admin token)", cmdPolicy},
		"claim":       {"mark an ask as yours, \"I'm on it\", or let it go (human token)", cmdClaim},
		"team":        {"create, change, list or delete teams of people (works on the database directly)", cmdTeam},
		"audit":       {"export or verify the audit trail, the history's hash chain (works on the database directly)", cmdAudit},
		"version":     {"print the version", cmdVersion},
		"mcp":         {"serve MCP on stdin/stdout, bridged to a running askd (agent token)", cmdMCP},
		"session":     {"set how a session's agent is told of answers: session set-channel (agent token)", cmdSession},
		"hook":        {"the Claude Code and Codex hook askd install writes: hook input on stdin to askd, its reply on stdout (agent token)", cmdHook},
		"gate":        {"run a command once a person approved it (gate run), or refuse git pushes until then (gate git) (agent token)", cmdGate},
		"install":     {"wire askd into Claude Code (install claude) or Codex (install codex: edits its config.toml), or a git repository (install git-gate)", cmdInstall},
	}
}

// run is askd's whole CLI; tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	if len(args) == 0 {
		usage(stderr)
		return usageError("no command given")
	}
	switch args[0] {
	case "help", "-h", "--help":
		usage(stdout)
		return nil
	case "--version", "-version", "-v":
		return cmdVersion(ctx, e, args[1:])
	}
	cmd, ok := commands[args[0]]
	if !ok {
		return usageError(fmt.Sprintf("unknown command %q (askd help lists them)", args[0]))
	}
	return cmd.run(ctx, e, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "askd: a self-hosted inbox where AI agents ask people things.")
	fmt.Fprintln(w, "\nUsage: askd <command> [flags] [arguments]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'askd <command> -h' for a command's flags; flags may come before or after")
	fmt.Fprintln(w, "its arguments, and -- ends them. Every flag can also be set as an ASKD_*")
	fmt.Fprintln(w, "environment variable, e.g. --question-timeout as ASKD_QUESTION_TIMEOUT, except")
	fmt.Fprintln(w, "that the person's commands (list, show, answer, dismiss, claim, rule) take their token from")
	fmt.Fprintln(w, "ASKD_HUMAN_TOKEN and the agent's (ask, check, cancel, session, mcp, hook, gate) from ASKD_TOKEN.")
}
