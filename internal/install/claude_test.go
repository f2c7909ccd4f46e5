package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/jsonedit"
)

// TestInstallClaudeKeepsTheUsersSettings runs `askd install claude` twice on
// a settings.json with unsorted keys, four-space indentation and hooks of
// the user's in every event askd uses, one of them in a group with an askd
// hook of an earlier install: the user's keys and hooks keep their order,
// askd's earlier group is replaced where it stood, each event ends up with
// one askd hook, and the second run changes nothing.
func TestInstallClaudeKeepsTheUsersSettings(t *testing.T) {
	dir := t.TempDir()
	settings := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	oldAskd := `{"type": "http", "url": "http://old.example:7777/hooks/claude", "timeout": 600}`
	if err := os.WriteFile(settings, []byte(`{
    "statusLine": {"type": "command", "command": "~/bin/status"},
    "hooks": {
        "Stop": [
            {"hooks": [{"type": "command", "command": "notify-send done"}, `+oldAskd+`]}
        ],
        "PermissionRequest": [
            {"matcher": "*", "hooks": [`+oldAskd+`]},
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./audit.sh"}]}
        ],
        "PreToolUse": [
            {"matcher": "Write", "hooks": [{"command": "./lint.sh", "type": "command", "timeout": 1.5}]}
        ],
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "gofmt -l ."}]}]
    },
    "env": {"ZED": "1", "ALPHA": "2"},
    "apiKeyHelper": "~/bin/key"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	var first []byte
	for i := range 2 {
		var out, errb bytes.Buffer
		if err := askdInstall([]string{"claude", "--dir", dir}, &out, &errb); err != nil {
			t.Fatalf("run %d: %v\n%s", i+1, err, errb.String())
		}
		data, err := os.ReadFile(settings)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			if !strings.Contains(out.String(), "unchanged "+settings) || !bytes.Equal(data, first) {
				t.Fatalf("second run changed settings.json:\n%s", out.String())
			}
			break
		}
		first = data
		if !json.Valid(data) || !strings.HasPrefix(string(data), "{\n    \"statusLine\": {\n        \"type\"") || !strings.Contains(string(data), `"timeout": 1.5`) {
			t.Errorf("layout or numbers not kept:\n%s", data)
		}
		root, err := jsonedit.Decode(data)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"statusLine", "hooks", "env", "apiKeyHelper", "permissions"}; !slices.Equal(root.Keys(), want) {
			t.Errorf("keys %q, want %q", root.Keys(), want)
		}
		env, _ := root.Object("env")
		if want := []string{"ZED", "ALPHA"}; !slices.Equal(env.Keys(), want) {
			t.Errorf("env keys %q, want %q", env.Keys(), want)
		}
		hooks, _ := root.Object("hooks")
		if want := []string{"Stop", "PermissionRequest", "PreToolUse", "PostToolUse"}; !slices.Equal(hooks.Keys(), want) {
			t.Errorf("events %q, want %q", hooks.Keys(), want)
		}
		// Per event, each group as matcher:commands, askd's hook as "askd".
		want := map[string][]string{
			"Stop":              {":notify-send done", ":askd"},
			"PermissionRequest": {"*:askd", "Bash:./audit.sh"},
			"PreToolUse":        {"Write:./lint.sh", "AskUserQuestion:askd"},
			"PostToolUse":       {"Edit:gofmt -l ."},
		}
		for event, groups := range want {
			list, _ := hooks.Array(event)
			var got []string
			for _, g := range list {
				gm := g.(*jsonedit.Object)
				matcher, _ := gm.Get("matcher")
				handlers, _ := gm.Array("hooks")
				var names []string
				for _, h := range handlers {
					hm := h.(*jsonedit.Object)
					if isAskdHook(hm) {
						names = append(names, "askd")
						continue
					}
					c, _ := hm.Get("command")
					names = append(names, c.(string))
				}
				m, _ := matcher.(string)
				got = append(got, m+":"+strings.Join(names, ","))
			}
			if !slices.Equal(got, groups) {
				t.Errorf("%s groups %q, want %q", event, got, groups)
			}
		}
	}
}

// TestInstallClaudeRefuses: settings askd cannot read are left as they are.
func TestInstallClaudeRefuses(t *testing.T) {
	cases := []struct{ name, settings, want string }{
		{"not JSON", `{"hooks": {`, "not a JSON object"},
		{"an array", `[]`, "not a JSON object"},
		{"hooks not an object", `{"hooks": "none"}`, `"hooks" is a string, not an object`},
		{"an event not an array", `{"hooks": {"Stop": {}}}`, `"Stop" is an object, not an array`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			settings := filepath.Join(dir, ".claude", "settings.json")
			if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(settings, []byte(c.settings), 0o644); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err := askdInstall([]string{"claude", "--dir", dir}, &out, &out)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), settings) {
				t.Fatalf("err = %v, want one naming %s and %q", err, settings, c.want)
			}
			if data, _ := os.ReadFile(settings); string(data) != c.settings {
				t.Errorf("settings.json changed to %q", data)
			}
		})
	}
}

// TestInstallClaudeRefusesURL: a --url the hook command cannot carry as it
// is (it becomes the default of ${ASKD_URL:-...} in a shell word) is a usage
// error, and nothing is written.
func TestInstallClaudeRefusesURL(t *testing.T) {
	for _, u := range []string{"http://askd.example/}", "http://askd.example/$HOME", `http://askd".example`, "http://askd.example/a b", "ftp://askd.example"} {
		dir := t.TempDir()
		var out bytes.Buffer
		err := askdInstall([]string{"claude", "--dir", dir, "--url", u}, &out, &out)
		var usage cli.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--url") {
			t.Errorf("--url %s: err = %v, want a usage error naming --url", u, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) > 0 {
			t.Errorf("--url %s: wrote %d files", u, len(entries))
		}
	}
}

// TestInstallClaudeKeepsModeAndSymlink: a settings.json that is a symlink is
// edited where it points, and a file's mode is kept.
func TestInstallClaudeKeepsModeAndSymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(dir, "dotfiles-settings.json")
	if err := os.WriteFile(target, []byte(`{"model": "opus"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, ".claude", "settings.json")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	var out bytes.Buffer
	if err := askdInstall([]string{"claude", "--dir", dir}, &out, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("settings.json is no longer a symlink (%v)", err)
	}
	info, err := os.Stat(target)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("target: %v, mode %v; want 0600", err, info.Mode().Perm())
	}
	if data, _ := os.ReadFile(target); !strings.Contains(string(data), `"model": "opus"`) || !strings.Contains(string(data), "askd hook") {
		t.Errorf("target holds %s", data)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, ".claude")); len(entries) != 2 { // settings.json and skills
		t.Errorf(".claude holds %v (a temporary file left?)", entries)
	}
}
