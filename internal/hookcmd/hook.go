// Package hookcmd is askd hook, the command hook askd install writes for
// Claude Code and Codex (Command), and with --cli for Copilot CLI, Qwen Code
// and Gemini CLI (agent.go), and the hook command lines the installers
// write, which run it (CommandLine, AgentCommandLine, IsAskd).
package hookcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	neturl "net/url"
	"os/exec"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

const hookSynopsis = "[--default-url URL] [--wait D] [--only-policies]"

// Command is askd hook, the command hook askd install writes for Claude Code
// and Codex: it posts the hook input on stdin to askd's /hooks/claude and
// prints askd's hook output on stdout. Its token and session come only from
// the environment (ASKD_TOKEN, ASKD_SESSION), never from its arguments,
// which other users of the machine can read (ps); its server is ASKD_URL,
// else --default-url, so the hooks follow ASKD_URL as .mcp.json's entry
// does.
//
// No shell syntax beyond a plain command line and no curl: Claude Code runs
// command hooks with /bin/sh -c, which is dash on Debian and Ubuntu.
//
// A failure never stops the agent: it is a line on stderr and exit status 1,
// which Claude Code and Codex read as a hook error that decides nothing (the
// run goes on as without the hook). Never status 2, which both read as a
// blocking decision whose reason is stderr; so even a mistake in the command
// line, status 2 elsewhere in askd, is 1 here.
//
// With --cli NAME it is the hook of another coding-agent CLI (agent.go),
// whose pre-tool hook fails closed instead.
func Command(ctx context.Context, e *cli.Env, args []string) error {
	if isAgentHook(args) {
		return agentCommand(ctx, e, args)
	}
	err := runHook(ctx, e, args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return hookError{err}
}

func runHook(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "hook", hookSynopsis)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: askd hook %s\n\n", hookSynopsis)
		fmt.Fprintln(w, "The command hook askd install writes for Claude Code and Codex: the hook input on stdin")
		fmt.Fprintln(w, "goes to askd's /hooks/claude, askd's reply to stdout. The server is ASKD_URL, else")
		fmt.Fprintln(w, "--default-url; the agent token is ASKD_TOKEN and the session ASKD_SESSION, from the")
		fmt.Fprintln(w, "environment only (never arguments, which ps shows). Any failure is a line on stderr and")
		fmt.Fprintln(w, "exit status 1, which both agents read as a hook error that decides nothing.")
		fmt.Fprintln(w, "For Copilot CLI, Qwen Code, Gemini CLI and OpenCode: askd hook --cli NAME -h.")
		fmt.Fprintln(w, "\nFlags:")
		cli.PrintDefaults(e, fs)
	}
	defaultURL := fs.String("default-url", cli.DefaultURL, "the askd server when ASKD_URL is unset")
	e.SetEnvName("default-url", "")
	wait := fs.Duration("wait", 0, "for a Stop hook: wait this long for the session's pending asks to be answered (0: answer at once)")
	e.SetEnvName("wait", "")
	onlyPolicies := fs.Bool("only-policies", false, "for a PermissionRequest hook beside the channel (askd install claude --channel): take only the prompts a\npolicy covers, which then wait for their quorum in the inbox; any other prompt gets no decision and goes on to\nthe terminal (and through the channel to the inbox)")
	e.SetEnvName("only-policies", "")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (the hook input comes on stdin)", fs.Arg(0))
	}
	r := &cli.Remote{URL: *defaultURL, Token: e.Getenv("ASKD_TOKEN"), Session: e.Getenv("ASKD_SESSION"), Side: cli.AgentSide}
	if u := e.Getenv("ASKD_URL"); u != "" {
		r.URL = u
	}
	if r.Token == "" {
		return errors.New("ASKD_TOKEN is not set where the agent runs: export an agent token (askd token create --agent NAME) before starting it")
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	input, err := io.ReadAll(io.LimitReader(e.Stdin, askd.MaxBodyBytes+1))
	if err != nil {
		return fmt.Errorf("reading the hook input: %v", err)
	}
	if len(input) > askd.MaxBodyBytes {
		return fmt.Errorf("the hook input is larger than %d bytes", askd.MaxBodyBytes)
	}
	if !json.Valid(input) {
		return errors.New("the hook input on stdin is not JSON (askd hook is run by Claude Code or Codex, which send it)")
	}
	var out json.RawMessage
	if *onlyPolicies {
		out, err = c.HookOnlyPolicies(ctx, input)
	} else {
		out, err = c.Hook(ctx, input, *wait)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.Stdout, "%s\n", out)
	return err
}

