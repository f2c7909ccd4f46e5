package install

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/jsonedit"
)

const openCodeSynopsis = "[--scope project|user] [--dir DIR] " + agentSynopsis

// openCodePlugin is askd's OpenCode plugin (opencode_plugin.js): every tool
// call goes to askd's /hooks/opencode before it runs, and a deny, or no
// decision, throws.
//
//go:embed opencode_plugin.js
var openCodePlugin []byte

// installOpenCode wires askd into OpenCode, which runs no shell hooks: at
// project scope (default; OpenCode asks no trust for a project's config)
// opencode.json and .opencode/ in --dir, at user scope opencode.json and
// the directory beside it in $XDG_CONFIG_HOME/opencode, else
// ~/.config/opencode:
//
//   - opencode.json: mcp.askd, type remote, the token and session
//     {env:ASKD_TOKEN} and {env:ASKD_SESSION} (OpenCode expands them), a
//     timeout past askd's own (OpenCode's default is 5 s); askd's
//     permission_prompt turned off (tools);
//   - plugins/askd.js: askd's plugin, the permission gate
//     (tool.execute.before: throw = deny), which runs a person's edit;
//   - skills/askd/SKILL.md.
//
// OpenCode has no next-prompt hook (opencode run exits when the session
// is idle): askd opencode runs it and continues the session with each
// answer. A config of OpenCode's in opencode.jsonc is edited there when it
// holds plain JSON, else refused untouched (askd cannot keep comments).
// Every file changed is backed up beside itself first; every other entry
// stays.
func installOpenCode(e *cli.Env, args []string) error {
	fs := cli.Flags(e, "install opencode", openCodeSynopsis)
	scope := fs.String("scope", "project", "project: opencode.json and .opencode/ in --dir; user: $XDG_CONFIG_HOME/opencode (else ~/.config/opencode)")
	dir := fs.String("dir", ".", "the project directory (scope project)")
	parse := agentFlags(e, fs)
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	o, err := parse()
	if err != nil {
		return err
	}
	o.pinned = true // OpenCode's {env:...} has no default
	var configDir, filesDir string
	switch *scope {
	case "project":
		configDir, filesDir = *dir, filepath.Join(*dir, ".opencode")
	case "user":
		base := e.Getenv("XDG_CONFIG_HOME")
		if base == "" {
			home, err := homeDir(e)
			if err != nil {
				return err
			}
			base = filepath.Join(home, ".config")
		}
		configDir = filepath.Join(base, "opencode")
		filesDir = configDir
	default:
		return cli.UsageError(fmt.Sprintf("--scope: %q is not project or user", *scope))
	}
	report := changes{e}
	config, err := openCodeConfig(configDir)
	if err != nil {
		return err
	}
	changed, backup, err := editJSONFile(config, func(root *jsonedit.Object) error {
		servers, err := root.Object("mcp")
		if err != nil {
			return err
		}
		servers.Set("askd", jsonedit.NewObject().
			Set("type", "remote").
			Set("url", o.base+"/mcp").
			Set("headers", jsonedit.NewObject().
				Set("Authorization", "Bearer {env:ASKD_TOKEN}").
				Set("Askd-Session", "{env:ASKD_SESSION}")).
			Set("enabled", true).
			Set("timeout", int(o.toolTimeout().Milliseconds())))
		tools, err := root.Object("tools")
		if err != nil {
			return err
		}
		tools.Set("askd_permission_prompt", false) // Claude Code's permission contract
		return nil
	})
	if err != nil {
		return err
	}
	report.file(config, backup, changed)
	for _, f := range []struct {
		path string
		data []byte
	}{
		{filepath.Join(filesDir, "plugins", "askd.js"), openCodePlugin},
		{filepath.Join(filesDir, "skills", "askd", "SKILL.md"), skillFor("askd_")},
	} {
		changed, backup, err := writeFileWithBackup(f.path, f.data)
		if err != nil {
			return err
		}
		report.file(f.path, backup, changed)
	}
	printEnvNote(e, app.CLIOpenCode)
	fmt.Fprintln(e.Stdout, "Headless: askd opencode -- --auto \"...\"   (runs opencode run, and goes on with each answer; askd's plugin is then the only gate, and fails closed)")
	return nil
}

// openCodeConfig is the config file of OpenCode's in dir to edit:
// opencode.jsonc when only that one is there, else opencode.json.
func openCodeConfig(dir string) (string, error) {
	json, jsonc := filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc")
	if _, err := os.Stat(json); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return json, nil
	}
	if _, err := os.Stat(jsonc); err == nil {
		return jsonc, nil
	}
	return json, nil
}
