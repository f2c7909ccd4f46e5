// Command askd is a self-hosted inbox where AI agents ask people things. Run
// `askd serve` for the server, `askd help` for the rest.
package main

import (
	"context"
	"encoding/json"
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

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			// An error can quote what a server or database holds.
			fmt.Fprintln(os.Stderr, "askd:", term(err.Error()))
		}
		os.Exit(exitCode(err))
	}
}

// env is what a command gets besides its arguments.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
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
		"token":       {"create, list or revoke tokens (works on the database directly)", cmdToken},
		"signin-link": {"print a one-time link that signs a browser in to the inbox (works on the database directly)", cmdSignInLink},
		"ask":         {"ask a person something (agent token)", cmdAsk},
		"check":       {"show the state of one of your asks (agent token)", cmdCheck},
		"cancel":      {"withdraw one of your pending asks (agent token)", cmdCancel},
		"list":        {"list asks in the inbox (human token)", cmdList},
		"show":        {"show one ask with its history (human token)", cmdShow},
		"answer":      {"answer an ask (human token)", cmdAnswer},
		"dismiss":     {"close an ask without answering (human token)", cmdDismiss},
		"version":     {"print the version", cmdVersion},
		"bench":       {"measure a running askd over loopback: latency, waiters, throughput, SSE fan-out", cmdBench},
		"mcp":         {"serve MCP on stdin/stdout, bridged to a running askd (agent token)", cmdMCP},
		"session":     {"set how a session's agent is told of answers: session set-channel (agent token)", cmdSession},
		"install":     {"wire askd into Claude Code (install claude) or print Codex's config (install codex)", cmdInstall},
	}
}

// run is askd's whole CLI; tests call it directly.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return errors.New("no command given")
		}
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		usage(stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return cmd.run(ctx, e, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "askd: a self-hosted inbox where AI agents ask people things.")
	fmt.Fprintln(w, "\nUsage: askd <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'askd <command> -h' for a command's flags. Every flag can also be set")
	fmt.Fprintln(w, "as an ASKD_* environment variable, e.g. --question-timeout as ASKD_QUESTION_TIMEOUT.")
}

// flags returns a FlagSet for a command whose errors go to stderr.
func flags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.stderr, "Usage: askd %s %s\n\nFlags (each also ASKD_<NAME> in the environment):\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// parse applies ASKD_* environment variables as defaults, then the arguments.
func parse(e *env, fs *flag.FlagSet, args []string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := "ASKD_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := e.getenv(name); v != "" && err == nil {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s: %v", name, serr)
			}
		}
	})
	if err != nil {
		return err
	}
	return fs.Parse(args)
}

func exitCode(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// usageError is a mistake in the command line (exit status 2).
type usageError string

func (u usageError) Error() string { return string(u) }

func cmdVersion(ctx context.Context, e *env, args []string) error {
	fs := flags(e, "version", "[--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(e, fs, args); err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(map[string]string{"version": version})
	}
	fmt.Fprintln(e.stdout, "askd", version)
	return nil
}
