package install

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/hookcmd"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/jsonedit"
)

// What askd install copilot, qwen, gemini and opencode share (SPEC §18):
// their flags, the timeouts they write, askd's hooks and skill, and JSON
// files edited with a backup beside each.

const agentSynopsis = "[--url URL] [--question-timeout 5m] [--approval-timeout 5m] [--stop-wait D]"

// hookSlack is how much longer than askd's own deadline a CLI is told to
// wait, for a tool call and for a hook: askd answers first, in words, where
// the CLI would kill the hook (and, for a pre-tool hook under a yolo mode,
// let the call run).
const hookSlack = time.Minute

// agentOptions are the flags every agent installer takes, and the
// timeouts they make.
type agentOptions struct {
	base                         string // the askd server, no trailing slash
	question, approval, stopWait time.Duration
	// pinned: the hooks reach base whatever ASKD_URL says, as the MCP
	// entry does, for a CLI that expands no ${ASKD_URL:-base} there.
	pinned bool
}

// gateTimeout is the CLI's timeout for the pre-tool hook, which waits up to
// the approval timeout for a person.
func (o *agentOptions) gateTimeout() time.Duration { return o.approval + hookSlack }

// stopTimeout is the CLI's timeout for the next-prompt hook, which waits up
// to stopWait for the session's pending asks.
func (o *agentOptions) stopTimeout() time.Duration { return o.stopWait + hookSlack }

// toolTimeout is the CLI's timeout for a call of askd's MCP tools, which
// block up to the longer of the question and approval timeouts.
func (o *agentOptions) toolTimeout() time.Duration { return max(o.question, o.approval) + hookSlack }

// agentFlags defines the flags of every agent installer on fs; parse checks
// them once fs is parsed.
func agentFlags(e *cli.Env, fs *flag.FlagSet) (parse func() (*agentOptions, error)) {
	url := fs.String("url", cli.DefaultURL, "the askd server the MCP entry and hooks reach")
	question := fs.Duration("question-timeout", 5*time.Minute, "the server's --question-timeout")
	approval := fs.Duration("approval-timeout", 5*time.Minute, "the server's --approval-timeout: the pre-tool hook's timeout is a minute more")
	stopWait := fs.Duration("stop-wait", 0, "how long the next-prompt hook waits for the session's pending asks to be answered, so that a headless\nrun goes on with the answer (default: the longer of the two timeouts; 0: never wait)")
	return func() (*agentOptions, error) {
		if fs.NArg() > 0 {
			return nil, cli.UsageError(fmt.Sprintf("install %s: unexpected argument %q", fs.Name(), fs.Arg(0)))
		}
		o := &agentOptions{base: strings.TrimRight(*url, "/"), question: *question, approval: *approval}
		if err := hookcmd.CheckURL(o.base); err != nil {
			return nil, err
		}
		if o.question <= 0 || o.approval <= 0 {
			return nil, cli.UsageError("--question-timeout and --approval-timeout: the server's, above 0")
		}
		o.stopWait = max(o.question, o.approval)
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "stop-wait" {
				o.stopWait = *stopWait
			}
		})
		if o.stopWait < 0 || o.stopWait > httpapi.MaxWait {
			return nil, cli.UsageError(fmt.Sprintf("--stop-wait: %s, must be 0 to %s", askd.ShortDuration(o.stopWait), askd.ShortDuration(httpapi.MaxWait)))
		}
		return o, nil
	}
}

// gateCommand and stopCommand are the command lines of askd's hooks for
// cli (hookcmd.AgentCommandLine), each with the CLI's timeout for it.
func (o *agentOptions) gateCommand(c app.CLI) string {
	gate, _ := httpapi.AgentHookEvents(c)
	return hookcmd.AgentCommandLine(o.base, o.pinned, c, gate, "--timeout", askd.ShortDuration(o.gateTimeout()))
}

func (o *agentOptions) stopCommand(c app.CLI) string {
	_, stop := httpapi.AgentHookEvents(c)
	var args []string
	if o.stopWait > 0 {
		args = append(args, "--wait", askd.ShortDuration(o.stopWait))
	}
	return hookcmd.AgentCommandLine(o.base, o.pinned, c, stop, append(args, "--timeout", askd.ShortDuration(o.stopTimeout()))...)
}

// askdToolNames are askd's MCP tools an agent calls; permission_prompt is
// Claude Code's permission contract, of no use to the others.
var askdToolNames = []any{"ask_user_question", "ask", "request_approval", "check_ask", "cancel_ask"}

// cliHome is the directory a CLI keeps its user settings in: the variable
// that moves it, else dir in the home directory.
func cliHome(e *cli.Env, variable, dir string) (string, error) {
	if v := e.Getenv(variable); v != "" {
		return v, nil
	}
	home, err := homeDir(e)
	if err != nil {
		return "", err
	}
	return filepath.Join(home, dir), nil
}

// changes reports what an installer did to each file, in order.
type changes struct{ e *cli.Env }

// file reports one file: its backup, if one was made, and whether it changed.
func (c changes) file(path, backup string, changed bool) {
	if backup != "" {
		fmt.Fprintf(c.e.Stdout, "backup    %s\n", backup)
	}
	report(c.e, path, changed)
}