// hookError is a failed hook: exit status 1, whatever the cause. It does
// not unwrap, so that cli.ExitCode never finds a cli.UsageError (status 2)
// in it.
type hookError struct{ err error }

func (h hookError) Error() string {
	if msg := h.err.Error(); !strings.HasPrefix(msg, "hook: ") {
		return "hook: " + msg
	}
	return h.err.Error()
}

// CommandLine is the command line askd install writes for a hook, with
// server base (checked by CheckURL) and wait, a Stop hook's --wait ("" for
// none): askd on PATH runs askd hook; without it, one line on stderr says
// what to do, and status 1 lets the agent go on without the hook. Plain
// POSIX sh (dash runs Claude Code's hooks on Debian and Ubuntu): command -v,
// a brace group, exit.
func CommandLine(base string, wait string) string {
	if wait != "" {
		return CommandLineArgs(base, "--wait", wait)
	}
	return CommandLineArgs(base)
}

// CommandLineArgs is CommandLine with askd hook's flags args (words with
// nothing the shell would read).
func CommandLineArgs(base string, args ...string) string {
	cmd := "askd hook"
	if base != cli.DefaultURL {
		cmd += " --default-url '" + base + "'" // CheckURL: no quote in it
	}
	for _, a := range args {
		cmd += " " + a
	}
	return `command -v askd >/dev/null 2>&1 || { echo "` + missingAskd + `" >&2; exit 1; }; exec ` + cmd
}

// missingAskd is what a hook says when askd is not on PATH where the agent
// runs. No characters the shell would expand inside double quotes.
const missingAskd = "askd hook: askd is not on PATH, so this hook did nothing; put askd on PATH (make install in askd's source says how) and start the agent again"

// IsAskd reports whether a hook's command is one askd install wrote: askd
// hook, or the curl lines of earlier installs.
func IsAskd(s string) bool {
	return strings.Contains(s, "askd hook") || strings.Contains(s, "/hooks/claude")
}

// WarnIfNotOnPath warns on stdout, when askd is not on this machine's PATH,
// that the hooks just written run it.
func WarnIfNotOnPath(e *cli.Env) {
	if _, err := exec.LookPath("askd"); err == nil {
		return
	}
	fmt.Fprintln(e.Stdout, "\nNote: askd is not on PATH here, and the hooks run `askd hook`. Put askd on the PATH the agent")
	fmt.Fprintln(e.Stdout, "runs with (make install in the askd source prints the line to add); until then each hook")
	fmt.Fprintln(e.Stdout, "says so on stderr and the agent goes on without it.")
}

// CheckURL refuses, as a cli.UsageError naming --url, a server URL that
// askd's hooks cannot carry as it is: it goes into a double-quoted shell
// word (for Claude Code the default of ${ASKD_URL:-...}) inside a JSON or
// TOML string, so quotes, backslashes, $, backticks and } (and anything not
// printable ASCII) would change what runs.
func CheckURL(base string) error {
	u, err := neturl.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cli.UsageError(fmt.Sprintf("--url: %q is not an http:// or https:// URL", base))
	}
	for _, r := range base {
		if r <= ' ' || r > '~' {
			return cli.UsageError(fmt.Sprintf("--url: %q: %U cannot go into askd's hook command", base, r))
		}
		if strings.ContainsRune("\"'\\$`}", r) {
			return cli.UsageError(fmt.Sprintf("--url: %q: %c cannot go into askd's hook command", base, r))
		}
	}
	return nil
}
