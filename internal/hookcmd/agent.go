package hookcmd

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/httpapi"
)

// askd hook --cli NAME: the hooks of Copilot CLI, Qwen Code, Gemini CLI
// (and OpenCode's, for a plugin that would rather run a command) in each
// CLI's own shapes (SPEC §18). The hook input goes to askd's /hooks/NAME,
// which answers in the CLI's shape, and the reply is printed as it came.
//
// The pre-tool hook fails closed. Under Qwen's --yolo, Gemini's
// --approval-mode yolo and OpenCode's --auto it is the only gate there is,
// and a hook that errs or is killed at the CLI's timeout lets the call run
// unasked; so anything that keeps askd's decision from the CLI (no token,
// askd unreachable, a refused token, an error or a malformed reply, a wait
// about to pass the CLI's own hook timeout) is printed as the CLI's own
// deny, whose reason the model reads, with exit status 0. askd's wait ends
// first: the server is told to give up a little before the hook would be
// killed (--timeout), and the hook itself gives up a little after that.
//
// The next-prompt hook never decides on a failure: a deny there would be a
// prompt to go on. It fails as Claude Code's hook does, a line on stderr
// and exit status 1, which every CLI reads as a hook error that decides
// nothing.

const agentSynopsis = "--cli copilot|qwen|gemini|opencode --event EVENT [--timeout D] [--wait D] [--default-url URL | --url URL]"

// defaultHookTimeouts are the CLIs' own hook timeouts when the hook's
// entry sets none (other-clis.md): Copilot's timeoutSec 30, Qwen's 60 s,
// Gemini's 60000 ms. OpenCode's plugin has none.
var defaultHookTimeouts = map[app.CLI]time.Duration{
	app.CLICopilot: 30 * time.Second,
	app.CLIQwen:    time.Minute,
	app.CLIGemini:  time.Minute,
}

// minHookTimeout is the shortest --timeout taken: askd's wait must end
// some seconds before the CLI kills the hook, and still leave a person
// some time. minMargin is the least time it ends before (hookBudget).
// Variables for the tests, which wait for timeouts of a second.
var (
	minHookTimeout = 10 * time.Second
	minMargin      = 2 * time.Second
)

// agentHook is one run of askd hook --cli: what it knows of the hook so
// far, which says how a failure is told.
type agentHook struct {
	cli   app.CLI
	event string
	gate  bool // the CLI's pre-tool hook: fails closed
}

// isAgentHook reports whether args are askd hook --cli's.
func isAgentHook(args []string) bool {
	v, _ := scanFlag(args, "cli")
	return v != ""
}

// scanFlag is the value of flag name in args, as the flag package would
// read it (-name v, --name v, -name=v), before they are parsed: so that a
// hook whose other flags are wrong still knows its CLI and event.
func scanFlag(args []string, name string) (string, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		for _, p := range []string{"-" + name, "--" + name} {
			switch {
			case a == p && i+1 < len(args):
				return args[i+1], true
			case strings.HasPrefix(a, p+"="):
				return a[len(p)+1:], true
			}
		}
	}
	return "", false
}

// agentCommand is askd hook --cli. See the top of this file.
func agentCommand(ctx context.Context, e *cli.Env, args []string) error {
	h := &agentHook{}
	name, _ := scanFlag(args, "cli")
	h.cli, _ = app.ParseCLI(name)
	h.event, _ = scanFlag(args, "event")
	h.classify()
	out, err := h.run(ctx, e, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return err
	case err == nil:
		_, err = fmt.Fprintf(e.Stdout, "%s\n", out)
		return err
	case h.gate:
		deny, merr := json.Marshal(httpapi.GateDeny(h.cli, denyReason(h.cli, err)))
		if merr != nil {
			return hookError{merr}
		}
		fmt.Fprintf(e.Stderr, "askd hook: %v (the call was denied)\n", err)
		_, err = fmt.Fprintf(e.Stdout, "%s\n", deny)
		return err
	}
	return hookError{err}
}

