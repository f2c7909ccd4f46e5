package install

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// testToken is the agent token install mcp-gate's environment holds in the
// tests: it must never reach a config file.
const testToken = "askd_a_NeverInTheConfig7Qx2"

// mcpGate runs askd install mcp-gate with args in an environment of env
// alone (not the test's, which may hold a person's ASKD_URL), and returns
// what it printed.
func mcpGate(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	e := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] }}
	err := Command(context.Background(), e, append([]string{"mcp-gate"}, args...))
	return out.String(), err
}

// gateCases are a config of each client, testdata/mcp-gate/NAME.in.*, with
// the entry install gates in it; NAME.out.* is the file gated.
var gateCases = []struct {
	name   string
	file   string // where the client keeps it, under a directory of the test's
	client string // the client install takes it for
	args   []string
}{
	{"claude-desktop", "Claude/claude_desktop_config.json", "Claude Desktop", []string{"--server", "filesystem", "--askd", "/opt/askd/bin/askd"}},
	{"cursor", ".cursor/mcp.json", "Cursor", []string{"--server", "linear", "--allow", "list_issues"}},
	{"claude-code", ".mcp.json", "Claude Code", []string{"--server", "filesystem", "--allow", "read_file", "--allow", "list_directory"}},
	{"claude-code-url", ".mcp.json", "Claude Code", []string{"--server", "github", "--url", "https://askd.example.com"}},
	{"gemini", ".gemini/settings.json", "Gemini CLI", []string{"--server", "docs"}},
	{"vscode", ".vscode/mcp.json", "VS Code", []string{"--server", "filesystem"}},
	{"vscode-url", ".vscode/mcp.json", "VS Code", []string{"--server", "github", "--url", "https://askd.example.com", "--allow", "get_me"}},
	{"codex", "codex/config.toml", "Codex", []string{"--server", "fs", "--allow", "read_file"}},
	{"codex-url", "codex/config.toml", "Codex", []string{"--server", "web"}},
}

// TestMCPGateClients gates an entry of each client's config: the file is
// as golden (the token file's directory written DIR), every byte outside
// the entry is as it was, the token is nowhere in it, the file keeps its
// mode; a second run changes nothing and says so; --undo gives back the
// original byte for byte and leaves no record behind.
func TestMCPGateClients(t *testing.T) {
	for _, c := range gateCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ext := filepath.Ext(c.file)
			in, err := os.ReadFile(filepath.Join("testdata", "mcp-gate", c.name+".in"+ext))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, c.file)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, in, 0o640); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"ASKD_TOKEN": testToken}
			args := append([]string{"--config", path}, c.args...)
			out, err := mcpGate(t, env, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if want := path + ": " + c.client + "'s config"; !strings.HasPrefix(out, want) {
				t.Errorf("install says %q first, want %q", strings.SplitN(out, "\n", 2)[0], want)
			}
			got := readBytes(t, path)
			testserver.Golden(t, filepath.Join("testdata", "mcp-gate", c.name+".out"+ext), bytes.ReplaceAll(got, []byte(dir), []byte("DIR")))
			keptOutside(t, in, got, c.file, serverOf(c.args))
			if ext == ".json" && c.client != "VS Code" && c.client != "Gemini CLI" {
				if e := jsonEntryOf(t, got, "mcpServers", serverOf(c.args)); !isGate(e.Command, e.Args) || e.URL != "" {
					t.Errorf("%s reads the entry as %+v", c.client, e)
				}
			}
			if bytes.Contains(got, []byte(testToken)) || bytes.Contains(readBytes(t, sidecarPath(path)), []byte(testToken)) {
				t.Fatal("the agent token was written into the config or its record")
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the file's 0640", fi.Mode().Perm())
			}

			out, err = mcpGate(t, env, args...)
			if err != nil || !strings.Contains(out, "already runs through askd's gate") || !strings.Contains(out, "unchanged "+path) {
				t.Fatalf("second run: %v\n%s", err, out)
			}
			if again := readBytes(t, path); !bytes.Equal(again, got) {
				t.Fatalf("the second run changed the file:\n%s", again)
			}

			out, err = mcpGate(t, env, "--config", path, "--server", serverOf(c.args), "--undo")
			if err != nil {
				t.Fatalf("--undo: %v\n%s", err, out)
			}
			if back := readBytes(t, path); !bytes.Equal(back, in) {
				t.Fatalf("--undo left\n%s\nwant the original\n%s", back, in)
			}
			if _, err := os.Stat(sidecarPath(path)); !os.IsNotExist(err) {
				t.Errorf("the record is still there after --undo: %v", err)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), tokenFileName)); !os.IsNotExist(err) {
				t.Errorf("the token file is still there after --undo: %v", err)
			}
			backups, _ := filepath.Glob(path + ".askd-*.bak")
			if len(backups) != 2 {
				t.Errorf("%d backups, want 2 (before the gate, before --undo)", len(backups))
			}
		})
	}
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func serverOf(args []string) string {
	for i, a := range args {
		if a == "--server" {
			return args[i+1]
		}
	}
	return ""
}

