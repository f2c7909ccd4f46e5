package install

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// The configs install mcp-gate writes, read by each client's own parser:
// the real Claude Code, Codex and Gemini CLI (pinned, from npm, installed
// once into the cache internal/agentcli shares) start the gated servers,
// and Microsoft's jsonc-parser, which VS Code reads mcp.json with, parses
// the JSONC. askd gate mcp itself is not what they start: a recorder named
// askd, first on their PATH, writes down the command line and environment
// each client gives it, and exits as a gate that cannot start would.

// jsoncParser is the parser of VS Code's JSONC files, pinned.
const jsoncParser = "jsonc-parser@3.3.1"

// recordedVars are the variables the recorder writes down: the gate's, and
// a server's own that the tests' entries set.
var recordedVars = []string{"ASKD_TOKEN", "ASKD_URL", "NODE_OPTIONS"}

// recorder writes the fake askd into a new directory and returns it, to go
// first on a client's PATH. Started as askd gate mcp --name NAME ..., it
// writes NAME.record beside itself: each argument on a line of its own,
// then each of recordedVars as NAME=value (<unset> when unset).
func recorder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\nout=\"$(dirname \"$0\")/$4.record\"\n{\n  for a in \"$@\"; do printf 'arg %s\\n' \"$a\"; done\n"
	for _, v := range recordedVars {
		script += "  printf '" + v + "=%s\\n' \"${" + v + "-<unset>}\"\n"
	}
	script += "} > \"$out.tmp\" && mv \"$out.tmp\" \"$out\"\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "askd"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// started is what the recorder wrote down of the gate named name.
type started struct {
	args []string
	env  map[string]string
}

func startedGate(t *testing.T, dir, name string) started {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name+".record"))
	if err != nil {
		t.Fatalf("the client never started the gate of %s: %v", name, err)
	}
	s := started{env: map[string]string{}}
	lines := bufio.NewScanner(bytes.NewReader(data))
	for lines.Scan() {
		if a, ok := strings.CutPrefix(lines.Text(), "arg "); ok {
			s.args = append(s.args, a)
		} else if k, v, ok := strings.Cut(lines.Text(), "="); ok {
			s.env[k] = v
		}
	}
	return s
}

