package agentcli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/testserver"
)

// The other CLIs the tests run, pinned: the versions SPEC §18 and
// ../shared/reference/other-clis.md describe.
const (
	copilotPackage  = "@github/copilot@1.0.102"
	qwenPackage     = "@qwen-code/qwen-code@0.24.4"
	geminiPackage   = testserver.GeminiCLIPackage
	opencodePackage = "opencode-ai@1.18.33"
)

// agent is one of the CLIs SPEC §18 wires, as a test runs it headless:
// its package, what a person set up for it before askd (the scripted
// model), and the names its model calls tools by.
type agent struct {
	name     string // as askd install and askd hook --cli name it
	title    string // as people know it, and askd's words to the model name it
	pkg, bin string
	node     int // the oldest Node major version its package accepts (engines), 0 for a native binary
	// yolo: its headless line runs every tool without asking, so askd's
	// pre-tool hook is the only gate (SPEC §18: it fails closed).
	yolo bool
	// runsEdits: it runs a call with the input a person edited (SPEC
	// §18), so its approvals offer Edit.
	runsEdits bool
	// tool is the model-facing name of askd's MCP tool t.
	tool func(t string) string
	// shell is the model-facing name of the CLI's shell tool, and
	// shellInput its arguments for a command line.
	shell      string
	shellInput func(command string) map[string]any
	// setUp writes what a person has before installing askd: the CLI
	// pointed at the scripted model (files in home; env the rest).
	setUp func(t *testing.T, home string, model *modelScript) (env []string)
	// prepare, when set, gives a wired home and project what the CLI
	// would fetch on its first start there, from a copy shared by every
	// run: a test's home is new each time.
	prepare func(t *testing.T, home, project string)
	// headless is the CLI's own headless run, its arguments before the
	// prompt: README's line, or for OpenCode what askd opencode runs.
	headless []string
	// readme is the headless line README gives, the prompt last: the
	// CLI's own (headless), or for OpenCode askd's wrapper.
	readme []string
}

// args is the CLI's own headless run of prompt.
func (a *agent) args(prompt string) []string {
	return append(append([]string{}, a.headless...), prompt)
}

var copilot = &agent{
	name: "copilot", title: "Copilot CLI", pkg: copilotPackage, bin: "copilot",
	tool:  func(t string) string { return "askd-" + t },
	shell: "bash", shellInput: func(c string) map[string]any {
		return map[string]any{"command": c, "description": "Run the command"}
	},
	setUp: func(t *testing.T, home string, model *modelScript) []string {
		return []string{
			"COPILOT_PROVIDER_BASE_URL=" + model.chatURL(),
			"COPILOT_PROVIDER_API_KEY=scripted",
			"COPILOT_MODEL=scripted-model",
			"COPILOT_OFFLINE=true",
			"COPILOT_AUTO_UPDATE=false",
			"XDG_CACHE_HOME=" + copilotCache(t),
		}
	},
	headless: []string{"-p"},
	readme:   []string{"copilot", "-p"},
}

var qwen = &agent{
	name: "qwen", title: "Qwen Code", pkg: qwenPackage, bin: "qwen", node: 22, yolo: true,
	tool:  func(t string) string { return "mcp__askd__" + t },
	shell: "run_shell_command", shellInput: func(c string) map[string]any {
		return map[string]any{"command": c, "description": "Run the command", "is_background": false}
	},
	setUp: func(t *testing.T, home string, model *modelScript) []string {
		writeJSONFile(t, filepath.Join(home, ".qwen", "settings.json"), map[string]any{
			"security": map[string]any{"auth": map[string]any{"selectedType": "openai"}},
			"general":  map[string]any{"enableAutoUpdate": false},
			"privacy":  map[string]any{"usageStatisticsEnabled": false},
		})
		return []string{"OPENAI_BASE_URL=" + model.chatURL(), "OPENAI_API_KEY=scripted", "OPENAI_MODEL=scripted-model",
			// Qwen Code starts Node again with a larger heap, a second
			// start of about a second of CPU that a short run does not need.
			"QWEN_CODE_NO_RELAUNCH=true"}
	},
	headless: []string{"--yolo", "-p"},
	readme:   []string{"qwen", "--yolo", "-p"},
}

