// Package opencodecmd is askd opencode: OpenCode headless, going on with
// each answer a person gives after its turn (SPEC §18). OpenCode has no
// hook for the next prompt (opencode run exits when its session is idle),
// so this runs opencode run, and while the session has asks whose answers
// it has not been told, waits for them and continues the session with
// each answer as the next prompt (opencode run -s ID "answer"): what the
// Stop hook does for Claude Code.
package opencodecmd

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/httpapi"
)

const synopsis = "[--wait D] [--default-url URL] [--opencode PROGRAM] -- ARGS..."

// SessionFileVariable names the file askd's OpenCode plugin writes the
// session's id to, so that askd opencode can continue the session.
const SessionFileVariable = "ASKD_OPENCODE_SESSION_FILE"

// Command is askd opencode -- ARGS...: it runs opencode run ARGS (OpenCode's
// output is the command's), then, while the session's asks have answers it
// has not been told (waiting up to --wait each time for those still
// pending), runs opencode run -s ID with OpenCode's flags of ARGS and the
// answer as the message. It exits with OpenCode's last status (a
// cli.ExitStatus); askd's own failures after a run are a line on stderr,
// and that run's status.
//
// The token is ASKD_TOKEN; the session ASKD_SESSION, else a new name,
// exported to OpenCode, whose MCP entry and askd's plugin send it, so that
// every ask of the run is in one session.
func Command(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "opencode", synopsis)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: askd opencode %s\n\n", synopsis)
		fmt.Fprintln(w, "Runs opencode run ARGS (askd install opencode wires OpenCode first), then, while the session")
		fmt.Fprintln(w, "has asks whose answers it was not told, waits for them and continues the session with each")
		fmt.Fprintln(w, "answer as the next prompt (opencode run -s ID \"answer\"). Exits with OpenCode's status.")
		fmt.Fprintln(w, "  askd opencode -- --auto \"fix the failing test\"")
		fmt.Fprintln(w, "\nFlags:")
		cli.PrintDefaults(e, fs)
	}
	wait := fs.Duration("wait", httpapi.MaxWait, "how long to wait each time for the session's pending asks to be answered")
	e.SetEnvName("wait", "")
	defaultURL := fs.String("default-url", cli.DefaultURL, "the askd server when ASKD_URL is unset")
	e.SetEnvName("default-url", "")
	program := fs.String("opencode", "opencode", "the OpenCode program to run")
	e.SetEnvName("opencode", "")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	ocArgs := fs.Args()
	if len(ocArgs) == 0 {
		return cli.UsageError("opencode: give opencode run's arguments after --, e.g. askd opencode -- --auto \"fix the failing test\"")
	}
	if *wait < 0 || *wait > httpapi.MaxWait {
		return cli.UsageError(fmt.Sprintf("--wait: %s, must be 0 to %s", *wait, httpapi.MaxWait))
	}
	r := &cli.Remote{URL: *defaultURL, Token: e.Getenv("ASKD_TOKEN"), Session: e.Getenv("ASKD_SESSION"), Side: cli.AgentSide}
	if u := e.Getenv("ASKD_URL"); u != "" {
		r.URL = u
	}
	if r.Session == "" {
		r.Session = "opencode-" + strings.ToLower(rand.Text()[:10])
	}
	c, err := r.Client()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "askd-opencode-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	w := &wrapper{e: e, program: *program, session: r.Session, idFile: filepath.Join(dir, "session")}
	status, err := w.run(append([]string{"run"}, ocArgs...))
	if err != nil {
		return err
	}
	for status == 0 && ctx.Err() == nil {
		answer, err := nextPrompt(ctx, c, *wait)
		if ctx.Err() != nil {
			break // interrupted: the answers wait for the next run
		}
		if err != nil {
			fmt.Fprintf(e.Stderr, "askd opencode: %v (OpenCode's answers wait for its next run)\n", cli.Term(err.Error()))
			break
		}
		if answer == "" {
			break
		}
		id := w.sessionID(ocArgs)
		if id == "" {
			fmt.Fprintln(e.Stderr, "askd opencode: OpenCode's session is not known (askd's plugin reports it: run askd install opencode), so the answer waits for its next run:")
			fmt.Fprintln(e.Stderr, cli.Term(answer))
			break
		}
		if status, err = w.run(append(append([]string{"run"}, continuing(ocArgs)...), "-s", id, answer)); err != nil {
			return err
		}
	}
	if status != 0 {
		return cli.ExitStatus(status)
	}
	return nil
}