// classify sets gate from the CLI and event known.
func (h *agentHook) classify() {
	gate, _ := httpapi.AgentHookEvents(h.cli)
	h.gate = h.cli != "" && h.event != "" && h.event == gate
}

// run is the hook's work; its error is the failure to tell.
func (h *agentHook) run(ctx context.Context, e *cli.Env, args []string) (json.RawMessage, error) {
	fs := cli.Flags(e, "hook", agentSynopsis)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: askd hook %s\n\n", agentSynopsis)
		fmt.Fprintln(w, "The command hook askd install writes for Copilot CLI, Qwen Code and Gemini CLI: the hook")
		fmt.Fprintln(w, "input on stdin goes to askd's /hooks/CLI, askd's reply, in the CLI's own shape, to stdout.")
		fmt.Fprintln(w, "The pre-tool hook fails closed: when askd's decision cannot be had (askd unreachable, a")
		fmt.Fprintln(w, "refused token, a bad reply, no decision before the CLI's hook timeout) it prints the CLI's")
		fmt.Fprintln(w, "deny, with a reason the model reads. Token and session from ASKD_TOKEN and ASKD_SESSION.")
		fmt.Fprintln(w, "\nFlags:")
		cli.PrintDefaults(e, fs)
	}
	cliName := fs.String("cli", "", "the coding-agent CLI whose hook this is: copilot, qwen, gemini, opencode")
	e.SetEnvName("cli", "")
	event := fs.String("event", "", "the hook's event, as the CLI names it (default: the input's hook_event_name)")
	e.SetEnvName("event", "")
	timeout := fs.Duration("timeout", 0, "the CLI's own timeout for this hook, as its entry sets it (default: the CLI's default);\naskd's wait ends before it")
	e.SetEnvName("timeout", "")
	wait := fs.Duration("wait", 0, "for a next-prompt hook: wait this long for the session's pending asks to be answered")
	e.SetEnvName("wait", "")
	defaultURL := fs.String("default-url", cli.DefaultURL, "the askd server when ASKD_URL is unset")
	e.SetEnvName("default-url", "")
	url := fs.String("url", "", "the askd server, whatever ASKD_URL says: for a CLI whose MCP entry cannot follow\nASKD_URL, so that its hooks reach the server its tools do")
	e.SetEnvName("url", "")
	if err := cli.Parse(e, fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (the hook input comes on stdin)", fs.Arg(0))
	}
	c, err := app.ParseCLI(*cliName)
	if err != nil {
		return nil, errors.New(askd.ErrorMessage(err))
	}
	h.cli, h.event = c, *event
	input, err := readInput(e.Stdin)
	if h.event == "" && err == nil {
		var named struct {
			HookEventName string `json:"hook_event_name"`
		}
		_ = json.Unmarshal(input, &named)
		h.event = named.HookEventName
	}
	h.classify()
	if err != nil {
		return nil, err
	}
	if *timeout == 0 {
		*timeout = defaultHookTimeouts[c]
	}
	if *timeout != 0 && *timeout < minHookTimeout {
		return nil, fmt.Errorf("--timeout: %s, at least %s: askd's wait must end first and leave a person some time", *timeout, minHookTimeout)
	}
	own, server := hookBudget(*timeout)
	serverWait := server
	if !h.gate {
		serverWait = *wait
		if server > 0 {
			serverWait = min(*wait, server)
		}
	}
	r := &cli.Remote{URL: *defaultURL, Token: e.Getenv("ASKD_TOKEN"), Session: e.Getenv("ASKD_SESSION"), Side: cli.AgentSide}
	switch u := e.Getenv("ASKD_URL"); {
	case *url != "":
		r.URL = *url
	case u != "":
		r.URL = u
	}
	if r.Token == "" {
		return nil, errors.New("ASKD_TOKEN is not set where the agent runs: export an agent token (askd token create --agent NAME) before starting it")
	}
	client, err := r.Client()
	if err != nil {
		return nil, err
	}
	if own > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, own)
		defer cancel()
	}
	out, err := client.AgentHook(ctx, string(c), h.event, input, serverWait)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return nil, timedOut{c, *timeout}
	case err != nil:
		return nil, err
	case !isObject(out):
		return nil, fmt.Errorf("askd at %s replied with something that is not a JSON object", r.URL)
	}
	return out, nil
}