var gemini = &agent{
	name: "gemini", title: "Gemini CLI", pkg: geminiPackage, bin: "gemini", node: 20, yolo: true,
	tool:  func(t string) string { return "mcp_askd_" + t },
	shell: "run_shell_command", shellInput: func(c string) map[string]any {
		return map[string]any{"command": c, "description": "Run the command"}
	},
	setUp: func(t *testing.T, home string, model *modelScript) []string {
		writeJSONFile(t, filepath.Join(home, ".gemini", "settings.json"), map[string]any{
			"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
			"model":     map[string]any{"name": "gemini-2.5-flash"},
			"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
			"privacy":   map[string]any{"usageStatisticsEnabled": false},
			"telemetry": map[string]any{"enabled": false},
		})
		return []string{"GOOGLE_GEMINI_BASE_URL=" + model.geminiURL(), "GEMINI_API_KEY=scripted",
			"GEMINI_CLI_NO_RELAUNCH=true"} // as Qwen Code, its fork, does
	},
	// --skip-trust: Gemini CLI will not start headless in a folder not
	// trusted, and install trusts none (docs/clients.md).
	headless: []string{"--skip-trust", "--approval-mode", "yolo", "-p"},
	readme:   []string{"gemini", "--skip-trust", "--approval-mode", "yolo", "-p"},
}

var opencode = &agent{
	name: "opencode", title: "OpenCode", pkg: opencodePackage, bin: "opencode", yolo: true, runsEdits: true,
	tool:  func(t string) string { return "askd_" + t },
	shell: "bash", shellInput: func(c string) map[string]any {
		return map[string]any{"command": c, "description": "Run the command"}
	},
	setUp: func(t *testing.T, home string, model *modelScript) []string {
		writeJSONFile(t, filepath.Join(home, ".config", "opencode", "opencode.json"), map[string]any{
			"$schema": "https://opencode.ai/config.json",
			"model":   "scripted/scripted-model",
			"provider": map[string]any{"scripted": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "Scripted",
				"options": map[string]any{"baseURL": model.chatURL(), "apiKey": "scripted"},
				"models":  map[string]any{"scripted-model": map[string]any{"name": "Scripted model"}},
			}},
			"autoupdate": false,
			"share":      "disabled",
		})
		return []string{"OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_SHARE=1"}
	},
	prepare: func(t *testing.T, home, project string) {
		for _, dir := range []string{filepath.Join(home, ".config", "opencode"), filepath.Join(project, ".opencode")} {
			opencodePluginDeps(t, dir)
		}
	},
	headless: []string{"run", "--auto"},
	readme:   []string{"askd", "opencode", "--", "--auto"},
}

// otherAgents are the CLIs of SPEC §18, in the order the tests run them.
var otherAgents = []*agent{copilot, qwen, gemini, opencode}

// path installs the agent's package (once per run, shared with every test
// package: testserver.NPM) and returns the path of its command.
func (a *agent) path(t *testing.T) string {
	t.Helper()
	return installCLI(t, a.pkg, a.bin)
}

// nodePackage is the Node a CLI runs on when the system's is older than
// its package accepts.
const nodePackage = "node@22.23.3"

// pathDirs are the directories to put first on the CLI's PATH: where the
// Node its package accepts is, when the system's is older (npm installs
// such a package with a warning, and some of them then fail).
func (a *agent) pathDirs(t *testing.T) []string {
	t.Helper()
	if a.node == 0 || systemNode(t) >= a.node {
		return nil
	}
	return []string{filepath.Join(testserver.NPM(t, nodePackage), "node_modules", ".bin")}
}

// systemNode is the major version of the node on PATH.
func systemNode(t *testing.T) int {
	t.Helper()
	systemNodeOnce.Do(func() {
		out, err := exec.Command("node", "--version").Output()
		if err != nil {
			systemNodeErr = err
			return
		}
		_, systemNodeErr = fmt.Sscanf(string(out), "v%d.", &systemNodeMajor)
	})
	if systemNodeErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node is required in CI: %v", systemNodeErr)
		}
		t.Skipf("SKIPPING: node --version: %v; CI runs this test", systemNodeErr)
	}
	return systemNodeMajor
}

var (
	systemNodeOnce  sync.Once
	systemNodeMajor int
	systemNodeErr   error
)

// copilotCache is the XDG cache directory for Copilot's runs: its native
// binary unpacks itself (about 235 MB) into $XDG_CACHE_HOME/copilot on its
// first run, so every run shares one beside the npm install, unpacked once
// per machine, not once per home.
func copilotCache(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(testserver.NPM(t, copilotPackage), "xdg-cache")
	copilotUnpack.Do(func() {
		// One first run, before the tests run it side by side.
		cmd := exec.Command(installCLI(t, copilotPackage, "copilot"), "--version")
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+dir, "COPILOT_AUTO_UPDATE=false")
		copilotUnpackOut, copilotUnpackErr = cmd.CombinedOutput()
	})
	if copilotUnpackErr != nil {
		t.Fatalf("copilot --version: %v\n%s", copilotUnpackErr, copilotUnpackOut)
	}
	return dir
}

