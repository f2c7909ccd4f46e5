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
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…"; without
// it askd version reads the build info (buildInfo).
var version = "dev"

func init() { version = buildInfo().Version }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
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
		"token":       {"create, list or revoke tokens (works on the database directly)", cmdToken},
		"signin-link": {"print a one-time link that signs a browser in to the inbox (works on the database directly)", cmdSignInLink},
		"ask":         {"ask a person something (agent token)", cmdAsk},
		"check":       {"show the state of one of your asks (agent token)", cmdCheck},
		"cancel":      {"withdraw one of your pending asks (agent token)", cmdCancel},
		"list":        {"list asks in the inbox (human token)", cmdList},
		"show":        {"show one ask with its history (human token)", cmdShow},
		"answer":      {"answer an ask (human token)", cmdAnswer},
		"dismiss":     {"close an ask without answering (human token)", cmdDismiss},
		"rule":        {"list or revoke the rules that answer a session's approvals at once (human token)", cmdRule},
		"version":     {"print the version", cmdVersion},
		"mcp":         {"serve MCP on stdin/stdout, bridged to a running askd (agent token)", cmdMCP},
		"session":     {"set how a session's agent is told of answers: session set-channel (agent token)", cmdSession},
		"hook":        {"the Claude Code and Codex hook askd install writes: hook input on stdin to askd, its reply on stdout (agent token)", cmdHook},
		"install":     {"wire askd into Claude Code (install claude) or Codex (install codex: edits its config.toml)", cmdInstall},
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
	fmt.Fprintln(w, "that the person's commands (list, show, answer, dismiss, rule) take their token from")
	fmt.Fprintln(w, "ASKD_HUMAN_TOKEN and the agent's (ask, check, cancel, session, mcp, hook) from ASKD_TOKEN.")
}

// flags returns a FlagSet for a command. Its usage goes to the FlagSet's
// output, which parse points at stdout for -h and silences otherwise: a
// mistake is one line from main, not the usage again.
func flags(e *env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: askd %s %s\n\nFlags (each also the environment variable named after it):\n", name, synopsis)
		printDefaults(e, fs)
	}
	return fs
}

// printDefaults is fs.PrintDefaults, with each flag's environment variable.
func printDefaults(e *env, fs *flag.FlagSet) {
	w := fs.Output()
	fs.VisitAll(func(f *flag.Flag) {
		typ, use := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		if env := envName(e, f.Name); env != "" {
			line += "  (" + env + ")"
		}
		fmt.Fprintln(w, line)
		use = strings.ReplaceAll(use, "\n", "\n    \t")
		switch {
		case f.DefValue == "" || f.DefValue == "false" || f.DefValue == "0" || f.DefValue == "0s":
		case typ == "string":
			use += fmt.Sprintf(" (default %q)", f.DefValue)
		default:
			use += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "    \t%s\n", use)
	})
}

// envName sets the environment variable of a command's flag name ("" for
// none), in place of ASKD_<NAME>.
func (e *env) envName(name, variable string) {
	if e.envNames == nil {
		e.envNames = map[string]string{}
	}
	e.envNames[name] = variable
}

