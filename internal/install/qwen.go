package install

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/jsonedit"
)

const qwenSynopsis = agentSynopsis

// installQwen wires askd into Qwen Code, at user scope ($QWEN_HOME, else
// ~/.qwen), where qwen -p runs hooks without a trusted folder (a project's
// .qwen/settings.json needs one). In settings.json:
//
//   - mcpServers.askd: httpUrl and headers, the token and session $-references
//     Qwen expands (it has no ${VAR:-default}, so the URL is --url's),
//     permission_prompt excluded, a timeout past askd's own;
//   - hooks.PreToolUse: under qwen --yolo every tool call comes to askd
//     (without --yolo, qwen -p declines a call that needs approval before
//     any hook runs); Qwen runs no edited call (app.CLI.RunsEdits), so the
//     card offers no Edit;
//   - hooks.Stop: an answer given after the turn becomes the next prompt;
//
// and skills/askd/SKILL.md. Hook timeouts are seconds, but Qwen reads a
// command hook's timeout of 1000 or more as milliseconds, so such a
// timeout is written in milliseconds. The file is backed up beside itself
// first; every other server, hook and setting stays.
func installQwen(e *cli.Env, args []string) error {
	fs := cli.Flags(e, "install qwen", qwenSynopsis)
	parse := agentFlags(e, fs)
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	o, err := parse()
	if err != nil {
		return err
	}
	o.pinned = true // Qwen expands no ${ASKD_URL:-...}
	home, err := cliHome(e, "QWEN_HOME", ".qwen")
	if err != nil {
		return err
	}
	report := changes{e}
	settings := filepath.Join(home, "settings.json")
	changed, backup, err := editJSONFile(settings, func(root *jsonedit.Object) error {
		servers, err := root.Object("mcpServers")
		if err != nil {
			return err
		}
		servers.Set("askd", jsonedit.NewObject().
			Set("httpUrl", o.base+"/mcp").
			Set("headers", jsonedit.NewObject().
				Set("Authorization", "Bearer ${ASKD_TOKEN}").
				Set("Askd-Session", "${ASKD_SESSION}")).
			Set("timeout", int(o.toolTimeout().Milliseconds())).
			Set("excludeTools", []any{"permission_prompt"}))
		hooks, err := root.Object("hooks")
		if err != nil {
			return err
		}
		if err := setHookGroup(hooks, "PreToolUse", qwenHook(o.gateCommand(app.CLIQwen), o.gateTimeout(), "askd: waiting for approval in the inbox")); err != nil {
			return err
		}
		return setHookGroup(hooks, "Stop", qwenHook(o.stopCommand(app.CLIQwen), o.stopTimeout(), "askd: checking for answers"))
	})
	if err != nil {
		return err
	}
	report.file(settings, backup, changed)
	if err := report.skill(filepath.Join(home, "skills", "askd", "SKILL.md"), "mcp__askd__"); err != nil {
		return err
	}
	printEnvNote(e, app.CLIQwen)
	fmt.Fprintln(e.Stdout, "Headless: qwen --yolo -p \"...\"   (askd's PreToolUse hook is then the only gate, and fails closed)")
	return nil
}

// qwenHook is one of askd's hooks in Qwen's settings: a command hook run
// with bash.
func qwenHook(command string, timeout time.Duration, status string) *jsonedit.Object {
	return jsonedit.NewObject().
		Set("type", "command").
		Set("command", command).
		Set("name", "askd").
		Set("timeout", qwenTimeout(timeout)).
		Set("statusMessage", status)
}

// qwenTimeout is a command hook's timeout as Qwen reads it: seconds below
// 1000, milliseconds from there.
func qwenTimeout(d time.Duration) int {
	if s := seconds(d); s < 1000 {
		return s
	}
	return int(d.Milliseconds())
}