var (
	copilotUnpack    sync.Once
	copilotUnpackOut []byte
	copilotUnpackErr error
)

// opencodePluginPackage is the package OpenCode installs into each of its
// config directories (npm install, from the registry) on its first start
// there, and waits for before it loads plugins from them.
const opencodePluginPackage = "@opencode-ai/plugin@1.18.33"

// opencodePluginDeps gives OpenCode's config directory dir, if it exists,
// the plugin package OpenCode would install there itself (about 64 MB, 5
// to 20 seconds), from one install shared by every run: its package.json
// and package-lock.json (by which OpenCode finds it installed) and its
// node_modules as a link. A directory that has a package.json of its own
// is left as it is.
func opencodePluginDeps(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(dir); err != nil {
		return
	}
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err == nil {
		return
	}
	shared := testserver.NPM(t, opencodePluginPackage)
	for _, f := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(shared, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(shared, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
}

// runOpts says how a CLI runs: against which askd, and whether askd is on
// its PATH.
type runOpts struct {
	url, token string
	noAskd     bool // askd not on PATH
}

// cliEnv is the whole environment a CLI runs in, in session: only what a
// person who followed README has (PATH with askd and the CLI on it,
// HOME, the askd variables), and model, what points the CLI at its
// scripted model.
func cliEnv(t *testing.T, a *agent, home, session string, o runOpts, model []string) []string {
	t.Helper()
	path := append(a.pathDirs(t), filepath.Dir(a.path(t)))
	if !o.noAskd {
		path = append(path, filepath.Dir(testserver.Binary(t)))
	}
	path = append(path, pathWithout())
	env := []string{
		"PATH=" + strings.Join(path, string(os.PathListSeparator)),
		"HOME=" + home,
		"ASKD_URL=" + o.url,
		"ASKD_TOKEN=" + o.token,
		"ASKD_SESSION=" + session,
	}
	return append(env, model...)
}

// agentRun is one headless run of a CLI.
type agentRun struct {
	name    string
	cmd     *exec.Cmd
	out     testserver.SyncBuffer // stdout and stderr
	started time.Time
	exited  chan struct{} // closed when the process has ended; then err and ended are set
	err     error
	ended   time.Time
}

// startAgent runs the CLI at bin with args in dir, in env (the whole
// environment), until it ends or the test does.
func startAgent(t *testing.T, name, bin string, args []string, dir string, env []string) *agentRun {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	r := &agentRun{name: name, cmd: cmd, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &r.out, &r.out
	cmd.Stdin = nil // /dev/null: some read a prompt from stdin otherwise
	r.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = cmd.Wait()
		r.ended = time.Now()
		close(r.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-r.exited
		if t.Failed() {
			t.Logf("%s output:\n%s", name, r.out.String())
		}
	})
	return r
}

// cpu is the processor time the run took, its own and its children's,
// once it has ended: a figure that a busy machine does not inflate as it
// does the wall clock.
func (r *agentRun) cpu() time.Duration {
	<-r.exited
	return r.cmd.ProcessState.UserTime() + r.cmd.ProcessState.SystemTime()
}

func (r *agentRun) hasExited() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// end waits for the run to end and returns how long it ran and how it
// ended (nil: exit status 0).
func (r *agentRun) end(t *testing.T) (time.Duration, error) {
	t.Helper()
	select {
	case <-r.exited:
	case <-time.After(4 * time.Minute):
		t.Fatalf("%s did not end\n%s", r.name, r.out.String())
	}
	return r.ended.Sub(r.started), r.err
}

// wait waits for the run to end, fails the test unless it ended with
// status 0, and returns how long it ran.
func (r *agentRun) wait(t *testing.T) time.Duration {
	t.Helper()
	d, err := r.end(t)
	if err != nil {
		t.Fatalf("%s: %v\n%s", r.name, err, r.out.String())
	}
	return d
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// pathWithout is PATH without any directory holding an askd command: the
// CLI's world when askd is not installed.
func pathWithout() string {
	var dirs []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "askd")); err == nil {
			continue
		}
		dirs = append(dirs, d)
	}
	return strings.Join(dirs, string(os.PathListSeparator))
}
