package install

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPGateUndoHint: the --undo line install prints last, run by sh as a
// person pasting it would, is the command that puts the entry back, though
// the config's path holds a space and a quote (Claude Desktop's file is
// under "Application Support" on macOS).
func TestMCPGateUndoHint(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh:", err)
	}
	dir := filepath.Join(t.TempDir(), "Sam's Mac", "Library", "Application Support", "Claude")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "claude_desktop_config.json")
	orig := []byte(`{"mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}}` + "\n")
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ASKD_TOKEN": testToken}
	out, err := mcpGate(t, env, "--config", path, "--server", "filesystem")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	hint := strings.TrimSpace(lines[len(lines)-1])

	// sh splits the line into words; printf writes each, NUL-ended.
	words, err := exec.Command(sh, "-c", "printf '%s\\0' "+hint).Output()
	if err != nil {
		t.Fatalf("sh on %q: %v", hint, err)
	}
	argv := strings.Split(strings.TrimSuffix(string(words), "\x00"), "\x00")
	if len(argv) < 3 || argv[0] != "askd" || argv[1] != "install" || argv[2] != "mcp-gate" {
		t.Fatalf("the last line %q is not an askd install mcp-gate command: %q", hint, argv)
	}
	if out, err := mcpGate(t, env, argv[3:]...); err != nil {
		t.Fatalf("the printed command %q: %v\n%s", hint, err, out)
	}
	if got := readBytes(t, path); !bytes.Equal(got, orig) {
		t.Fatalf("after the printed --undo the file holds\n%s\nwant the original\n%s", got, orig)
	}
}
