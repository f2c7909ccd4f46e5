package install

import (
	"fmt"
	"path/filepath"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/jsonedit"
)

const copilotSynopsis = agentSynopsis

// installCopilot wires askd into GitHub Copilot CLI, at user scope
// ($COPILOT_HOME, else ~/.copilot), where copilot -p runs hooks without a
// trusted folder (a repository's .github/hooks need one):
//
//   - mcp-config.json: askd's MCP server, type http, its token and session
//     ${ASKD_TOKEN} and ${ASKD_SESSION} (Copilot expands them), askd's five
//     tools (not permission_prompt), a timeout past askd's own;
//   - hooks/askd.json, a hook file of askd's own: permissionRequest (every
//     call Copilot would ask a person about becomes an approval; Copilot
//     runs no edited call, so the card offers no Edit) and agentStop (an
//     answer given after the turn becomes the next prompt), each with a
//     timeoutSec past askd's wait (Copilot's default is 30 s);
//   - skills/askd/SKILL.md: when to use which of askd's tools.
//
// Every file changed is backed up beside itself first; every other server,
// hook and setting stays.
func installCopilot(e *cli.Env, args []string) error {
	fs := cli.Flags(e, "install copilot", copilotSynopsis)
	parse := agentFlags(e, fs)
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	o, err := parse()
	if err != nil {
		return err
	}
	o.pinned = true // Copilot's url expands no ${ASKD_URL:-...}
	home, err := cliHome(e, "COPILOT_HOME", ".copilot")
	if err != nil {
		return err
	}
	report := changes{e}
	mcpFile := filepath.Join(home, "mcp-config.json")
	changed, backup, err := editJSONFile(mcpFile, func(root *jsonedit.Object) error {
		servers, err := root.Object("mcpServers")
		if err != nil {
			return err
		}
		servers.Set("askd", jsonedit.NewObject().
			Set("type", "http").
			Set("url", o.base+"/mcp").
			Set("headers", jsonedit.NewObject().
				Set("Authorization", "Bearer ${ASKD_TOKEN}").
				Set("Askd-Session", "${ASKD_SESSION}")).
			Set("tools", askdToolNames).
			Set("timeout", int(o.toolTimeout().Milliseconds())))
		return nil
	})
	if err != nil {
		return err
	}
	report.file(mcpFile, backup, changed)
	hooksFile := filepath.Join(home, "hooks", "askd.json")
	changed, backup, err = editJSONFile(hooksFile, func(root *jsonedit.Object) error {
		root.Set("version", 1)
		hooks, err := root.Object("hooks")
		if err != nil {
			return err
		}
		hooks.Set("permissionRequest", []any{copilotHook(o.gateCommand(app.CLICopilot), o.gateTimeout().Seconds())})
		hooks.Set("agentStop", []any{copilotHook(o.stopCommand(app.CLICopilot), o.stopTimeout().Seconds())})
		return nil
	})
	if err != nil {
		return err
	}
	report.file(hooksFile, backup, changed)
	if err := report.skill(filepath.Join(home, "skills", "askd", "SKILL.md"), "askd-"); err != nil {
		return err
	}
	printEnvNote(e, app.CLICopilot)
	fmt.Fprintln(e.Stdout, "Headless: copilot -p \"...\"")
	return nil
}

// copilotHook is one of askd's hooks in Copilot's hook file: a command run
// with bash, its timeout in seconds.
func copilotHook(command string, seconds float64) *jsonedit.Object {
	return jsonedit.NewObject().
		Set("type", "command").
		Set("bash", command).
		Set("timeoutSec", int(seconds))
}
