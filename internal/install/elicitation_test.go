package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// userSettings is a project's .claude/settings.json before askd: the user's
// own hooks, among them an Elicitation hook for one MCP server.
const userSettings = `{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "Elicitation": [{"matcher": "github", "hooks": [{"type": "command", "command": "./answer-github.sh"}]}]
  },
  "model": "opus"
}`

// installClaudeIn runs askd install claude in dir with args and returns
// its stdout and stderr.
func installClaudeIn(t *testing.T, dir string, args ...string) (stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	args = append([]string{"claude", "--dir", dir}, args...)
	if err := askdInstall(args, &out, &errb); err != nil {
		t.Fatalf("askd install %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

// TestInstallClaudeElicitation: --elicitation adds askd's Elicitation hook
// beside the user's own (golden file), says on stderr that interactive
// Claude Code then asks in the inbox instead of its dialog, and a second
// run changes nothing. A later install without --elicitation takes askd's
// hook out again, keeping the user's, and says so; after that, nothing more
// changes.
func TestInstallClaudeElicitation(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		out, errOut := installClaudeIn(t, dir, "--elicitation")
		if i == 1 && strings.Contains(out, "wrote") {
			t.Fatalf("second run changed files:\n%s", out)
		}
		for _, want := range []string{"Interactive Claude Code now sends them to askd too, instead of showing its own dialog", "Claude Code waits 600s for the hook", "at most 9m"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("run %d: stderr lacks %q:\n%s", i+1, want, errOut)
			}
		}
		if strings.Contains(out, "its own dialog") {
			t.Errorf("the note went to stdout:\n%s", out)
		}
		got, err := os.ReadFile(settings)
		if err != nil {
			t.Fatal(err)
		}
		testserver.Golden(t, filepath.Join("testdata", "settings-elicitation.json"), got)
	}

	for i := range 2 {
		out, errOut := installClaudeIn(t, dir)
		took := strings.Contains(errOut, "took out askd's Elicitation hook")
		if (i == 0) != took || (i == 0) != strings.Contains(out, "wrote     "+settings) {
			t.Errorf("run %d without --elicitation: stdout %q, stderr %q", i+1, out, errOut)
		}
		got, err := os.ReadFile(settings)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(got, []byte("askd hook")) || !bytes.Contains(got, []byte("./answer-github.sh")) {
			t.Fatalf("settings lost the user's Elicitation hook or askd's others:\n%s", got)
		}
		if elicitation := claudeEventHooks(t, dir, "Elicitation"); len(elicitation) != 1 || elicitation[0].Command != "./answer-github.sh" {
			t.Fatalf("Elicitation hooks %+v, want the user's only", elicitation)
		}
	}
}

// TestInstallClaudeElicitationRemovedLeavesNoEvent: where askd's was the
// only Elicitation hook, install without --elicitation takes the event out
// whole: the settings are what a plain install writes (golden file).
func TestInstallClaudeElicitationRemovedLeavesNoEvent(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check-bash.sh"}]}]
  },
  "model": "opus",
  "env": {"NODE_ENV": "test", "DEBUG": "1"}
}`), 0o644); err != nil {
		t.Fatal(err)
	}
	installClaudeIn(t, dir, "--elicitation")
	if len(claudeEventHooks(t, dir, "Elicitation")) != 1 {
		t.Fatal("no Elicitation hook after install --elicitation")
	}
	installClaudeIn(t, dir)
	got, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	testserver.Golden(t, filepath.Join("testdata", "settings.json"), got)
}

// TestInstallClaudeElicitationTimeout: Claude Code's timeout for the
// Elicitation hook is a minute past --elicitation-timeout, never below the
// other hooks' 600 s; the other hooks keep theirs; a timeout that is not
// above 0 is refused, writing nothing.
func TestInstallClaudeElicitationTimeout(t *testing.T) {
	cases := []struct {
		name    string
		timeout string
		want    float64
		note    string
	}{
		{"default", "", 600, "at most 9m"},
		{"short", "30s", 600, "at most 9m"},
		{"nine minutes", "9m", 600, "at most 9m"},
		{"just above", "9m30s", 630, "at most 9m30s"},
		{"half an hour", "30m", 1860, "at most 30m"},
		{"an hour and a bit", "61m1s", 3721, "at most 1h1m1s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := []string{"--elicitation"}
			if c.timeout != "" {
				args = append(args, "--elicitation-timeout", c.timeout)
			}
			_, errOut := installClaudeIn(t, dir, args...)
			if !strings.Contains(errOut, c.note) {
				t.Errorf("stderr lacks %q:\n%s", c.note, errOut)
			}
			for event, h := range claudeHooks(t, dir) {
				want := float64(600)
				if event == "Elicitation" {
					want = c.want
				}
				if h.Type != "command" || !strings.HasSuffix(h.Command, "; exec askd hook") || h.Timeout != want {
					t.Errorf("%s hook: %s %q timeout %v, want askd hook, timeout %v", event, h.Type, h.Command, h.Timeout, want)
				}
			}
			if _, ok := claudeHooks(t, dir)["Elicitation"]; !ok {
				t.Error("no Elicitation hook")
			}
		})
	}
	for _, bad := range []string{"0", "-1m", "soon"} {
		t.Run("refuses "+bad, func(t *testing.T) {
			dir := t.TempDir()
			var out bytes.Buffer
			err := askdInstall([]string{"claude", "--dir", dir, "--elicitation", "--elicitation-timeout", bad}, &out, &out)
			var u cli.UsageError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), "--elicitation-timeout") {
				t.Fatalf("err = %v, want a usage error naming --elicitation-timeout", err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) > 0 || out.Len() > 0 {
				t.Errorf("wrote %d files and printed %q anyway", len(entries), out.String())
			}
		})
	}
}

// claudeEventHooks reads the project's .claude/settings.json and returns
// every hook of event, in order.
func claudeEventHooks(t *testing.T, dir, event string) []claudeHook {
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
	var hooks []claudeHook
	for _, g := range settings.Hooks[event] {
		hooks = append(hooks, g.Hooks...)
	}
	return hooks
}
