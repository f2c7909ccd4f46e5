package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestInstallClaude runs `askd install claude` twice in a project that
// already has the user's own MCP server and hooks: both stay, askd's entries
// are added once, and the second run changes nothing (golden files).
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
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check-bash.sh"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  }
}`)
	for i := range 2 {
		var out, errb bytes.Buffer
		err := run(context.Background(), []string{"install", "claude", "--dir", dir, "--url", "http://127.0.0.1:7777"}, strings.NewReader(""), &out, &errb)
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
			golden(t, filepath.Join("testdata", "install", f.golden), got)
		}
	}
	settings, _ := os.ReadFile(filepath.Join(dir, ".claude/settings.json"))
	for _, secret := range []string{"askd_a_", "askd_h_"} {
		if bytes.Contains(settings, []byte(secret)) {
			t.Fatal("a token was written into settings.json")
		}
	}
}

func TestInstallClaudeUserScope(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"install", "claude", "--scope", "user"}, strings.NewReader(""), &out, &out); err != nil {
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
	if err := run(context.Background(), []string{"install", "codex", "--url", "http://askd.internal:7777/", "--question-timeout", "10m"}, strings.NewReader(""), &out, &out); err != nil {
		t.Fatal(err)
	}
	golden(t, filepath.Join("testdata", "install", "codex.toml"), out.Bytes())
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs:\n%s\nwant:\n%s", path, got, want)
	}
}
