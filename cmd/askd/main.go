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

	"github.com/askd-dev/askd/internal/admincmd"
	"github.com/askd-dev/askd/internal/apicmd"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/gate"
	"github.com/askd-dev/askd/internal/healthcheck"
	"github.com/askd-dev/askd/internal/hookcmd"
	"github.com/askd-dev/askd/internal/install"
	"github.com/askd-dev/askd/internal/mcpstdio"
	"github.com/askd-dev/askd/internal/opencodecmd"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var said cli.ExitStatus
		if !errors.Is(err, flag.ErrHelp) && !errors.As(err, &said) {
			// An error can quote what a server or database holds: each
			// line is made printable; the lines after the first (what to
			// do, in refusals to start) are indented.
			for i, line := range strings.Split(err.Error(), "\n") {
				if i == 0 {
					fmt.Fprintln(os.Stderr, "askd:", cli.Term(line))
				} else {
					fmt.Fprintln(os.Stderr, "     ", cli.Term(line))
				}
			}
		}
		os.Exit(cli.ExitCode(err))
	}
}

var commands map[string]cli.Command

func init() {
	commands = map[string]cli.Command{
		"serve":       {Summary: "run the server (inbox, API, MCP, hooks)", Run: cmdServe},
		"migrate":     {Summary: "apply database migrations and exit", Run: admincmd.Migrate},
		"backup":      {Summary: "copy the SQLite database to a new file, safely beside a running server", Run: admincmd.Backup},
		"token":       {Summary: "create, list, change or revoke tokens: people's roles, agents' owners (works on the database directly)", Run: admincmd.Token},
		"signin-link": {Summary: "print a one-time link that signs a browser in to the inbox (works on the database directly)", Run: admincmd.SignInLink},
		"ask":         {Summary: "ask a person something (agent token)", Run: apicmd.Ask},
		"check":       {Summary: "show the state of one of your asks (agent token)", Run: apicmd.Check},
		"cancel":      {Summary: "withdraw one of your pending asks (agent token)", Run: apicmd.Cancel},
		"list":        {Summary: "list asks in the inbox (human token)", Run: apicmd.List},
		"show":        {Summary: "show one ask with its history (human token)", Run: apicmd.Show},
		"answer":      {Summary: "answer an ask (human token)", Run: apicmd.Answer},
		"dismiss":     {Summary: "close an ask without answering (human token)", Run: apicmd.Dismiss},
		"rule":        {Summary: "list or revoke the rules that answer a session's approvals at once (human token)", Run: apicmd.Rule},
		"policy":      {Summary: "add, list or revoke the policies that make approvals need several people (admin token)", Run: apicmd.Policy},
		"claim":       {Summary: "mark an ask as yours, \"I'm on it\", or let it go (human token)", Run: apicmd.Claim},
		"team":        {Summary: "create, change, list or delete teams of people (works on the database directly)", Run: admincmd.Team},
		"audit":       {Summary: "export or verify the audit trail, the history's hash chain (works on the database directly)", Run: admincmd.Audit},
		"version":     {Summary: "print the version", Run: cmdVersion},
		"healthcheck": {Summary: "exit 0 when a running askd answers /readyz, 1 otherwise (the image's health check)", Run: healthcheck.Command},
		"mcp":         {Summary: "serve MCP on stdin/stdout, bridged to a running askd (agent token)", Run: mcpstdio.Serve},
		"session":     {Summary: "set how a session's agent is told of answers: session set-channel (agent token)", Run: apicmd.Session},
		"hook":        {Summary: "the hook askd install writes for Claude Code and Codex, and with --cli for Copilot CLI, Qwen Code and Gemini CLI: hook input on stdin to askd, its reply on stdout (agent token)", Run: hookcmd.Command},
		"gate":        {Summary: "run a command once a person approved it (gate run), refuse git pushes until then (gate git), or put a person between an MCP client and server (gate mcp) (agent token)", Run: gate.Command},
		"opencode":    {Summary: "run OpenCode headless (opencode run ARGS) and continue its session with each answer given after its turn: askd opencode -- ARGS...", Run: opencodecmd.Command},
		"install":     {Summary: "wire askd into Claude Code (install claude), Codex (install codex: edits its config.toml), Copilot CLI, Qwen Code, Gemini CLI or OpenCode (install copilot|qwen|gemini|opencode), put an MCP client's server behind askd's gate (install mcp-gate), or wire a git repository (install git-gate)", Run: install.Command},
	}
}

// run is askd's whole CLI; tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &cli.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
	if len(args) == 0 {
		usage(stderr)
		return cli.UsageError("no command given")
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
		return cli.UsageError(fmt.Sprintf("unknown command %q (askd help lists them)", args[0]))
	}
	return cmd.Run(ctx, e, args[1:])
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
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w, "\nRun 'askd <command> -h' for a command's flags; flags may come before or after")
	fmt.Fprintln(w, "its arguments, and -- ends them. Every flag can also be set as an ASKD_*")
	fmt.Fprintln(w, "environment variable, e.g. --question-timeout as ASKD_QUESTION_TIMEOUT, except")
	fmt.Fprintln(w, "that the person's commands (list, show, answer, dismiss, claim, rule) take their token from")
	fmt.Fprintln(w, "ASKD_HUMAN_TOKEN and the agent's (ask, check, cancel, session, mcp, hook, gate) from ASKD_TOKEN.")
}
