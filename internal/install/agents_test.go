package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/jsonedit"
	"github.com/askd-dev/askd/internal/testserver"
)

// agentHome gives the test a home directory of its own, with none of the
// CLIs' own variables that would move their settings elsewhere.
func agentHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, v := range []string{"COPILOT_HOME", "QWEN_HOME", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME"} {
		t.Setenv(v, "")
	}
	t.Setenv("ASKD_TOKEN", "askd_a_never_written")
	return home
}

// writeTree writes content to path, making its directories.
func writeTree(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// agentInstalls are, per CLI, the files askd install writes (relative to
// the home directory, or for OpenCode the project), and the user's own
// settings already in them.
var agentInstalls = []struct {
	cli   string
	args  []string
	files map[string]string // file: its golden file
	own   map[string]string // file: the user's settings before
}{
	{"copilot", nil,
		map[string]string{".copilot/mcp-config.json": "copilot-mcp-config.json", ".copilot/hooks/askd.json": "copilot-hooks.json"},
		map[string]string{".copilot/mcp-config.json": `{"mcpServers": {"github": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}, "tools": ["*"]}}}`}},
	{"qwen", nil,
		map[string]string{".qwen/settings.json": "qwen-settings.json"},
		map[string]string{".qwen/settings.json": `{
    "security": {"auth": {"selectedType": "openai"}},
    "mcpServers": {"fs": {"command": "mcp-fs", "args": ["/srv/repo"]}},
    "hooks": {
        "PreToolUse": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 10}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    },
    "model": {"name": "qwen3-coder"}
}
`}},
	{"gemini", []string{"--approval-timeout", "10m"},
		map[string]string{".gemini/settings.json": "gemini-settings.json"},
		map[string]string{".gemini/settings.json": `{"security": {"auth": {"selectedType": "gemini-api-key"}}, "hooks": {"BeforeTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5000}]}]}, "model": {"name": "gemini-2.5-pro"}}`}},
	{"opencode", []string{"--dir", "proj"},
		map[string]string{"proj/opencode.json": "opencode.json"},
		map[string]string{"proj/opencode.json": `{"$schema": "https://opencode.ai/config.json", "model": "fake/fake-model", "mcp": {"github": {"type": "remote", "url": "https://api.example.com/mcp"}}, "plugin": ["opencode-notifier"]}`}},
}

// TestInstallAgents runs `askd install copilot|qwen|gemini|opencode` twice
// where the user has settings of their own: theirs stay, in their order,
// askd's are added (golden files), each file changed has one backup beside
// it holding what was there, the second run changes nothing and backs up
// nothing, and no file holds the token.
func TestInstallAgents(t *testing.T) {
	testdata, err := filepath.Abs("testdata") // the tests run in the home directory
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range agentInstalls {
		t.Run(c.cli, func(t *testing.T) {
			home := agentHome(t)
			t.Chdir(home)
			for f, own := range c.own {
				writeTree(t, filepath.Join(home, f), own)
			}
			for i := range 2 {
				var out, errb bytes.Buffer
				if err := askdInstall(append([]string{c.cli}, c.args...), &out, &errb); err != nil {
					t.Fatalf("run %d: %v\n%s%s", i+1, err, out.String(), errb.String())
				}
				if i == 1 && (strings.Contains(out.String(), "wrote") || strings.Contains(out.String(), "backup")) {
					t.Fatalf("the second run changed files:\n%s", out.String())
				}
				for f, g := range c.files {
					got, err := os.ReadFile(filepath.Join(home, f))
					if err != nil {
						t.Fatal(err)
					}
					testserver.Golden(t, filepath.Join(testdata, g), got)
				}
			}
			for f, own := range c.own {
				b := backups(t, filepath.Join(home, f))
				if len(b) != 1 {
					t.Fatalf("%s: backups %v, want one", f, b)
				}
				if kept, _ := os.ReadFile(b[0]); string(kept) != own {
					t.Errorf("%s's backup holds %q, want what was there", f, kept)
				}
			}
			filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if data, _ := os.ReadFile(path); bytes.Contains(data, []byte("askd_a_")) {
						t.Errorf("%s holds the token", path)
					}
				}
				return err
			})
		})
	}
}