// envName is the environment variable that sets flag name ("" for none):
// ASKD_<NAME> unless the command said otherwise (env.envName).
func envName(e *env, name string) string {
	if v, ok := e.envNames[name]; ok {
		return v
	}
	return "ASKD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// parse applies ASKD_* environment variables as defaults, then the
// arguments. Flags may come before, between or after the positional
// arguments, and "--" ends them: fs.Args() holds the positional ones in
// order. A mistake is a usageError of one line; -h prints the usage on
// stdout and returns flag.ErrHelp (exit 0).
func parse(e *env, fs *flag.FlagSet, args []string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := envName(e, f.Name)
		if name == "" {
			return
		}
		if v := e.getenv(name); v != "" && err == nil {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = usageError(fmt.Sprintf("%s: %v", name, serr))
			}
		}
	})
	if err != nil {
		return err
	}
	var flagArgs, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			flagArgs = append(flagArgs, a)
			if needsValue(fs, a) {
				if i+1 == len(args) { // else "--" below would be its value
					return usageError(fmt.Sprintf("%s: --%s needs a value (askd %s -h lists its flags)", fs.Name(), strings.TrimLeft(a, "-"), fs.Name()))
				}
				flagArgs = append(flagArgs, args[i+1])
				i++
			}
		default:
			positional = append(positional, a)
		}
	}
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err = fs.Parse(append(append(flagArgs, "--"), positional...))
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(e.stdout)
		fs.Usage()
		fs.SetOutput(out)
		return err
	}
	if err != nil {
		return usageError(fmt.Sprintf("%s: %s (askd %s -h lists its flags)", fs.Name(), flagError(fs, err), fs.Name()))
	}
	return nil
}

// flagErrors match the flag package's messages, which flagError rewords.
var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	flagNoValue   = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	badFlagValue  = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]*): `)
)

// flagError is a flag package error in askd's words: flags written with two
// dashes, as askd's help writes them, and a bad value named for its type.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		if len(m[1]) == 1 {
			return fmt.Sprintf("unknown flag -%s", m[1])
		}
		return fmt.Sprintf("unknown flag --%s", m[1])
	}
	if m := flagNoValue.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs a value", m[1])
	}
	if m := badFlagValue.FindStringSubmatch(msg); m != nil {
		want := "a valid value"
		if f := fs.Lookup(m[2]); f != nil {
			switch typ, _ := flag.UnquoteUsage(f); typ {
			case "duration":
				want = "a duration such as 30s, 5m or 2h"
			case "int", "uint":
				want = "a whole number"
			case "":
				want = "true or false"
			default:
				// A Set method's own error says what it wants.
				if _, why, ok := strings.Cut(msg, m[0]); ok && why != "" {
					want = why
				} else if i := strings.LastIndex(msg, ": "); i >= 0 {
					want = msg[i+2:]
				}
				return fmt.Sprintf("--%s %q: %s", m[2], m[1], want)
			}
		}
		return fmt.Sprintf("--%s: %q is not %s", m[2], m[1], want)
	}
	return msg
}

// needsValue reports whether arg is a flag that takes the next argument.
func needsValue(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return false
	}
	return true
}

func exitCode(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
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
	if fs.NArg() > 0 {
		return usageError(fmt.Sprintf("version: unexpected argument %q", fs.Arg(0)))
	}
	b := buildInfo()
	if *asJSON {
		return json.NewEncoder(e.stdout).Encode(b)
	}
	fmt.Fprintln(e.stdout, "askd", b.Version)
	if b.Revision != "" {
		rev := b.Revision
		if b.Modified {
			rev += " (with uncommitted changes)"
		}
		fmt.Fprintln(e.stdout, "  revision ", rev)
	}
	if b.Time != "" {
		fmt.Fprintln(e.stdout, "  committed", b.Time)
	}
	fmt.Fprintln(e.stdout, "  built with", b.Go)
	return nil
}

// build is what askd version reports.
type build struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"` // the VCS revision built from
	Time     string `json:"time,omitempty"`     // its commit time, RFC 3339
	Modified bool   `json:"modified,omitempty"` // the tree had uncommitted changes
	Go       string `json:"go"`
}

// buildInfo reads the version from the binary's build info: the module
// version go install gave it (v1.2.3, or a pseudo-version), else "dev", and
// the VCS revision go build stamps from a checkout. -ldflags -X main.version
// overrides the version.
func buildInfo() build {
	b := build{Version: version, Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := info.Main.Version; b.Version == "dev" && v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Version == "dev" && b.Revision != "" {
		b.Version = "dev-" + b.Revision[:min(12, len(b.Revision))]
		if b.Modified {
			b.Version += "-dirty"
		}
	}
	return b
}