// skill writes askd's skill to path, its tools named with prefix as the
// CLI names them (skillFor), a backup beside a file it changes, and
// reports it.
func (c changes) skill(path, prefix string) error {
	changed, backup, err := writeFileWithBackup(path, skillFor(prefix))
	if err != nil {
		return err
	}
	c.file(path, backup, changed)
	return nil
}

// editJSONFile reads a JSON object file (absent: {}), lets edit change it
// and, if anything changed, writes it back in one rename, first copying an
// existing file to a backup beside it (writeBackup), which is returned. The
// user's keys keep their order and the file its indentation. A file that
// is not one JSON object (comments included), or an edit error, changes
// nothing, not even a backup, and says so.
func editJSONFile(path string, edit func(root *jsonedit.Object) error) (changed bool, backup string, err error) {
	target, data, exists, err := readTarget(path)
	if err != nil {
		return false, "", err
	}
	root, err := jsonedit.Decode(data)
	if err != nil {
		return false, "", fmt.Errorf("%s: not a JSON object askd can edit (%v); fix or move it, then run again", path, err)
	}
	if err := edit(root); err != nil {
		return false, "", fmt.Errorf("%s: %v; fix or move it, then run again", path, err)
	}
	indent, newline := jsonedit.Layout(data)
	out, err := jsonedit.Encode(root, indent, newline)
	if err != nil {
		return false, "", err
	}
	return writeWithBackup(target, target, exists, data, out)
}

// writeFileWithBackup writes data to path (a file askd owns all of, a
// plugin or a skill) unless it holds that already, backing up what was
// there first.
func writeFileWithBackup(path string, data []byte) (changed bool, backup string, err error) {
	target, old, exists, err := readTarget(path)
	if err != nil {
		return false, "", err
	}
	return writeWithBackup(target, target, exists, old, data)
}

// readTarget reads the file at path, or where it points when it is a
// symlink (target): its text, and whether it exists (a missing one is no
// error).
func readTarget(path string) (target string, data []byte, exists bool, err error) {
	if target, err = followSymlink(path); err != nil {
		return "", nil, false, err
	}
	data, err = os.ReadFile(target)
	if errors.Is(err, fs.ErrNotExist) {
		return target, nil, false, nil
	}
	return target, data, err == nil, err
}

// writeWithBackup replaces target's old text with out, unless they are the
// same, after a backup of the old one when the file exists; a new file is
// 0600 (CLI settings come to hold secrets), its directory made 0700. Its
// errors name the file as name (the path the person gave, or target).
func writeWithBackup(name, target string, exists bool, old, out []byte) (changed bool, backup string, err error) {
	if exists && bytes.Equal(old, out) {
		return false, "", nil
	}
	mode := os.FileMode(0o600)
	if exists {
		info, err := os.Stat(target)
		if err != nil {
			return false, "", err
		}
		mode = info.Mode().Perm()
		if backup, err = writeBackup(target, old, mode); err != nil {
			return false, "", fmt.Errorf("%s: backup: %v (nothing was changed)", name, err)
		}
	} else if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
		return false, "", err
	}
	if err := replaceFile(target, out, mode); err != nil {
		return false, backup, fmt.Errorf("%s: %v", name, err)
	}
	return true, backup, nil
}

// setHookGroups puts one group holding hook into hooks[event], in the
// place of askd's earlier group (withAskdGroup), keeping every other group
// and hook. A CLI whose groups are Claude Code's shape (Qwen's, Gemini's)
// takes them so.
func setHookGroup(hooks *jsonedit.Object, event string, hook *jsonedit.Object) error {
	groups, err := hooks.Array(event)
	if err != nil {
		return fmt.Errorf("hooks: %v", err)
	}
	hooks.Set(event, withAskdGroup(groups, jsonedit.NewObject().Set("hooks", []any{hook})))
	return nil
}

// skillFor is askd's skill for an agent that calls askd's tools prefix+TOOL
// (Gemini mcp_askd_, OpenCode askd_, Copilot askd-).
func skillFor(prefix string) []byte {
	return []byte(strings.ReplaceAll(skillText, "mcp__askd__", prefix))
}

// printEnvNote says what the CLI reads from the environment, never from
// askd's files.
func printEnvNote(e *cli.Env, c app.CLI) {
	// OpenCode's plugin reaches askd over HTTP; askd opencode is run by hand.
	if _, err := exec.LookPath("askd"); err != nil && c != app.CLIOpenCode {
		fmt.Fprintf(e.Stdout, "\nNote: askd is not on PATH here, and %s's hooks run `askd hook`. Put askd on the PATH the\n", c.Title())
		fmt.Fprintln(e.Stdout, "agent runs with (make install in the askd source prints the line to add); until then its")
		fmt.Fprintln(e.Stdout, "pre-tool hook denies every call it gates, saying so, and answers wait for check_ask.")
	}
	fmt.Fprintf(e.Stdout, "\n%s reads the token and session from the environment, never from these files:\n", c.Title())
	fmt.Fprintln(e.Stdout, "  export ASKD_TOKEN=<agent token>   # askd token create --agent NAME")
	fmt.Fprintln(e.Stdout, "  export ASKD_SESSION=<run name>    # the same for MCP and hooks, so answers come back to this run")
}
