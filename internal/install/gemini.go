package install

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/jsonedit"
)

const geminiSynopsis = agentSynopsis

// installGemini wires askd into Gemini CLI, at user scope
// ($GEMINI_CLI_HOME/.gemini, else ~/.gemini), whose hooks run without the
// fingerprint trust a project's .gemini/settings.json hooks need. In
// settings.json:
//
//   - mcpServers.askd: httpUrl ${ASKD_URL:-URL}/mcp and headers, the token
//     and session references Gemini expands, permission_prompt excluded, a
//     timeout past askd's own;
//   - hooks.BeforeTool: under gemini --approval-mode yolo every tool call
//     comes to askd (without it, gemini -p offers the model no tool that
//     needs approval); Gemini cannot run a person's edit as edited (its
//     tool_input output merges, never takes a field out), so the card
//     offers no Edit;
//   - hooks.AfterAgent: an answer given after the turn becomes the next
//     prompt (decision deny, its reason the prompt);
//
// and skills/askd/SKILL.md. Gemini's hook timeouts are milliseconds. The
// file is backed up beside itself first; every other server, hook and
// setting stays.
//
// Install trusts no folder. Gemini CLI 0.61.0 will not start headless in a
// folder the person has not trusted (and would turn yolo back into its
// default mode there), so the headless line carries --skip-trust, which
// trusts the folder the run starts in for that run only: trust is the
// person's call on each repository (a trusted folder's .gemini/settings.json,
// hooks and .env load), and a trust entry written for the folder install
// ran in would make the line work there and nowhere else.
func installGemini(e *cli.Env, args []string) error {
	fs := cli.Flags(e, "install gemini", geminiSynopsis)
	parse := agentFlags(e, fs)
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	o, err := parse()
	if err != nil {
		return err
	}
	root := ""
	if v := e.Getenv("GEMINI_CLI_HOME"); v != "" {
		root = v
	} else if root, err = homeDir(e); err != nil {
		return err
	}
	dir := filepath.Join(root, ".gemini")
	report := changes{e}
	settings := filepath.Join(dir, "settings.json")
	changed, backup, err := editJSONFile(settings, func(root *jsonedit.Object) error {
		servers, err := root.Object("mcpServers")
		if err != nil {
			return err
		}
		servers.Set("askd", jsonedit.NewObject().
			Set("httpUrl", "${ASKD_URL:-"+o.base+"}/mcp").
			Set("headers", jsonedit.NewObject().
				Set("Authorization", "Bearer ${ASKD_TOKEN}").
				Set("Askd-Session", "${ASKD_SESSION:-}")).
			Set("timeout", int(o.toolTimeout().Milliseconds())).
			Set("excludeTools", []any{"permission_prompt"}))
		hooks, err := root.Object("hooks")
		if err != nil {
			return err
		}
		if err := setHookGroup(hooks, "BeforeTool", geminiHook(o.gateCommand(app.CLIGemini), o.gateTimeout(), "askd's approval: every tool call a person must allow waits in the askd inbox")); err != nil {
			return err
		}
		return setHookGroup(hooks, "AfterAgent", geminiHook(o.stopCommand(app.CLIGemini), o.stopTimeout(), "askd's answers: an answer given after the turn becomes the next prompt"))
	})
	if err != nil {
		return err
	}
	report.file(settings, backup, changed)
	if err := report.skill(filepath.Join(dir, "skills", "askd", "SKILL.md"), "mcp_askd_"); err != nil {
		return err
	}
	printEnvNote(e, app.CLIGemini)
	fmt.Fprintln(e.Stdout, "Headless: gemini --skip-trust --approval-mode yolo -p \"...\"   (--skip-trust: Gemini CLI trusts the folder for this run, without which it")
	fmt.Fprintln(e.Stdout, "will not start headless; askd's BeforeTool hook is then the only gate, and fails closed)")
	return nil
}

// geminiHook is one of askd's hooks in Gemini's settings: a command hook
// (run with bash -c), its timeout in milliseconds.
func geminiHook(command string, timeout time.Duration, description string) *jsonedit.Object {
	return jsonedit.NewObject().
		Set("type", "command").
		Set("command", command).
		Set("name", "askd").
		Set("timeout", int(timeout.Milliseconds())).
		Set("description", description)
}