// readInput reads the hook input: at most askd.MaxBodyBytes of JSON.
func readInput(r io.Reader) (json.RawMessage, error) {
	input, err := io.ReadAll(io.LimitReader(r, askd.MaxBodyBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading the hook input: %v", err)
	case len(input) > askd.MaxBodyBytes:
		return nil, fmt.Errorf("the hook input is larger than %d bytes", askd.MaxBodyBytes)
	case !json.Valid(input):
		return nil, errors.New("the hook input on stdin is not JSON")
	}
	return input, nil
}

func isObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}

// hookBudget is, for a CLI that kills its hook at timeout, how long the
// hook waits for askd (own) and how long askd is told to wait for a
// decision (server): a margin short of it, then another, so that askd's
// deny comes first, and the hook's own next. Zero: no limit.
func hookBudget(timeout time.Duration) (own, server time.Duration) {
	if timeout <= 0 {
		return 0, 0
	}
	m := min(max(timeout/10, minMargin), 10*time.Second)
	return timeout - m, min(timeout-2*m, httpapi.MaxWait)
}

// timedOut is the hook giving up on askd before the CLI's own timeout.
type timedOut struct {
	cli     app.CLI
	timeout time.Duration
}

func (t timedOut) Error() string {
	return fmt.Sprintf("no reply from askd before %s's hook timeout (%s)", t.cli.Title(), askd.ShortDuration(t.timeout))
}

// denyReason is what the model reads of a call denied because askd's
// decision could not be had.
func denyReason(c app.CLI, err error) string {
	var to timedOut
	if errors.As(err, &to) {
		return fmt.Sprintf("This call was not run: no one decided before %s's hook timeout (%s). It was not a refusal; ask again later, or go on without it.", to.cli.Title(), askd.ShortDuration(to.timeout))
	}
	return fmt.Sprintf("This call was not run: askd, where a person approves it, gave no decision (%s). Tell the user; do not try to get around it.", strings.TrimPrefix(err.Error(), "hook: "))
}

// AgentCommandLine is the command line askd install writes for a CLI's hook
// of event, with server base (checked by CheckURL) and askd hook's further
// flags args (words with nothing the shell would read), in plain POSIX sh.
// The hook follows ASKD_URL, base its default, unless pinned: then it
// reaches base whatever ASKD_URL says, as the MCP entry of a CLI that
// expands no default in its config does. When askd is not on PATH where
// the CLI runs, a pre-tool hook prints the CLI's deny saying so (fail
// closed) and a next-prompt hook says so on stderr and exits 1, deciding
// nothing.
func AgentCommandLine(base string, pinned bool, c app.CLI, event string, args ...string) string {
	cmd := "askd hook --cli " + string(c) + " --event " + event
	switch {
	case pinned:
		cmd += " --url '" + base + "'" // CheckURL: no quote in it
	case base != cli.DefaultURL:
		cmd += " --default-url '" + base + "'"
	}
	for _, a := range args {
		cmd += " " + a
	}
	if gate, _ := httpapi.AgentHookEvents(c); event == gate {
		deny, err := json.Marshal(httpapi.GateDeny(c, missingAskdDeny))
		if err != nil {
			panic(err) // a reply of askd's own types
		}
		// Single-quoted: the deny's JSON holds no single quote (missingAskdDeny).
		return `command -v askd >/dev/null 2>&1 || { printf '%s\n' '` + string(deny) + `'; exit 0; }; exec ` + cmd
	}
	return `command -v askd >/dev/null 2>&1 || { echo "` + missingAskd + `" >&2; exit 1; }; exec ` + cmd
}

// missingAskdDeny is the reason of a pre-tool hook's deny when askd is not
// on PATH where the CLI runs. No single quote: it goes in a single-quoted
// shell word.
const missingAskdDeny = "This call was not run: askd, where a person approves it, is not on PATH where this agent runs its hooks. Tell the user to put askd on that PATH (make install in the askd source) and start again; do not try to get around it."