// wrapper runs OpenCode for one askd opencode.
type wrapper struct {
	e       *cli.Env
	program string
	session string // the askd session, exported as ASKD_SESSION
	idFile  string // where askd's plugin writes OpenCode's session id
}

// run runs OpenCode with args, its output the command's, and returns its
// exit status; an error only when it could not be started.
func (w *wrapper) run(args []string) (int, error) {
	cmd := exec.Command(w.program, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = w.e.Stdin, w.e.Stdout, w.e.Stderr
	cmd.Env = append(os.Environ(), "ASKD_SESSION="+w.session, SessionFileVariable+"="+w.idFile)
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit):
		if s := exit.ExitCode(); s > 0 {
			return s, nil
		}
		return 1, nil // killed by a signal
	}
	return 0, fmt.Errorf("opencode: %v (is OpenCode installed? npm install -g opencode-ai)", err)
}

// sessionID is the OpenCode session to continue: the one askd's plugin
// reported, else the one ARGS named with -s.
func (w *wrapper) sessionID(args []string) string {
	if data, err := os.ReadFile(w.idFile); err == nil && len(strings.TrimSpace(string(data))) > 0 {
		return strings.TrimSpace(string(data))
	}
	for i, a := range args {
		switch {
		case (a == "-s" || a == "--session") && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(a, "--session="):
			return strings.TrimPrefix(a, "--session=")
		}
	}
	return ""
}

// nextPrompt is what the session is to be told next, "" for nothing: the
// answers to its asks it has not been told, waiting up to wait for those
// still pending (askd's /hooks/opencode, session.idle: the Stop hook's
// use case).
func nextPrompt(ctx context.Context, c *client.Client, wait time.Duration) (string, error) {
	out, err := c.AgentHook(ctx, "opencode", "session.idle", json.RawMessage(`{"hook_event_name":"session.idle"}`), wait)
	if err != nil {
		return "", err
	}
	var reply struct {
		Decision, Reason string
	}
	if err := json.Unmarshal(out, &reply); err != nil {
		return "", fmt.Errorf("askd's reply: %v", err)
	}
	if reply.Decision != "block" {
		return "", nil
	}
	return reply.Reason, nil
}

// valued are opencode run's options that take a value (opencode run
// --help, 1.18).
var valued = map[string]bool{
	"--log-level": true, "--command": true, "-s": true, "--session": true, "-m": true, "--model": true,
	"--agent": true, "--format": true, "-f": true, "--file": true, "--title": true, "--attach": true,
	"-p": true, "--password": true, "-u": true, "--username": true, "--dir": true, "--port": true, "--variant": true,
}

// dropped are the options of the first run a continuation leaves out: it
// names its session, and its message is the answer.
var dropped = map[string]bool{
	"-s": true, "--session": true, "-c": true, "--continue": true, "--fork": true,
	"--title": true, "--command": true, "-f": true, "--file": true,
}

// continuing is opencode run's ARGS for a continuation: the options, less
// those that name the session or the message (dropped), and no message.
func continuing(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break // the rest is the message
		}
		if !strings.HasPrefix(a, "-") {
			continue // a word of the message
		}
		name, _, inline := strings.Cut(a, "=")
		takes := valued[name] && !inline && i+1 < len(args)
		if !dropped[name] {
			out = append(out, a)
			if takes {
				out = append(out, args[i+1])
			}
		}
		if takes {
			i++
		}
	}
	return out
}