// gateInto runs install mcp-gate on path for each server, the token in
// install's environment, and fails the test on an error.
func gateInto(t *testing.T, path string, servers ...[]string) {
	t.Helper()
	for _, args := range servers {
		if out, err := mcpGate(t, map[string]string{"ASKD_TOKEN": testToken}, append([]string{"--config", path}, args...)...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
}

// clientEnv is a client's environment: the recorder first on PATH, a home
// of its own, the agent token, and vars.
func clientEnv(rec, home string, vars ...string) []string {
	return append([]string{
		"PATH=" + rec + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + home,
		"ASKD_TOKEN=" + testToken,
	}, vars...)
}

// runClient runs a client command to its end (a minute at most) and
// returns its output.
func runClient(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = nil
	began := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("%s %s: %s", filepath.Base(name), strings.Join(args, " "), time.Since(began).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not end within a minute:\n%s", name, strings.Join(args, " "), out)
	}
	_ = err // a client listing servers that fail to start may exit non-zero
	return string(out)
}

func wantArgs(t *testing.T, name string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s started with\n  %q\nwant\n  %q", name, got, want)
	}
}

// TestClaudeCodeStartsTheGate: the real Claude Code reads the .mcp.json
// install wrote and starts each gated server as askd gate mcp, expanding
// the entry's ${ASKD_TOKEN}, the fallback of ${ASKD_URL:-...} and a
// header's ${GITHUB_PAT} on the gate's command line; the server's own env
// reaches the gate.
func TestClaudeCodeStartsTheGate(t *testing.T) {
	t.Parallel()
	claude := testserver.NPMBin(t, testserver.ClaudeCodePackage, "claude")
	project, home, rec := t.TempDir(), t.TempDir(), recorder(t)
	project, _ = filepath.EvalSymlinks(project)
	path := filepath.Join(project, ".mcp.json")
	os.WriteFile(path, []byte(`{
  "mcpServers": {
    "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "env": {"NODE_OPTIONS": "--no-warnings"}},
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_PAT}"}}
  }
}
`), 0o644)
	gateInto(t, path, []string{"--server", "filesystem", "--allow", "read_file"}, []string{"--server", "github"})
	// The project's servers, approved as a person would at Claude Code's prompt.
	approved, _ := json.Marshal(map[string]any{"projects": map[string]any{project: map[string]any{
		"hasTrustDialogAccepted": true, "enabledMcpjsonServers": []string{"filesystem", "github"}}}})
	os.WriteFile(filepath.Join(home, ".claude.json"), approved, 0o600)

	out := runClient(t, project, clientEnv(rec, home, "GITHUB_PAT=ghp-scripted", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1"),
		claude, "mcp", "list")
	for _, want := range []string{"filesystem: askd gate mcp --name filesystem --allow read_file -- npx -y @modelcontextprotocol/server-filesystem .", "github: askd gate mcp --name github --upstream"} {
		if !strings.Contains(out, want) {
			t.Errorf("claude mcp list does not say %q:\n%s", want, out)
		}
	}
	fs := startedGate(t, rec, "filesystem")
	wantArgs(t, "filesystem", fs.args, []string{"gate", "mcp", "--name", "filesystem", "--allow", "read_file", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "."})
	if want := map[string]string{"ASKD_TOKEN": testToken, "ASKD_URL": cli.DefaultURL, "NODE_OPTIONS": "--no-warnings"}; !reflect.DeepEqual(fs.env, want) {
		t.Errorf("filesystem's gate got %v, want %v", fs.env, want)
	}
	gh := startedGate(t, rec, "github")
	wantArgs(t, "github", gh.args, []string{"gate", "mcp", "--name", "github", "--upstream", "https://api.githubcopilot.com/mcp/", "--upstream-header", "Authorization: Bearer ghp-scripted"})
	if gh.env["ASKD_TOKEN"] != testToken {
		t.Errorf("github's gate got ASKD_TOKEN %q", gh.env["ASKD_TOKEN"])
	}
}

// TestCodexStartsTheGate: the real Codex reads the config.toml install
// wrote (codex mcp get shows each gated server's transport) and, starting
// a session, starts the gate with ASKD_TOKEN and ASKD_URL passed by
// env_vars from its own environment and the server's [env] table.
func TestCodexStartsTheGate(t *testing.T) {
	t.Parallel()
	codex := testserver.NPMBin(t, testserver.CodexPackage, "codex")
	codexHome, project, rec := t.TempDir(), t.TempDir(), recorder(t)
	path := filepath.Join(codexHome, "config.toml")
	in, _ := os.ReadFile(filepath.Join("testdata", "mcp-gate", "codex.in.toml"))
	in = bytes.ReplaceAll(in, []byte(`"--max-old-space-size=512"`), []byte(`"--no-warnings"`))
	os.WriteFile(path, in, 0o600)
	gateInto(t, path, []string{"--server", "fs", "--allow", "read_file"}, []string{"--server", "web"})
	env := clientEnv(rec, t.TempDir(), "CODEX_HOME="+codexHome, "ASKD_URL=http://127.0.0.1:7", "SCRIPTED_API_KEY=scripted")

	var got struct {
		Transport struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
			EnvVars []string          `json:"env_vars"`
		} `json:"transport"`
		ToolTimeoutSec float64 `json:"tool_timeout_sec"`
	}
	out := runClient(t, project, env, codex, "mcp", "get", "fs", "--json")
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &got); err != nil {
		t.Fatalf("codex mcp get fs --json: %v\n%s", err, out)
	}
	tr := got.Transport
	wantArgs(t, "fs", tr.Args, []string{"gate", "mcp", "--name", "fs", "--allow", "read_file", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/project"})
	if tr.Type != "stdio" || tr.Command != "askd" || !reflect.DeepEqual(tr.EnvVars, []string{"ASKD_TOKEN", "ASKD_URL"}) || tr.Env["NODE_OPTIONS"] != "--no-warnings" || got.ToolTimeoutSec != 660 {
		t.Errorf("codex reads fs as %+v, tool_timeout_sec %v", got, got.ToolTimeoutSec)
	}

	// A session starts the servers before its first model request; the
	// model endpoint refuses it, and codex exec ends.
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"scripted refusal","type":"invalid_request_error"}}`, http.StatusBadRequest)
	}))
	defer model.Close()
	provider := `model_providers.scripted={name="scripted",base_url="` + model.URL + `/v1",env_key="SCRIPTED_API_KEY",wire_api="responses",request_max_retries=0,stream_max_retries=0}`
	out = runClient(t, project, env, codex, "exec", "--skip-git-repo-check", "-c", provider, "-c", `model_provider="scripted"`, "-m", "scripted-model", "hello")
	if strings.Contains(out, "is ignored") {
		t.Errorf("codex ignores a setting install wrote:\n%s", out)
	}
	fs := startedGate(t, rec, "fs")
	wantArgs(t, "fs", fs.args, tr.Args)
	if want := map[string]string{"ASKD_TOKEN": testToken, "ASKD_URL": "http://127.0.0.1:7", "NODE_OPTIONS": "--no-warnings"}; !reflect.DeepEqual(fs.env, want) {
		t.Errorf("fs's gate got %v, want %v", fs.env, want)
	}
	web := startedGate(t, rec, "web")
	wantArgs(t, "web", web.args, []string{"gate", "mcp", "--name", "web", "--upstream", "https://mcp.example.com/mcp", "--upstream-header", "X-Team: infra"})
	if web.env["ASKD_TOKEN"] != testToken {
		t.Errorf("web's gate got ASKD_TOKEN %q", web.env["ASKD_TOKEN"])
	}
}

// TestGeminiCLIStartsTheGate: the real Gemini CLI reads the settings.json
// install wrote, comments and all, lists the gated servers as stdio
// commands and starts them with the entry's ${ASKD_TOKEN} and
// ${ASKD_URL:-...} expanded (Gemini CLI passes no *TOKEN* variable of its
// own environment unless an entry names it), and a header's $DOCS_KEY on
// the command line.
func TestGeminiCLIStartsTheGate(t *testing.T) {
	t.Parallel()
	gemini := testserver.NPMBin(t, testserver.GeminiCLIPackage, "gemini")
	project, home, rec := t.TempDir(), t.TempDir(), recorder(t)
	path := filepath.Join(project, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	in, _ := os.ReadFile(filepath.Join("testdata", "mcp-gate", "gemini.in.json"))
	os.WriteFile(path, in, 0o644)
	gateInto(t, path, []string{"--server", "docs"}, []string{"--server", "git", "--allow", "git_status"})
	os.MkdirAll(filepath.Join(home, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(home, ".gemini", "settings.json"),
		[]byte(`{"general": {"enableAutoUpdate": false}, "privacy": {"usageStatisticsEnabled": false}, "telemetry": {"enabled": false}}`), 0o644)

	out := runClient(t, project, clientEnv(rec, home, "DOCS_KEY=docs-scripted", "GEMINI_CLI_TRUST_WORKSPACE=true"), gemini, "mcp", "list")
	for _, want := range []string{"docs: askd gate mcp --name docs --upstream https://docs.example.com/mcp", "git: askd gate mcp --name git --allow git_status -- uvx mcp-server-git", "(stdio)"} {
		if !strings.Contains(out, want) {
			t.Errorf("gemini mcp list does not say %q:\n%s", want, out)
		}
	}
	docs := startedGate(t, rec, "docs")
	wantArgs(t, "docs", docs.args, []string{"gate", "mcp", "--name", "docs", "--upstream", "https://docs.example.com/mcp", "--upstream-header", "X-Api-Key: docs-scripted"})
	if want := map[string]string{"ASKD_TOKEN": testToken, "ASKD_URL": cli.DefaultURL, "NODE_OPTIONS": "<unset>"}; !reflect.DeepEqual(docs.env, want) {
		t.Errorf("docs' gate got %v, want %v", docs.env, want)
	}
	if git := startedGate(t, rec, "git"); git.env["ASKD_TOKEN"] != testToken {
		t.Errorf("git's gate got ASKD_TOKEN %q", git.env["ASKD_TOKEN"])
	}
}

// TestVSCodeReadsTheJSONC: Microsoft's jsonc-parser, as VS Code reads
// mcp.json (comments and trailing commas allowed), parses the file install
// wrote without an error, and reads the gated entries as stdio servers
// running the gate, every other value as in the original.
func TestVSCodeReadsTheJSONC(t *testing.T) {
	t.Parallel()
	node := testserver.Node(t)
	lib := filepath.Join(testserver.NPM(t, jsoncParser), "node_modules", "jsonc-parser")
	path := filepath.Join(t.TempDir(), ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	in, _ := os.ReadFile(filepath.Join("testdata", "mcp-gate", "vscode.in.json"))
	os.WriteFile(path, in, 0o644)
	gateInto(t, path, []string{"--server", "filesystem"}, []string{"--server", "github", "--url", "https://askd.example.com"})

	parse := func(file string) map[string]any {
		t.Helper()
		script := `const jsonc = require(process.argv[1]); const fs = require("fs");
const errors = [];
const doc = jsonc.parse(fs.readFileSync(process.argv[2], "utf8"), errors, {allowTrailingComma: true, disallowComments: false});
process.stdout.write(JSON.stringify({errors: errors.map(e => jsonc.printParseErrorCode(e.error) + " at " + e.offset), doc}));`
		out, err := exec.Command(node, "-e", script, lib, file).Output()
		if err != nil {
			t.Fatalf("node jsonc-parser %s: %v", file, err)
		}
		var got struct {
			Errors []string       `json:"errors"`
			Doc    map[string]any `json:"doc"`
		}
		if err := json.Unmarshal(out, &got); err != nil || len(got.Errors) > 0 {
			t.Fatalf("jsonc-parser reads %s with errors %v (%v)\n%s", file, got.Errors, err, readBytes(t, file))
		}
		return got.Doc
	}
	orig := filepath.Join(t.TempDir(), "orig.json")
	os.WriteFile(orig, in, 0o644)
	before, after := parse(orig), parse(path)
	servers := after["servers"].(map[string]any)
	fs := servers["filesystem"].(map[string]any)
	wantFS := map[string]any{"type": "stdio", "command": "askd",
		"args": []any{"gate", "mcp", "--name", "filesystem", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "${workspaceFolder}"},
		"env":  map[string]any{"ASKD_TOKEN": "${env:ASKD_TOKEN}", "ASKD_URL": "${env:ASKD_URL}"}}
	if !reflect.DeepEqual(fs, wantFS) {
		t.Errorf("filesystem reads %v\nwant %v", fs, wantFS)
	}
	gh := servers["github"].(map[string]any)
	wantGH := map[string]any{"type": "stdio", "command": "askd",
		"args": []any{"gate", "mcp", "--name", "github", "--url", "https://askd.example.com", "--upstream", "https://api.githubcopilot.com/mcp/", "--upstream-header", "Authorization: Bearer ${input:github-token}"},
		"env":  map[string]any{"ASKD_TOKEN": "${env:ASKD_TOKEN}"}}
	if !reflect.DeepEqual(gh, wantGH) {
		t.Errorf("github reads %v\nwant %v", gh, wantGH)
	}
	delete(servers, "filesystem")
	delete(servers, "github")
	beforeServers := before["servers"].(map[string]any)
	delete(beforeServers, "filesystem")
	delete(beforeServers, "github")
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the rest reads\n%v\nwant\n%v", after, before)
	}
}