// TestInstallAgentsSkillAndPlugin: each CLI gets askd's skill, naming
// askd's tools as that CLI shows them to the model; OpenCode gets askd's
// plugin, which node parses.
func TestInstallAgentsSkillAndPlugin(t *testing.T) {
	home := agentHome(t)
	t.Chdir(home)
	for _, c := range []struct{ cli, skill, tool string }{
		{"copilot", ".copilot/skills/askd/SKILL.md", "**askd-ask_user_question**"},
		{"qwen", ".qwen/skills/askd/SKILL.md", "**mcp__askd__ask_user_question**"},
		{"gemini", ".gemini/skills/askd/SKILL.md", "**mcp_askd_ask_user_question**"},
		{"opencode", ".opencode/skills/askd/SKILL.md", "**askd_ask_user_question**"},
	} {
		var out bytes.Buffer
		if err := askdInstall([]string{c.cli}, &out, &out); err != nil {
			t.Fatalf("%s: %v\n%s", c.cli, err, out.String())
		}
		skill, err := os.ReadFile(filepath.Join(home, c.skill))
		if err != nil || !bytes.Contains(skill, []byte(c.tool)) || !bytes.HasPrefix(skill, []byte("---\nname: askd\n")) {
			t.Errorf("%s's skill: %v\n%s", c.cli, err, skill)
		}
	}
	plugin, err := os.ReadFile(filepath.Join(home, ".opencode/plugins/askd.js"))
	if err != nil || !bytes.Equal(plugin, openCodePlugin) {
		t.Fatalf("the plugin: %v", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	// As an ES module, which OpenCode loads it as.
	mjs := filepath.Join(t.TempDir(), "askd.mjs")
	writeTree(t, mjs, string(plugin))
	if out, err := exec.Command("node", "--check", mjs).CombinedOutput(); err != nil {
		t.Fatalf("node --check: %v\n%s", err, out)
	}
}

// TestInstallAgentsRefuseUnparsable: a settings file that is not one JSON
// object askd can edit (here, with a comment) is refused, left as it was,
// with no backup; the error names it.
func TestInstallAgentsRefuseUnparsable(t *testing.T) {
	for _, c := range []struct{ cli, file string }{
		{"copilot", ".copilot/hooks/askd.json"},
		{"qwen", ".qwen/settings.json"},
		{"gemini", ".gemini/settings.json"},
		{"opencode", "opencode.jsonc"},
	} {
		t.Run(c.cli, func(t *testing.T) {
			home := agentHome(t)
			t.Chdir(home)
			bad := "{\n  // mine\n  \"model\": \"m\"\n}\n"
			path := filepath.Join(home, c.file)
			writeTree(t, path, bad)
			var out bytes.Buffer
			err := askdInstall([]string{c.cli}, &out, &out)
			if err == nil || !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), "fix or move it") {
				t.Fatalf("err = %v, want a refusal naming %s", err, c.file)
			}
			if got, _ := os.ReadFile(path); string(got) != bad {
				t.Errorf("%s changed:\n%s", c.file, got)
			}
			if b := backups(t, path); len(b) != 0 {
				t.Errorf("backups %v", b)
			}
		})
	}
}

