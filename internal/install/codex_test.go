package install

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/tomledit"
)

// userCodexConfig is a config.toml of the user's own: top-level keys, other
// MCP servers, a Stop hook of theirs and a profile, with comments.
const userCodexConfig = `# My Codex config: keep these notes.
model = "gpt-5"   # the default model
approval_policy = "on-request"

[mcp_servers.github]
# The GitHub server, token from the environment.
url = "https://api.example.com/mcp"
bearer_token_env_var = "GITHUB_TOKEN"

[mcp_servers.docs]
command = "docs-mcp"
args = ["--stdio"]
env = { "DOCS_DIR" = "/srv/docs" }
`

const userCodexTail = `# Notify me when a turn ends.
[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "notify-send 'codex done'"

[profiles.fast]
model = "gpt-5-mini"   # cheaper
`

// codex runs `askd install codex` with args and returns what it printed.
func codex(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := askdInstall(append([]string{"codex"}, args...), &out, &out)
	return out.String(), err
}

// codexBlockFor is the block `askd install codex --print args...` prints.
func codexBlockFor(t *testing.T, args ...string) string {
	t.Helper()
	out, err := codex(t, append([]string{"--print"}, args...)...)
	if err != nil {
		t.Fatalf("--print: %v\n%s", err, out)
	}
	return out
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func backups(t *testing.T, config string) []string {
	t.Helper()
	names, err := filepath.Glob(config + ".askd-*.bak")
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestInstallCodexEditsConfig runs `askd install codex --config` twice on
// configs that hold the user's tables and comments, some with askd's tables
// from an earlier install: the result is TOML with askd's server and Stop
// hook once, every byte of the user's as it was (askd's tables cut out and
// its block appended), the first run leaves a backup of the file as it was,
// and the second run says unchanged and writes nothing.
func TestInstallCodexEditsConfig(t *testing.T) {
	legacy, err := os.ReadFile(filepath.Join("testdata", "codex-legacy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	legacyHandler := `

[[hooks.Stop.hooks]]
type = "command"
command = 'curl -s -X POST --data-binary @- -H "Authorization: Bearer $ASKD_TOKEN" -H "Askd-Session: $ASKD_SESSION" "http://127.0.0.1:7777/hooks/claude?wait=5m"'
timeout = 360`
	block := codexBlockFor(t)
	cases := []struct {
		name, before, after string
	}{
		{"no askd yet",
			userCodexConfig + "\n" + userCodexTail,
			userCodexConfig + "\n" + userCodexTail + "\n" + block},
		{"no file", "", block},
		{"an empty file", "\n", "\n" + block},
		{"no newline at the end",
			"model = \"gpt-5\"",
			"model = \"gpt-5\"\n\n" + block},
		{"askd's printed block appended, then tables of the user's",
			userCodexConfig + "\n" + string(legacy) + "\n" + userCodexTail,
			userCodexConfig + "\n" + userCodexTail + "\n" + block},
		{"askd's block appended right below a comment of the user's",
			userCodexConfig + "# end of my servers\n" + string(legacy),
			userCodexConfig + "# end of my servers\n\n" + block},
		{"askd's hook in the user's Stop group",
			userCodexConfig + "\n" + strings.Replace(userCodexTail, "\n\n[profiles", legacyHandler+"\n\n[profiles", 1),
			userCodexConfig + "\n" + userCodexTail + "\n" + block},
		{"askd's server with a sub-table and a comment of its own",
			userCodexConfig + "\n[mcp_servers.askd]\nurl = \"http://old.example/mcp\"\n# mine\nenabled = true\n\n[mcp_servers.askd.env]\nX = \"1\"\n\n" + userCodexTail,
			userCodexConfig + "\n" + userCodexTail + "\n" + block},
		{"a comment of the user's below askd's block",
			userCodexConfig + "\n" + block + "\n# my note\n",
			userCodexConfig + "\n# my note\n\n" + block},
		{"CRLF lines",
			strings.ReplaceAll(userCodexConfig, "\n", "\r\n"),
			strings.ReplaceAll(userCodexConfig+"\n"+block, "\n", "\r\n")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			config := filepath.Join(t.TempDir(), "config.toml")
			if c.name != "no file" {
				writeFile(t, config, c.before)
			}
			for run := 1; run <= 2; run++ {
				out, err := codex(t, "--config", config)
				if err != nil {
					t.Fatalf("run %d: %v\n%s", run, err, out)
				}
				got := readFile(t, config)
				if got != c.after {
					t.Fatalf("run %d wrote\n%s\nwant\n%s", run, got, c.after)
				}
				flat := flattenTOML(t, got)
				if flat["mcp_servers.askd.url"] != "http://127.0.0.1:7777/mcp" || countAskdStopHooks(decodedTOML(t, got)) != 1 {
					t.Errorf("run %d: askd's server or hook missing or doubled:\n%s", run, got)
				}
				baks := backups(t, config)
				switch {
				case run == 2 && !strings.Contains(out, "unchanged "+config):
					t.Errorf("second run did not say unchanged:\n%s", out)
				case c.name == "no file" && len(baks) > 0:
					t.Errorf("backups of a file that was not there: %q", baks)
				case c.name != "no file" && len(baks) != 1:
					t.Errorf("run %d: backups %q, want one", run, baks)
				case c.name != "no file":
					if bak := readFile(t, baks[0]); bak != c.before {
						t.Errorf("backup holds\n%s\nwant the file as it was", bak)
					}
					if !strings.Contains(out, "backup    "+baks[0]) && run == 1 {
						t.Errorf("run 1 did not name the backup:\n%s", out)
					}
				}
			}
			info, err := os.Stat(config)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]os.FileMode{true: 0o600, false: 0o640}[c.name == "no file"]; info.Mode().Perm() != want {
				t.Errorf("mode %v, want %v", info.Mode().Perm(), want)
			}
		})
	}
}

func decodedTOML(t *testing.T, text string) map[string]any {
	t.Helper()
	doc, err := tomledit.Decode([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestInstallCodexNewFlags: run again with other flags, askd's block is
// replaced (a new backup beside the first), the user's text still untouched.
func TestInstallCodexNewFlags(t *testing.T) {
	config := filepath.Join(t.TempDir(), "config.toml")
	writeFile(t, config, userCodexConfig)
	if out, err := codex(t, "--config", config); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := codex(t, "--config", config, "--stop-wait", "0", "--url", "https://askd.example.com"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := userCodexConfig + "\n" + codexBlockFor(t, "--stop-wait", "0", "--url", "https://askd.example.com")
	if got := readFile(t, config); got != want {
		t.Fatalf("wrote\n%s\nwant\n%s", got, want)
	}
	if baks := backups(t, config); len(baks) != 2 {
		t.Errorf("backups %q, want two", baks)
	}
}

// TestInstallCodexDefaultConfig: without --config the file is
// $CODEX_HOME/config.toml, else ~/.codex/config.toml (made if absent).
func TestInstallCodexDefaultConfig(t *testing.T) {
	codexHome, home := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", codexHome)
	if out, err := codex(t); err != nil || !strings.Contains(out, "wrote     "+filepath.Join(codexHome, "config.toml")) {
		t.Fatalf("with CODEX_HOME: %v\n%s", err, out)
	}
	t.Setenv("CODEX_HOME", "")
	if out, err := codex(t); err != nil || !strings.Contains(out, "wrote     "+filepath.Join(home, ".codex", "config.toml")) {
		t.Fatalf("without CODEX_HOME: %v\n%s", err, out)
	}
	info, err := os.Stat(filepath.Join(home, ".codex"))
	if err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("~/.codex: %v, mode %v; want 0700", err, info.Mode().Perm())
	}
}

// TestInstallCodexSymlink: a config that is a symlink is edited where it
// points, and stays a symlink.
func TestInstallCodexSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles-config.toml")
	writeFile(t, target, userCodexConfig)
	link := filepath.Join(dir, "config.toml")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	if out, err := codex(t, "--config", link); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("config.toml is no longer a symlink (%v)", err)
	}
	if got := readFile(t, target); got != userCodexConfig+"\n"+codexBlockFor(t) {
		t.Errorf("target holds\n%s", got)
	}
}

// TestInstallCodexPrint: --print writes nothing, whether or not the file is
// there.
func TestInstallCodexPrint(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CODEX_HOME", dir)
	if out, err := codex(t, "--print"); err != nil || !strings.HasPrefix(out, codexBlockStart) {
		t.Fatalf("%v\n%s", err, out)
	}
	config := filepath.Join(dir, "config.toml")
	if _, err := os.Stat(config); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("--print made %s (%v)", config, err)
	}
	writeFile(t, config, userCodexConfig)
	if out, err := codex(t, "--print", "--config", config); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := readFile(t, config); got != userCodexConfig {
		t.Errorf("--print changed the file:\n%s", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("--print left files: %v", entries)
	}
}

// TestInstallCodexRefusesConfig: a config that is not TOML, or holds askd's
// entries in a form askd does not rewrite, is refused naming the file and
// the line, and left byte for byte as it was, with no backup.
func TestInstallCodexRefusesConfig(t *testing.T) {
	legacy, err := os.ReadFile(filepath.Join("testdata", "codex-legacy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, config, want string }{
		{"not TOML", userCodexConfig + "[profiles.fast\nmodel = 1\n", "line 14: not valid TOML: expected ']' to close table name"},
		{"a key twice", "model = \"a\"\nmodel = \"b\"\n", "line 2: not valid TOML: key model is already defined"},
		{"askd's block appended twice", userCodexConfig + string(legacy) + string(legacy), "line 63: not valid TOML: table askd already exists (askd's block twice"},
		{"askd's server as a dotted inline table", "mcp_servers.askd = { url = \"http://127.0.0.1:7777/mcp\" }\n" + userCodexConfig, "line 1: askd's MCP server is written inline"},
		{"askd's server as a key of [mcp_servers]", "[mcp_servers]\naskd = { url = \"http://127.0.0.1:7777/mcp\" }\n", "line 2: askd's MCP server is written inline"},
		{"askd's server as dotted keys", "[mcp_servers]\naskd.url = \"http://127.0.0.1:7777/mcp\"\n", "line 2: askd's MCP server is written inline"},
		{"every server inline", "mcp_servers = { github = { url = \"https://api.example.com/mcp\" } }\n", "line 1: mcp_servers is written inline"},
		{"askd's hook in an inline array", "[hooks]\nStop = [{ hooks = [{ type = \"command\", command = \"curl http://127.0.0.1:7777/hooks/claude\" }] }]\n", "line 2: askd's Stop hook is written inline"},
		{"Stop hooks inline", "[hooks]\nStop = [{ hooks = [{ type = \"command\", command = \"notify-send done\" }] }]\n", "line 2: hooks.Stop is written inline"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			config := filepath.Join(t.TempDir(), "config.toml")
			writeFile(t, config, c.config)
			out, err := codex(t, "--config", config)
			if err == nil || !strings.Contains(err.Error(), config+": ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %s and %q\n%s", err, config, c.want, out)
			}
			if got := readFile(t, config); got != c.config {
				t.Errorf("the file changed:\n%s", got)
			}
			if baks := backups(t, config); len(baks) > 0 {
				t.Errorf("backups %q", baks)
			}
		})
	}
}