// keptOutside checks that before and after differ only inside server
// key's entry: the bytes before it and after it are the same.
func keptOutside(t *testing.T, before, after []byte, file, key string) {
	t.Helper()
	var start, end int
	var err error
	if filepath.Ext(file) == ".toml" {
		_, tables, _, ferr := findCodexEntry(file, before, key)
		start, end, err = tables.start, tables.end, ferr
	} else {
		c, _, derr := detectClient(file, before, "")
		if derr != nil {
			t.Fatal(derr)
		}
		start, end, _, err = findJSONSpan(c, file, before, key)
	}
	if err != nil {
		t.Fatal(err)
	}
	tail := len(before) - end
	if !bytes.Equal(after[:start], before[:start]) || len(after) < tail || !bytes.Equal(after[len(after)-tail:], before[end:]) {
		t.Fatalf("bytes outside the entry changed:\n%s", after)
	}
}

// TestMCPGateTokenFile: Claude Desktop's gate reads the token from a 0600
// file install writes beside the config from its own ASKD_TOKEN; it stays
// while another gated server names it and goes with the last --undo. Any
// client's entry takes a --token-file given to install in place of the
// reference to ASKD_TOKEN.
func TestMCPGateTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "claude_desktop_config.json")
	orig := []byte(`{"mcpServers": {"a": {"command": "server-a"}, "b": {"command": "server-b", "args": ["--ro"]}}}` + "\n")
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ASKD_TOKEN": testToken}
	tokenFile := filepath.Join(dir, tokenFileName)
	for _, key := range []string{"a", "b"} {
		if out, err := mcpGate(t, env, "--config", path, "--server", key); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		fi, err := os.Stat(tokenFile)
		if err != nil || fi.Mode().Perm() != 0o600 || string(readBytes(t, tokenFile)) != testToken+"\n" {
			t.Fatalf("token file: %v %v %q", err, fi.Mode(), readBytes(t, tokenFile))
		}
	}
	for _, key := range []string{"a", "b"} {
		entry := jsonEntryOf(t, readBytes(t, path), "mcpServers", key)
		if args := strings.Join(entry.Args, " "); !strings.Contains(args, "--token-file "+tokenFile+" --") || !filepath.IsAbs(entry.Command) {
			t.Errorf("%s: %s %s; want the absolute askd and --token-file", key, entry.Command, args)
		}
	}
	if out, err := mcpGate(t, env, "--config", path, "--server", "a", "--undo"); err != nil || strings.Contains(out, "removed") {
		t.Fatalf("--undo a: %v\n%s", err, out)
	}
	if _, err := os.Stat(tokenFile); err != nil {
		t.Fatalf("the token file went while b's gate reads it: %v", err)
	}
	if out, err := mcpGate(t, env, "--config", path, "--server", "b", "--undo"); err != nil || !strings.Contains(out, "removed   "+tokenFile) {
		t.Fatalf("--undo b: %v\n%s", err, out)
	}
	if !bytes.Equal(readBytes(t, path), orig) {
		t.Fatalf("not the original: %s", readBytes(t, path))
	}

	// Cursor, given a token file: the entry names it; no ASKD_TOKEN in env.
	own := filepath.Join(dir, "my-token")
	if err := os.WriteFile(own, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cursor := filepath.Join(dir, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursor), 0o755)
	if err := os.WriteFile(cursor, []byte(`{"mcpServers": {"x": {"command": "server-x", "env": {"K": "v"}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := mcpGate(t, nil, "--config", cursor, "--server", "x", "--token-file", own); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	entry := jsonEntryOf(t, readBytes(t, cursor), "mcpServers", "x")
	if want := []string{"gate", "mcp", "--name", "x", "--token-file", own, "--", "server-x"}; strings.Join(entry.Args, " ") != strings.Join(want, " ") ||
		len(entry.Env) != 2 || entry.Env["K"] != "v" || entry.Env["ASKD_URL"] != "${env:ASKD_URL}" {
		t.Errorf("entry %+v", entry)
	}
}

// serverEntry is a JSON entry as a client reads it.
type serverEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
}

// jsonEntryOf reads server key of a plain JSON config, as JSON.parse (and
// so Claude Desktop, Cursor and Claude Code) would, in the documented
// shape: command a string, args strings, env strings.
func jsonEntryOf(t *testing.T, data []byte, servers, key string) serverEntry {
	t.Helper()
	var doc map[string]json.RawMessage
	var m map[string]serverEntry
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if err := json.Unmarshal(doc[servers], &m); err != nil {
		t.Fatalf("%s: %v\n%s", servers, err, data)
	}
	return m[key]
}

// TestMCPGateUndoKeepsLaterEdits: --undo puts back only the gated entry;
// what the person changed elsewhere since stays, and an entry changed
// since it was gated is put back as it was before the gate, saying so.
func TestMCPGateUndoKeepsLaterEdits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".mcp.json")
	orig := "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"fs-server\"},\n    \"other\": {\"command\": \"other\"}\n  }\n}\n"
	os.WriteFile(path, []byte(orig), 0o644)
	if out, err := mcpGate(t, nil, "--config", path, "--server", "fs"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	edited := strings.Replace(string(readBytes(t, path)), `"command": "other"`, `"command": "other", "args": ["--new"]`, 1)
	edited = strings.Replace(edited, `"--name",`, `"--wait", "5m", "--name",`, 1)
	os.WriteFile(path, []byte(edited), 0o644)
	out, err := mcpGate(t, nil, "--config", path, "--server", "fs", "--undo")
	if err != nil || !strings.Contains(out, `server "fs" changed since install gated it`) {
		t.Fatalf("%v\n%s", err, out)
	}
	want := strings.Replace(orig, `"command": "other"`, `"command": "other", "args": ["--new"]`, 1)
	if got := string(readBytes(t, path)); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestMCPGateRefuses: what install cannot gate, or should not, is refused
// with the problem named, and the file is left byte for byte as it was,
// with no backup, record or token file beside it. A mistake on the command
// line is exit status 2, a file install will not change 1.
func TestMCPGateRefuses(t *testing.T) {
	const fsEntry = `{"mcpServers": {"fs": {"command": "fs-server"}, "other": {"command": "x"}}}`
	cases := []struct {
		name, file, text string
		args             []string
		env              map[string]string
		status           int
		want             string
	}{
		{"a file that does not parse", ".mcp.json", `{"mcpServers": {"fs": {"command": "x",}}}`, []string{"--server", "fs"}, nil, 1,
			"does not parse as Claude Code reads it: line 1, column 38: a comma before }"},
		{"a comment where the client allows none", ".mcp.json", "{\n// no\n\"mcpServers\": {}}", []string{"--server", "fs"}, nil, 1, "line 2, column 1: a comment"},
		{"a trailing comma in Gemini CLI's settings", ".gemini/settings.json", "{\n  // comments are fine\n  \"mcpServers\": {\"fs\": {\"command\": \"x\"},}\n}", []string{"--server", "fs"}, nil, 1, "a comma before }"},
		{"TOML that does not parse", "config.toml", "[mcp_servers.fs\ncommand = 1\n", []string{"--server", "fs"}, nil, 1, "does not parse as Codex reads it: line 1"},
		{"a server that is not there", ".mcp.json", fsEntry, []string{"--server", "github"}, nil, 1, `no server "github"; the servers there: fs, other`},
		{"a Codex server that is not there", "config.toml", "[mcp_servers.b]\ncommand = \"b\"\n[mcp_servers.a]\ncommand = \"a\"\n", []string{"--server", "c"}, nil, 1, `no server "c"; the servers there: a, b`},
		{"no servers map", ".vscode/mcp.json", `{"mcpServers": {"fs": {"command": "x"}}}`, []string{"--server", "fs"}, nil, 1, `has no "servers" map`},
		{"a server given twice", ".mcp.json", `{"mcpServers": {"fs": {"command": "a"}, "fs": {"command": "b"}}}`, []string{"--server", "fs"}, nil, 1, `server "fs" is there 2 times`},
		{"an SSE server", ".mcp.json", `{"mcpServers": {"fs": {"type": "sse", "url": "https://x.example/sse"}}}`, []string{"--server", "fs"}, nil, 1, "the older HTTP+SSE transport"},
		{"an SSE server in VS Code", ".vscode/mcp.json", `{"servers": {"fs": {"type": "sse", "url": "https://x.example/sse"}}}`, []string{"--server", "fs"}, nil, 1, "the older HTTP+SSE transport"},
		{"a websocket server", ".mcp.json", `{"mcpServers": {"fs": {"type": "ws", "url": "wss://x.example"}}}`, []string{"--server", "fs"}, nil, 1, `its type is "ws"`},
		{"a unix socket", ".vscode/mcp.json", `{"servers": {"fs": {"type": "http", "url": "unix:///tmp/s.sock"}}}`, []string{"--server", "fs"}, nil, 1, "not an http:// or https:// URL"},
		{"OAuth in VS Code", ".vscode/mcp.json", `{"servers": {"s": {"type": "http", "url": "https://x.example/mcp", "oauth": {"clientId": "c"}}}}`, []string{"--server", "s"}, nil, 1, `signs in with "oauth"`},
		{"Claude Code's headersHelper", ".mcp.json", `{"mcpServers": {"s": {"type": "http", "url": "https://x.example/mcp", "headersHelper": "get-headers"}}}`, []string{"--server", "s"}, nil, 1, `signs in with "headersHelper"`},
		{"Gemini CLI's auth provider", ".gemini/settings.json", `{"mcpServers": {"s": {"httpUrl": "https://x.example/mcp", "authProviderType": "google_credentials"}}}`, []string{"--server", "s"}, nil, 1, `signs in with "authProviderType"`},
		{"Codex's bearer token variable", "config.toml", "[mcp_servers.s]\nurl = \"https://x.example/mcp\"\nbearer_token_env_var = \"S_TOKEN\"\n", []string{"--server", "s"}, nil, 1, "signs in with bearer_token_env_var"},
		{"Codex's headers from variables", "config.toml", "[mcp_servers.s]\nurl = \"https://x.example/mcp\"\nenv_http_headers = { \"X\" = \"S_KEY\" }\n", []string{"--server", "s"}, nil, 1, "signs in with env_http_headers"},
		{"a Codex server written inline", "config.toml", "mcp_servers.s = { command = \"x\" }\n", []string{"--server", "s"}, nil, 1, "line 1: server \"s\" is written inline"},
		{"a Codex server in an inline map", "config.toml", "[mcp_servers]\ns = { command = \"x\" }\n", []string{"--server", "s"}, nil, 1, "is written inline"},
		{"a Codex server's tables apart", "config.toml", "[mcp_servers.s]\ncommand = \"x\"\n[other]\na = 1\n[mcp_servers.s.env]\nK = \"v\"\n", []string{"--server", "s"}, nil, 1, "tables are apart"},
		{"an entry whose env sets ASKD_TOKEN", ".mcp.json", `{"mcpServers": {"s": {"command": "x", "env": {"ASKD_TOKEN": "t"}}}}`, []string{"--server", "s"}, nil, 1, "its env sets ASKD_TOKEN"},
		{"a command and a URL", ".cursor/mcp.json", `{"mcpServers": {"s": {"command": "x", "url": "https://x.example/mcp"}}}`, []string{"--server", "s"}, nil, 1, "both a command and a"},
		{"neither command nor URL", ".cursor/mcp.json", `{"mcpServers": {"s": {"args": ["x"]}}}`, []string{"--server", "s"}, nil, 1, "no command and no url"},
		{"a header install cannot carry", ".mcp.json", `{"mcpServers": {"s": {"type": "http", "url": "https://x.example/mcp", "headers": {"X": "a\nb"}}}}`, []string{"--server", "s"}, nil, 1, `its header "X" cannot go on the gate's command line`},
		{"an env that is no object", ".mcp.json", `{"mcpServers": {"s": {"command": "x", "env": ["A=1"]}}}`, []string{"--server", "s"}, nil, 1, `its "env" is not an object`},
		{"a Codex env that is no table", "config.toml", "[mcp_servers.s]\ncommand = \"x\"\nenv = \"A=1\"\n", []string{"--server", "s"}, nil, 1, "its env is not a table"},
		{"args that are not strings", ".mcp.json", `{"mcpServers": {"s": {"command": "x", "args": [1]}}}`, []string{"--server", "s"}, nil, 1, "not only strings"},
		{"a file whose name does not say whose", "servers.json", fsEntry, []string{"--server", "fs"}, nil, 1, "pass --client claude-desktop, cursor, claude-code or gemini"},
		{"an unknown client", "servers.json", fsEntry, []string{"--server", "fs", "--client", "zed"}, nil, 2, `--client "zed": say one of claude-desktop, cursor`},
		{"Claude Desktop with no token", "claude_desktop_config.json", fsEntry, []string{"--server", "fs"}, nil, 2, "Claude Desktop passes the gate no environment"},
		{"a human token", "claude_desktop_config.json", fsEntry, []string{"--server", "fs"}, map[string]string{"ASKD_TOKEN": "askd_h_person"}, 2, "ASKD_TOKEN holds a human token"},
		{"a key the gate cannot name", ".mcp.json", `{"mcpServers": {"my files": {"command": "x"}}}`, []string{"--server", "my files"}, nil, 2, "one word of printable characters"},
		{"Claude Code's name for a tool", ".mcp.json", fsEntry, []string{"--server", "fs", "--allow", "mcp__fs__read_file"}, nil, 2, "give the server's own name for the tool (read_file)"},
		{"--undo with --allow", ".mcp.json", fsEntry, []string{"--server", "fs", "--undo", "--allow", "x"}, nil, 2, "--undo takes no --allow"},
		{"no --server", ".mcp.json", fsEntry, nil, nil, 2, "give --config FILE and --server KEY"},
		{"a URL the entry cannot carry", ".mcp.json", fsEntry, []string{"--server", "fs", "--url", "http://x/${A}"}, nil, 2, "--url"},
		{"gated otherwise", ".mcp.json", `{"mcpServers": {"fs": {"command": "askd", "args": ["gate", "mcp", "--name", "fs", "--allow", "a", "--", "x"]}}}`, []string{"--server", "fs"}, nil, 1,
			`gated with --name "fs" and --allow "a", not as asked`},
		{"undo with no record", ".mcp.json", `{"mcpServers": {"fs": {"command": "askd", "args": ["gate", "mcp", "--name", "fs", "--", "x"]}}}`, []string{"--server", "fs", "--undo"}, nil, 1,
			"no record of server \"fs\" as it was before the gate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.file)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := mcpGate(t, c.env, append([]string{"--config", path}, c.args...)...)
			if status := cli.ExitCode(err); status != c.status || err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("exit %d, %v; want %d and an error saying %q\n%s", status, err, c.status, c.want, out)
			}
			if got := readBytes(t, path); string(got) != c.text {
				t.Fatalf("the file changed:\n%s", got)
			}
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*")); len(left) != 1 {
				t.Fatalf("files beside it: %v", left)
			}
		})
	}
}