// TestInstallAgentsTimeouts: the hooks' timeouts follow the server's
// approval timeout and the stop wait, each a minute past what it covers,
// in each CLI's unit: Copilot seconds, Gemini milliseconds, Qwen seconds
// below 1000 and milliseconds from there (as Qwen reads them); askd hook's
// --timeout is the CLI's.
func TestInstallAgentsTimeouts(t *testing.T) {
	home := agentHome(t)
	args := []string{"--approval-timeout", "20m", "--stop-wait", "30m"}
	hookOf := func(file, event string, copilot bool) (command string, timeout float64) {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(home, file))
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Hooks map[string][]struct {
				Bash, Command string
				TimeoutSec    float64
				Timeout       float64
				Hooks         []struct {
					Command string
					Timeout float64
				}
			}
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			t.Fatal(err)
		}
		g := cfg.Hooks[event][len(cfg.Hooks[event])-1]
		if copilot {
			return g.Bash, g.TimeoutSec
		}
		return g.Hooks[0].Command, g.Hooks[0].Timeout
	}
	for _, c := range []struct {
		cli, file, gate, stop string
		copilot               bool
		gateTimeout, stopTime float64
	}{
		{"copilot", ".copilot/hooks/askd.json", "permissionRequest", "agentStop", true, 21 * 60, 31 * 60},
		{"qwen", ".qwen/settings.json", "PreToolUse", "Stop", false, 21 * 60_000, 31 * 60_000},
		{"gemini", ".gemini/settings.json", "BeforeTool", "AfterAgent", false, 21 * 60_000, 31 * 60_000},
	} {
		var out bytes.Buffer
		if err := askdInstall(append([]string{c.cli}, args...), &out, &out); err != nil {
			t.Fatalf("%s: %v\n%s", c.cli, err, out.String())
		}
		command, timeout := hookOf(c.file, c.gate, c.copilot)
		if timeout != c.gateTimeout || !strings.HasSuffix(command, "--event "+c.gate+" --timeout 21m") && !strings.Contains(command, "--event "+c.gate+" --url ") {
			t.Errorf("%s %s: %s, timeout %v; want %v", c.cli, c.gate, command, timeout, c.gateTimeout)
		}
		if !strings.HasSuffix(command, " --timeout 21m") {
			t.Errorf("%s %s: %s, want askd hook --timeout 21m", c.cli, c.gate, command)
		}
		command, timeout = hookOf(c.file, c.stop, c.copilot)
		if timeout != c.stopTime || !strings.HasSuffix(command, " --wait 30m --timeout 31m") {
			t.Errorf("%s %s: %s, timeout %v; want %v, --wait 30m --timeout 31m", c.cli, c.stop, command, timeout, c.stopTime)
		}
	}
	var out bytes.Buffer
	if err := askdInstall([]string{"qwen", "--approval-timeout", "5m", "--stop-wait", "0"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if command, timeout := hookOf(".qwen/settings.json", "Stop", false); timeout != 60 || !strings.HasSuffix(command, " --timeout 1m") || strings.Contains(command, "--wait") {
		t.Errorf("qwen Stop without a wait: %s, timeout %v; want 60 s", command, timeout)
	}
}

// TestInstalledAgentHooksRun runs each pre-tool and next-prompt hook
// command askd install writes for Copilot, Qwen and Gemini as the CLI does
// (bash -c; plain POSIX sh too), the real askd on PATH, against a
// stand-in askd: the CLI's input reaches /hooks/CLI with its event and
// askd's wait, and the reply is the hook's output. With askd down, the
// pre-tool hook is the CLI's deny, status 0; with askd off PATH too.
func TestInstalledAgentHooksRun(t *testing.T) {
	askd := testserver.Binary(t) // built before HOME moves, with the build cache under it
	home := agentHome(t)
	type seen struct{ uri, auth, session, body string }
	got := make(chan seen, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Askd-Session"), string(body)}
		io.WriteString(w, `{"decision":"allow"}`)
	}))
	t.Cleanup(srv.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	bin := t.TempDir()
	if err := os.Symlink(askd, filepath.Join(bin, "askd")); err != nil {
		t.Fatal(err)
	}
	var shells [][]string
	for _, sh := range [][]string{{"bash"}, {"sh"}, {"dash"}} {
		if _, err := exec.LookPath(sh[0]); err == nil {
			shells = append(shells, sh)
		}
	}
	input := `{"session_id":"x","hook_event_name":"E","tool_name":"run_shell_command","tool_input":{"command":"make deploy"}}`
	for _, c := range []struct {
		cli, file, gate, stop, deny string
		copilot                     bool
	}{
		{"copilot", ".copilot/hooks/askd.json", "permissionRequest", "agentStop", `"behavior":"deny"`, true},
		{"qwen", ".qwen/settings.json", "PreToolUse", "Stop", `"permissionDecision":"deny"`, false},
		{"gemini", ".gemini/settings.json", "BeforeTool", "AfterAgent", `"decision":"deny"`, false},
	} {
		for _, url := range []string{srv.URL, down} {
			var out bytes.Buffer
			if err := askdInstall([]string{c.cli, "--url", url}, &out, &out); err != nil {
				t.Fatalf("%s: %v\n%s", c.cli, err, out.String())
			}
			commands := hookCommands(t, filepath.Join(home, c.file), c.copilot)
			for _, sh := range shells {
				for _, event := range []string{c.gate, c.stop} {
					name := fmt.Sprintf("%s/%s/%s/%s", c.cli, sh[0], event, map[bool]string{true: "up", false: "down"}[url == srv.URL])
					t.Run(name, func(t *testing.T) {
						for _, onPath := range []bool{true, false} {
							cmd := exec.Command(sh[0], append(sh[1:], "-c", commands[event])...)
							path := "/usr/bin:/bin"
							if onPath {
								path = bin + ":" + path
							}
							cmd.Env = []string{"PATH=" + path, "ASKD_TOKEN=askd_a_test", "ASKD_SESSION=run-1"}
							cmd.Stdin = strings.NewReader(input)
							var stdout, stderr bytes.Buffer
							cmd.Stdout, cmd.Stderr = &stdout, &stderr
							_ = cmd.Run()
							status := cmd.ProcessState.ExitCode()
							switch {
							case event == c.gate && (url == down || !onPath):
								if status != 0 || !strings.Contains(stdout.String(), c.deny) {
									t.Errorf("on PATH %v: status %d, stdout %q, stderr %q; want the CLI's deny", onPath, status, stdout.String(), stderr.String())
								}
							case url == down || !onPath:
								if status != 1 || stdout.Len() != 0 {
									t.Errorf("on PATH %v: status %d, stdout %q, stderr %q; want a failure deciding nothing", onPath, status, stdout.String(), stderr.String())
								}
							default:
								if status != 0 || stdout.String() != "{\"decision\":\"allow\"}\n" {
									t.Errorf("status %d, stdout %q, stderr %q", status, stdout.String(), stderr.String())
								}
								s := <-got
								if !strings.HasPrefix(s.uri, "/hooks/"+c.cli+"?event="+event+"&wait=") || s.auth != "Bearer askd_a_test" || s.session != "run-1" || s.body != input {
									t.Errorf("the server saw %+v", s)
								}
							}
						}
					})
				}
			}
		}
	}
}

// hookCommands reads askd's hook command of each event from a CLI's file.
func hookCommands(t *testing.T, file string, copilot bool) map[string]string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	root, err := jsonedit.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	hooks, _ := root.Object("hooks")
	out := map[string]string{}
	for _, event := range hooks.Keys() {
		groups, _ := hooks.Array(event)
		for _, g := range groups {
			gm := g.(*jsonedit.Object)
			if copilot {
				cmd, _ := gm.Get("bash")
				out[event] = cmd.(string)
				continue
			}
			list, _ := gm.Array("hooks")
			for _, h := range list {
				if hm := h.(*jsonedit.Object); isAskdHook(hm) {
					cmd, _ := hm.Get("command")
					out[event] = cmd.(string)
				}
			}
		}
	}
	if keys := slices.Sorted(func(yield func(string) bool) {
		for k := range out {
			if !yield(k) {
				return
			}
		}
	}); len(keys) != 2 {
		t.Fatalf("%s: askd's hooks %v, want two", file, keys)
	}
	return out
}
