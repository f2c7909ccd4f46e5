package hookcmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/cli"
)

// askd hook runs against a server in the installers' tests, which run the
// hook commands they write under every POSIX shell, and in the real-CLI
// tests (internal/agentcli). Here: what it does without one.

// TestHookFailsWithStatus1: every failure, a mistake in the command line
// included, is one line on stderr (as main prints the error) and exit
// status 1, which Claude Code and Codex read as a hook error that decides
// nothing; never 2, a blocking decision to both. -h is status 0.
func TestHookFailsWithStatus1(t *testing.T) {
	token := map[string]string{"ASKD_TOKEN": "askd_a_test"}
	for _, c := range []struct {
		name  string
		args  []string
		env   map[string]string
		stdin string
		says  string
	}{
		{"no token", nil, nil, `{}`, "hook: ASKD_TOKEN is not set where the agent runs"},
		{"an unknown flag", []string{"--nope"}, token, `{}`, "hook: unknown flag --nope"},
		{"a bad flag value", []string{"--wait", "soon"}, token, `{}`, `--wait: "soon" is not a duration`},
		{"an argument", []string{"stop"}, token, `{}`, `hook: unexpected argument "stop" (the hook input comes on stdin)`},
		{"a human token", nil, map[string]string{"ASKD_TOKEN": "askd_h_test"}, `{}`, "that is a human token"},
		{"a bad URL", nil, map[string]string{"ASKD_TOKEN": "askd_a_test", "ASKD_URL": "ftp://x"}, `{}`, "is not an http(s) URL"},
		{"input not JSON", nil, token, `stop`, "hook: the hook input on stdin is not JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			e := &cli.Env{Stdin: strings.NewReader(c.stdin), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return c.env[k] }}
			err := Command(t.Context(), e, c.args)
			if code := cli.ExitCode(err); code != 1 {
				t.Errorf("exit status %d (%v), want 1", code, err)
			}
			if err == nil || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line saying %q", err, c.says)
			}
			if out.Len() > 0 || errOut.Len() > 0 {
				t.Errorf("printed %q and %q itself; main prints the error", out.String(), errOut.String())
			}
		})
	}
	var out bytes.Buffer
	e := &cli.Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
	if err := Command(t.Context(), e, []string{"-h"}); cli.ExitCode(err) != 0 || !strings.Contains(out.String(), "Usage: askd hook") {
		t.Errorf("-h: %v, %q", err, out.String())
	}
}

// TestCommandLine: the hook command askd install writes runs askd hook with
// --default-url only for a server other than the default, and says on
// stderr, exiting 1, when askd is not on PATH; IsAskd knows it, and the
// curl lines of earlier installs, from the user's own hooks.
func TestCommandLine(t *testing.T) {
	const missing = `command -v askd >/dev/null 2>&1 || { echo "` + missingAskd + `" >&2; exit 1; }; `
	for _, c := range []struct {
		got, want string
	}{
		{CommandLine(cli.DefaultURL, ""), missing + "exec askd hook"},
		{CommandLine(cli.DefaultURL, "10m"), missing + "exec askd hook --wait 10m"},
		{CommandLine("https://askd.example", ""), missing + "exec askd hook --default-url 'https://askd.example'"},
		{CommandLineArgs("https://askd.example", "--only-policies"), missing + "exec askd hook --default-url 'https://askd.example' --only-policies"},
	} {
		if c.got != c.want {
			t.Errorf("got  %s\nwant %s", c.got, c.want)
		}
		if !IsAskd(c.got) {
			t.Errorf("IsAskd(%q) = false", c.got)
		}
	}
	if !IsAskd(`curl -s -X POST http://127.0.0.1:7777/hooks/claude`) || IsAskd("notify-send done") {
		t.Error("IsAskd: an earlier install's curl line, or the user's own hook, misread")
	}
	for _, bad := range []string{"http://askd.example/}", "http://askd.example/$HOME", `http://askd".example`, "http://askd.example/a b", "ftp://askd.example", "http://ask\u00e9.example"} {
		if err := CheckURL(bad); err == nil || cli.ExitCode(err) != 2 || !strings.HasPrefix(err.Error(), "--url: ") {
			t.Errorf("CheckURL(%q) = %v, want a usage error naming --url", bad, err)
		}
	}
	if err := CheckURL("https://askd.example:7777/base"); err != nil {
		t.Errorf("CheckURL of a plain URL: %v", err)
	}
}