// TestMCPGateRefusesAnUnreadableTokenFile: the gate reads a token file
// only its owner may read, so install refuses another, and one with a
// human token; the config stays as it was.
func TestMCPGateRefusesAnUnreadableTokenFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, ".mcp.json")
	text := `{"mcpServers": {"fs": {"command": "x"}}}`
	os.WriteFile(path, []byte(text), 0o644)
	for _, c := range []struct {
		content string
		mode    os.FileMode
		want    string
	}{
		{testToken, 0o644, "mode 0644"},
		{"", 0o600, "empty"},
		{"askd_h_person", 0o600, "holds a human token"},
	} {
		tf := filepath.Join(t.TempDir(), "token")
		os.WriteFile(tf, []byte(c.content), c.mode)
		os.Chmod(tf, c.mode)
		_, err := mcpGate(t, nil, "--config", path, "--server", "fs", "--token-file", tf)
		if cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want exit 2 saying %q", c.mode, err, c.want)
		}
	}
	if missing := filepath.Join(dir, "none"); true {
		if _, err := mcpGate(t, nil, "--config", path, "--server", "fs", "--token-file", missing); cli.ExitCode(err) != 2 {
			t.Errorf("a missing token file: %v", err)
		}
	}
	if string(readBytes(t, path)) != text {
		t.Fatal("the config changed")
	}
}

// TestMCPGateSymlink: a config that is a symlink is edited where it
// points, the link kept; the backup and record go beside the file itself.
func TestMCPGateSymlink(t *testing.T) {
	dir, dotfiles := t.TempDir(), t.TempDir()
	real := filepath.Join(dotfiles, "mcp.json")
	text := `{"mcpServers": {"fs": {"command": "x"}}}`
	os.WriteFile(real, []byte(text), 0o644)
	os.MkdirAll(filepath.Join(dir, ".cursor"), 0o755)
	link := filepath.Join(dir, ".cursor", "mcp.json")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	if out, err := mcpGate(t, nil, "--config", link, "--server", "fs"); err != nil || !strings.Contains(out, "Cursor's config") {
		t.Fatalf("%v\n%s", err, out)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link is gone: %v", err)
	}
	if e := jsonEntryOf(t, readBytes(t, real), "mcpServers", "fs"); e.Command != "askd" {
		t.Fatalf("the file the link points to was not gated: %+v", e)
	}
	if _, err := os.Stat(sidecarPath(real)); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpGate(t, nil, "--config", link, "--server", "fs", "--undo"); err != nil || string(readBytes(t, real)) != text {
		t.Fatalf("--undo: %v", err)
	}
}
