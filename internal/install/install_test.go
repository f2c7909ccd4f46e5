package install

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/httpapi"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/pelletier/go-toml/v2"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.RemoveBinary()
	os.Exit(code)
}

// askdInstall runs askd install with args, as askd's main does: no input,
// the test's environment.
func askdInstall(args []string, stdout, stderr io.Writer) error {
	e := &cli.Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, Getenv: os.Getenv}
	return Command(context.Background(), e, args)
}

// TestInstallClaude runs `askd install claude` twice in a project that
// already has the user's own MCP server and hooks, keys not sorted: both
// stay, in their order, askd's entries are added once, and the second run
// changes nothing (golden files).
func TestInstallClaude(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".mcp.json", `{"mcpServers": {"github": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}}}`)
	write(".claude/settings.json", `{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check-bash.sh"}]}]
  },
  "model": "opus",
  "env": {"NODE_ENV": "test", "DEBUG": "1"}
}`)
	for i := range 2 {
		var out, errb bytes.Buffer
		err := askdInstall([]string{"claude", "--dir", dir, "--url", "http://127.0.0.1:7777"}, &out, &errb)
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, errb.String())
		}
		if i == 1 && strings.Contains(out.String(), "wrote") {
			t.Fatalf("second run changed files:\n%s", out.String())
		}
		for _, f := range []struct{ file, golden string }{
			{".mcp.json", "mcp.json"},
			{".claude/settings.json", "settings.json"},
			{".claude/skills/askd/SKILL.md", "SKILL.md"},
		} {
			got, err := os.ReadFile(filepath.Join(dir, f.file))
			if err != nil {
				t.Fatal(err)
			}
			testserver.Golden(t, filepath.Join("testdata", f.golden), got)
		}
	}
	settings, _ := os.ReadFile(filepath.Join(dir, ".claude/settings.json"))
	for _, secret := range []string{"askd_a_", "askd_h_"} {
		if bytes.Contains(settings, []byte(secret)) {
			t.Fatal("a token was written into settings.json")
		}
	}
}

// TestInstallClaudeStopWait: the Stop hook's --wait follows --stop-wait, and
// Claude's timeout for that hook outlives the wait (the other hooks keep 600).
func TestInstallClaudeStopWait(t *testing.T) {
	cases := []struct {
		name        string
		wait        string
		hook        string
		stopTimeout float64
	}{
		{"no wait", "0", "exec askd hook", 600},
		{"short wait", "2m", "exec askd hook --wait 2m", 600},
		{"ten minutes", "10m", "exec askd hook --wait 10m", 660},
		{"half an hour", "30m", "exec askd hook --wait 30m", 1860},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			if err := askdInstall([]string{"claude", "--dir", dir, "--stop-wait", c.wait}, &out, &out); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			for event, h := range claudeHooks(t, dir) {
				want, wantTimeout := "exec askd hook", float64(600)
				if event == "Stop" {
					want, wantTimeout = c.hook, c.stopTimeout
				}
				if !strings.HasSuffix(h.Command, "; "+want) || h.Timeout != wantTimeout {
					t.Errorf("%s hook: %s timeout %v, want it to end %q, timeout %v", event, h.Command, h.Timeout, want, wantTimeout)
				}
			}
		})
	}
}

type claudeHook struct {
	Type    string  `json:"type"`
	Command string  `json:"command"`
	Timeout float64 `json:"timeout"`
}

// claudeHooks reads the project's .claude/settings.json and returns, per
// event, the hook of its first group.
func claudeHooks(t *testing.T, dir string) map[string]claudeHook {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []claudeHook `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(data, &settings); err != nil {
		t.Fatal(err)
	}
	hooks := map[string]claudeHook{}
	for event, groups := range settings.Hooks {
		hooks[event] = groups[0].Hooks[0]
	}
	return hooks
}

// TestInstalledHooksRunUnderPOSIXShells runs each hook command askd install
// claude and askd install codex write as the agents do, with sh -c (Claude
// Code 2.1.328 runs command hooks with /bin/sh, dash on Debian and Ubuntu),
// under every POSIX shell found here, the hook input on stdin, the real askd
// on PATH, against stand-in servers: with ASKD_URL set the hooks reach it,
// without it --url's server; the token, session and input arrive, the
// reply is the hook's output; an HTTP error, input that is not JSON and askd
// missing from PATH are each a failure with a line on stderr and status 1,
// never 2 (a blocking decision to both agents). The token is never among
// any process's arguments.
func TestInstalledHooksRunUnderPOSIXShells(t *testing.T) {
	var shells [][]string
	for _, sh := range [][]string{{"sh"}, {"dash"}, {"bash", "--posix"}, {"busybox", "sh"}, {"zsh"}} {
		if _, err := exec.LookPath(sh[0]); err == nil {
			shells = append(shells, sh)
		}
	}
	if len(shells) == 0 {
		t.Fatal("no shell found")
	}
	// An askd in front of the real one writes down its arguments: the token
	// must not be among them (ps shows them to every user).
	bin := t.TempDir()
	argv := filepath.Join(bin, "argv")
	wrapper := "#!/bin/sh\nprintf '%s\\n' \"$@\" >> " + argv + "\nexec " + testserver.Binary(t) + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "askd"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		args, err := os.ReadFile(argv)
		if err != nil || len(args) == 0 {
			t.Errorf("askd's arguments were not recorded: %v", err)
		}
		if strings.Contains(string(args), "askd_a_test") {
			t.Errorf("the token is among askd's arguments:\n%s", args)
		}
	})
	type seen struct{ uri, auth, session, body string }
	reply := `{"decision":"block","reason":"The person answered: ship it"}`
	server := func(status int) (*httptest.Server, <-chan seen) {
		got := make(chan seen, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			got <- seen{r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("Askd-Session"), string(body)}
			w.WriteHeader(status)
			if status == http.StatusOK {
				fmt.Fprint(w, reply)
			} else {
				fmt.Fprint(w, `{"error":"unauthorized: no such token","code":"unauthorized"}`)
			}
		}))
		t.Cleanup(srv.Close)
		return srv, got
	}
	installed, atInstalled := server(http.StatusOK)
	moved, atMoved := server(http.StatusOK)
	refusing, atRefusing := server(http.StatusUnauthorized)

	dir := t.TempDir()
	var out bytes.Buffer
	if err := askdInstall([]string{"claude", "--dir", dir, "--url", installed.URL, "--stop-wait", "10m", "--elicitation"}, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	commands := map[string]string{}
	for event, h := range claudeHooks(t, dir) {
		commands["claude "+event] = h.Command
	}
	out.Reset()
	if err := askdInstall([]string{"codex", "--print", "--url", installed.URL, "--stop-wait", "10m"}, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	commands["codex Stop"] = flattenTOML(t, out.String())["hooks.Stop#0.hooks#0.command"]

	input := `{"session_id":"c-1","hook_event_name":"Stop","stop_hook_active":false}`
	cases := []struct {
		name, askdURL, input string
		noAskd               bool
		at                   <-chan seen
		status               int
		stdout, stderr       string
	}{
		{name: "ASKD_URL unset", input: input, at: atInstalled, stdout: reply + "\n"},
		{name: "ASKD_URL set", askdURL: moved.URL, input: input, at: atMoved, stdout: reply + "\n"},
		{name: "HTTP error", askdURL: refusing.URL, input: input, at: atRefusing, status: 1, stderr: "askd: hook: unauthorized: no such token"},
		{name: "input not JSON", askdURL: moved.URL, input: "{", status: 1, stderr: "askd: hook: the hook input on stdin is not JSON"},
		{name: "askd not on PATH", askdURL: moved.URL, input: input, noAskd: true, status: 1, stderr: "askd hook: askd is not on PATH"},
	}
	for what, command := range commands {
		query := ""
		if strings.HasSuffix(what, "Stop") {
			query = "?wait=10m0s"
		}
		for _, sh := range shells {
			for _, c := range cases {
				t.Run(what+"/"+strings.Join(sh, " ")+"/"+c.name, func(t *testing.T) {
					cmd := exec.Command(sh[0], append(sh[1:], "-c", command)...)
					path := bin + string(os.PathListSeparator) + "/usr/bin:/bin"
					if c.noAskd {
						path = "/usr/bin:/bin"
					}
					cmd.Env = []string{"PATH=" + path, "ASKD_TOKEN=askd_a_test", "ASKD_SESSION=fix-login"}
					if c.askdURL != "" {
						cmd.Env = append(cmd.Env, "ASKD_URL="+c.askdURL)
					}
					cmd.Stdin = strings.NewReader(c.input)
					var stdout, stderr bytes.Buffer
					cmd.Stdout, cmd.Stderr = &stdout, &stderr
					err := cmd.Run()
					status := cmd.ProcessState.ExitCode()
					if status != c.status || stdout.String() != c.stdout || !strings.Contains(stderr.String(), c.stderr) {
						t.Errorf("%s: status %d (%v), stdout %q, stderr %q; want %d, %q and stderr holding %q", command, status, err, stdout.String(), stderr.String(), c.status, c.stdout, c.stderr)
					}
					if c.at == nil {
						return
					}
					want := seen{"/hooks/claude" + query, "Bearer askd_a_test", "fix-login", input}
					select {
					case s := <-c.at:
						if s != want {
							t.Errorf("server saw %+v, want %+v", s, want)
						}
					default:
						t.Errorf("the hook did not reach %s", c.name)
					}
				})
			}
		}
	}
}

func TestInstallClaudeUserScope(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	var out bytes.Buffer
	if err := askdInstall([]string{"claude", "--scope", "user"}, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, f := range []string{".claude.json", ".claude/settings.json", ".claude/skills/askd/SKILL.md"} {
		if _, err := os.Stat(filepath.Join(home, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestInstallCodex(t *testing.T) {
	var out bytes.Buffer
	if err := askdInstall([]string{"codex", "--print", "--url", "http://askd.internal:7777/", "--question-timeout", "10m"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	testserver.Golden(t, filepath.Join("testdata", "codex.toml"), out.Bytes())
}

// TestInstallCodexBlock checks what `askd install codex --print` prints, per flag:
// it parses as TOML, hides permission_prompt, and its tool timeout, Stop hook
// wait and hook timeout follow the flags, each a minute past what it covers.
func TestInstallCodexBlock(t *testing.T) {
	cases := []struct {
		name             string
		args             []string
		mcpURL, stopHook string
		toolTimeout      int
		stopWait         time.Duration
		stopHookTimeout  int
	}{
		{"defaults", nil,
			"http://127.0.0.1:7777/mcp", "exec askd hook --wait 5m", 360, 5 * time.Minute, 360},
		{"question timeout", []string{"--question-timeout", "10m"},
			"http://127.0.0.1:7777/mcp", "exec askd hook --wait 10m", 660, 10 * time.Minute, 660},
		{"approval timeout longer", []string{"--approval-timeout", "20m"},
			"http://127.0.0.1:7777/mcp", "exec askd hook --wait 20m", 1260, 20 * time.Minute, 1260},
		{"stop wait", []string{"--stop-wait", "90s"},
			"http://127.0.0.1:7777/mcp", "exec askd hook --wait 1m30s", 360, 90 * time.Second, 150},
		{"no stop wait", []string{"--stop-wait", "0"},
			"http://127.0.0.1:7777/mcp", "exec askd hook", 360, 0, 60},
		{"url", []string{"--url", "https://askd.example.com/", "--question-timeout", "2m", "--approval-timeout", "1m"},
			"https://askd.example.com/mcp", "exec askd hook --default-url 'https://askd.example.com' --wait 2m", 180, 2 * time.Minute, 180},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if err := askdInstall(append([]string{"codex", "--print"}, c.args...), &out, &errb); err != nil {
				t.Fatalf("%v\n%s", err, errb.String())
			}
			got := flattenTOML(t, out.String())
			want := map[string]string{
				"mcp_servers.askd.url":                           c.mcpURL,
				"mcp_servers.askd.bearer_token_env_var":          "ASKD_TOKEN",
				"mcp_servers.askd.env_http_headers.Askd-Session": "ASKD_SESSION",
				"mcp_servers.askd.startup_timeout_sec":           "20",
				"mcp_servers.askd.tool_timeout_sec":              strconv.Itoa(c.toolTimeout),
				"mcp_servers.askd.disabled_tools":                `["permission_prompt"]`,
				"mcp_servers.askd.default_tools_approval_mode":   "approve",
				"hooks.Stop#0.hooks#0.type":                      "command",
				"hooks.Stop#0.hooks#0.timeout":                   strconv.Itoa(c.stopHookTimeout),
				"hooks.Stop#0.hooks#0.statusMessage":             "askd: checking for answers",
			}
			if command := got["hooks.Stop#0.hooks#0.command"]; !strings.HasSuffix(command, "; "+c.stopHook) {
				t.Errorf("hooks.Stop#0.hooks#0.command = %q, want it to end %q", command, c.stopHook)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok && k != "hooks.Stop#0.hooks#0.command" {
					t.Errorf("unexpected key %s = %q", k, got[k])
				}
			}
			// The wait is one askd hook takes, and the one asked for.
			_, arg, _ := strings.Cut(c.stopHook, "--wait ")
			if arg == "" {
				arg = "0s"
			}
			wait, err := time.ParseDuration(arg)
			if err != nil || wait != c.stopWait {
				t.Errorf("--wait reads as %s (%v), want %s", wait, err, c.stopWait)
			}
			if _, err := httpapi.ParseWait(wait.String()); err != nil {
				t.Errorf("askd's hook endpoint refuses ?wait=%s: %v", wait, err)
			}
		})
	}
}

func TestInstallCodexRefuses(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"quote in url", []string{"--url", "http://askd'.example"}, "--url"},
		{"dollar in url", []string{"--url", "http://askd.example/$HOME"}, "--url"},
		{"space in url", []string{"--url", "http://askd.example/a b"}, "--url"},
		{"not http", []string{"--url", "ftp://askd.example"}, "--url"},
		{"wait above the hook endpoint's limit", []string{"--stop-wait", "2h"}, "--stop-wait: 2h, must be 0 to 1h"},
		{"negative wait", []string{"--stop-wait", "-1s"}, "--stop-wait"},
		{"extra argument", []string{"now"}, "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			config := filepath.Join(t.TempDir(), "config.toml")
			var out bytes.Buffer
			err := askdInstall(append([]string{"codex", "--config", config}, c.args...), &out, &out)
			var u cli.UsageError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a usage error naming %q", err, c.want)
			}
			if out.Len() > 0 {
				t.Errorf("printed something anyway:\n%s", out.String())
			}
			if _, err := os.Stat(config); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("wrote %s anyway (%v)", config, err)
			}
		})
	}
}

// flattenTOML parses text with the TOML library and returns its values by
// dotted key: the n-th table of an array of tables is name#n, strings are
// unquoted, other scalars as %v prints them, other arrays as JSON.
func flattenTOML(t *testing.T, text string) map[string]string {
	t.Helper()
	var doc map[string]any
	if err := toml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("not TOML: %v\n%s", err, text)
	}
	flat := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(prefix+"."+k, e)
			}
		case []any:
			if len(v) > 0 {
				if _, tables := v[0].(map[string]any); tables {
					for i, e := range v {
						walk(fmt.Sprintf("%s#%d", prefix, i), e)
					}
					return
				}
			}
			data, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			flat[prefix[1:]] = string(data)
		case string:
			flat[prefix[1:]] = v
		default:
			flat[prefix[1:]] = fmt.Sprint(v)
		}
	}
	walk("", doc)
	return flat
}

// TestInstallHelp: `askd install -h` prints every subcommand's usage on
// stdout and exits 0, as their own -h does with their flags; a missing or
// unknown agent or a bad flag is a usage mistake: one line, exit status 2.
func TestInstallHelp(t *testing.T) {
	cases := []struct {
		name   string
		args   []string
		status int
		want   []string // on stdout, or for a mistake in the error
	}{
		{"-h", []string{"-h"}, 0, []string{"Usage: askd install", "askd install claude [--scope", "askd install codex [--config PATH] [--print]", "askd install mcp-gate --config FILE --server KEY", "askd install git-gate [--ref PATTERN]"}},
		{"--help", []string{"--help"}, 0, []string{"askd install claude", "askd install codex"}},
		{"help", []string{"help"}, 0, []string{"askd install claude", "askd install codex"}},
		{"claude -h", []string{"claude", "-h"}, 0, []string{"Usage: askd install claude", "--scope", "--stop-wait", "--url", "--elicitation", "--elicitation-timeout"}},
		{"codex --help", []string{"codex", "--help"}, 0, []string{"Usage: askd install codex", "--config", "--print", "--stop-wait"}},
		{"git-gate -h", []string{"git-gate", "-h"}, 0, []string{"Usage: askd install git-gate", "--ref", "--url", "--token"}},
		{"mcp-gate -h", []string{"mcp-gate", "-h"}, 0, []string{"Usage: askd install mcp-gate", "--config", "--server", "--allow", "--undo", "--client", "--token-file",
			"Claude Desktop  claude_desktop_config.json", "VS Code         .vscode/mcp.json (JSONC)", "--undo puts it\nback byte for byte"}},
		{"no agent", nil, 2, []string{"say what to wire askd into, claude, codex, mcp-gate or git-gate"}},
		{"another agent", []string{"cursor"}, 2, []string{`"cursor" is not claude, codex, mcp-gate or git-gate`}},
		{"an unknown flag", []string{"codex", "--nope"}, 2, []string{"--nope"}},
		{"a bad flag value", []string{"claude", "--stop-wait", "soon"}, 2, []string{"--stop-wait"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("CODEX_HOME", t.TempDir())
			var out, errb bytes.Buffer
			err := askdInstall(c.args, &out, &errb)
			if status := cli.ExitCode(err); status != c.status {
				t.Errorf("exit status %d (%v), want %d", status, err, c.status)
			}
			text := out.String()
			if c.status != 0 {
				if out.Len() > 0 || errb.Len() > 0 || strings.Contains(err.Error(), "\n") {
					t.Errorf("a mistake printed %q and %q, error %q; want one line and nothing else", out.String(), errb.String(), err)
				}
				text = err.Error()
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("%q lacks %q", text, w)
				}
			}
		})
	}
}

// TestInstallClaudeChannel: --channel makes askd's MCP server the askd mcp
// bridge over stdio, replaces askd's PermissionRequest hook an earlier
// install wrote by one that takes only the prompts a policy covers (the
// channel relays the others) while keeping the user's, keeps the Stop hook
// as the fallback, prints the launch line, and a second run changes
// nothing.
func TestInstallClaudeChannel(t *testing.T) {
	dir := t.TempDir()
	install := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := askdInstall(append([]string{"claude", "--dir", dir, "--url", "http://127.0.0.1:7777"}, args...), &out, &errb); err != nil {
			t.Fatalf("install %v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	install() // the plain install first: an http entry and all three hooks
	settingsPath := filepath.Join(dir, ".claude", "settings.json")
	var settings map[string]any
	read := func(path string, v any) {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatal(err)
		}
	}
	read(settingsPath, &settings)
	hooks := settings["hooks"].(map[string]any)
	hooks["PermissionRequest"] = append(hooks["PermissionRequest"].([]any), map[string]any{"matcher": "Bash", "hooks": []any{map[string]any{"type": "command", "command": "./audit.sh"}}})
	data, _ := json.Marshal(settings)
	if err := os.WriteFile(settingsPath, data, 0o644); err != nil {
		t.Fatal(err)
	}

	out := install("--channel")
	if !strings.Contains(out, "ASKD_CHANNEL=1 claude --dangerously-load-development-channels server:askd") {
		t.Errorf("no launch line in:\n%s", out)
	}
	if again := install("--channel"); strings.Contains(again, "wrote") {
		t.Errorf("second run changed files:\n%s", again)
	}
	var mcpFile struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	read(filepath.Join(dir, ".mcp.json"), &mcpFile)
	var compact bytes.Buffer
	if err := json.Compact(&compact, mcpFile.MCPServers["askd"]); err != nil {
		t.Fatal(err)
	}
	if got, want := compact.String(), `{"type":"stdio","command":"askd","args":["mcp"],"env":{"ASKD_URL":"${ASKD_URL:-http://127.0.0.1:7777}"},"timeout":3600000}`; got != want {
		t.Errorf("askd entry\n got %s\nwant %s", got, want)
	}
	settings = nil
	read(settingsPath, &settings)
	hooks = settings["hooks"].(map[string]any)
	perm, _ := json.Marshal(hooks["PermissionRequest"])
	if strings.Count(string(perm), "exec askd hook") != 1 || !strings.Contains(string(perm), "exec askd hook --only-policies") || !strings.Contains(string(perm), "./audit.sh") {
		t.Errorf("PermissionRequest hooks: %s, want the user's and askd's for covered prompts only", perm)
	}
	for _, event := range []string{"Stop", "PreToolUse"} {
		if b, _ := json.Marshal(hooks[event]); !strings.Contains(string(b), "askd hook") {
			t.Errorf("%s hooks lack askd's: %s", event, b)
		}
	}
}
