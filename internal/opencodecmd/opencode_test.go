package opencodecmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// fakeOpenCode writes a stand-in for opencode: each run appends a line to
// log, ASKD_SESSION then its arguments, separated by |, and reports the
// session id ses_fake in the file askd's plugin would (unless report is
// false); its runs exit with statuses, in turn (the last one from then on).
func fakeOpenCode(t *testing.T, report bool, statuses ...int) (program, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "runs")
	count := filepath.Join(dir, "count")
	script := "#!/bin/sh\n" +
		"{ printf '%s' \"$ASKD_SESSION\"; for a in \"$@\"; do printf '|%s' \"$a\"; done; echo; } >> " + log + "\n" +
		"echo x >> " + count + "\n" +
		"n=$(wc -l < " + count + ")\n"
	if report {
		script += "[ -s \"$" + SessionFileVariable + "\" ] || printf ses_fake > \"$" + SessionFileVariable + "\"\n"
	}
	script += "echo \"opencode run $n\"\n"
	for i, s := range statuses {
		if i == len(statuses)-1 {
			script += "exit " + itoa(s) + "\n"
			break
		}
		script += "[ \"$n\" -eq " + itoa(i+1) + " ] && exit " + itoa(s) + "\n"
	}
	program = filepath.Join(dir, "opencode")
	if err := os.WriteFile(program, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return program, log
}

func itoa(n int) string { return strconv.Itoa(n) }

// runs reads the stand-in's runs: per run, its ASKD_SESSION and arguments.
func runs(t *testing.T, log string) [][]string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		return nil
	}
	var out [][]string
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		out = append(out, strings.Split(line, "|"))
	}
	return out
}

// opencode runs askd opencode with args, the server's agent token and
// session s1, in the background.
func opencode(srv *testserver.Server, args ...string) (out *bytes.Buffer, done <-chan error) {
	out = new(bytes.Buffer)
	env := map[string]string{"ASKD_TOKEN": srv.AgentToken, "ASKD_URL": srv.URL, "ASKD_SESSION": "s1"}
	e := &cli.Env{Stdin: strings.NewReader(""), Stdout: out, Stderr: out, Getenv: func(k string) string { return env[k] }}
	ch := make(chan error, 1)
	go func() { ch <- Command(context.Background(), e, args) }()
	return out, ch
}

// TestOpenCodeGoesOnWithAnswers: askd opencode runs opencode run with the
// arguments, and an answer given after the run (an attention ask the run
// left pending) is the next prompt of the same OpenCode session, with the
// first run's options less its message; told once. It exits with
// OpenCode's last status.
func TestOpenCodeGoesOnWithAnswers(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	a, err := srv.Agent("s1").Create(t.Context(), &askd.AskInput{Kind: askd.KindReady, Title: "Ready for review"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	program, log := fakeOpenCode(t, true, 0, 3)
	out, done := opencode(srv, "--opencode", program, "--", "--auto", "-m", "fake/m", "--title", "T", "fix", "the test")
	testserver.Eventually(t, "the first run", func() bool { return len(runs(t, log)) == 1 })
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "ship it"}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; cli.ExitCode(err) != 3 {
		t.Fatalf("askd opencode: %v (status %d), want OpenCode's 3\n%s", err, cli.ExitCode(err), out)
	}
	got := runs(t, log)
	if len(got) != 2 || !slices.Equal(got[0], []string{"s1", "run", "--auto", "-m", "fake/m", "--title", "T", "fix", "the test"}) {
		t.Fatalf("runs %q", got)
	}
	second := got[1]
	if !slices.Equal(second[:6], []string{"s1", "run", "--auto", "-m", "fake/m", "-s"}) || second[6] != "ses_fake" || len(second) != 8 || !strings.Contains(second[7], "ship it") {
		t.Fatalf("the second run %q, want the session continued with the answer", second)
	}
	if !strings.Contains(out.String(), "opencode run 1\n") || !strings.Contains(out.String(), "opencode run 2\n") {
		t.Errorf("OpenCode's output is not the command's: %q", out)
	}
	shown, err := srv.Human().Show(t.Context(), a.ID)
	if err != nil || shown.ToldAt == nil {
		t.Fatalf("the ask %+v, %v; want it told", shown, err)
	}
}

// TestOpenCodeOnce: with nothing to tell, askd opencode runs OpenCode once
// and exits with its status; a failed run is not continued; without the
// session's id (askd's plugin missing) an answer is printed, not lost,
// and the run's status stands.
func TestOpenCodeOnce(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	program, log := fakeOpenCode(t, true, 0)
	if _, done := opencode(srv, "--opencode", program, "--", "--auto", "hello"); <-done != nil {
		t.Fatal("want status 0")
	}
	if n := len(runs(t, log)); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}

	a, err := srv.Agent("s1").Create(t.Context(), &askd.AskInput{Kind: askd.KindReady, Title: "Ready"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "later"}); err != nil {
		t.Fatal(err)
	}
	program, log = fakeOpenCode(t, true, 5)
	if _, done := opencode(srv, "--opencode", program, "--", "hello"); cli.ExitCode(<-done) != 5 || len(runs(t, log)) != 1 {
		t.Fatalf("a failed run: want status 5 and no continuation, %d runs", len(runs(t, log)))
	}
	program, log = fakeOpenCode(t, false, 0)
	out, done := opencode(srv, "--opencode", program, "--", "hello")
	if err := <-done; err != nil || len(runs(t, log)) != 1 || !strings.Contains(out.String(), "OpenCode's session is not known") || !strings.Contains(out.String(), "later") {
		t.Fatalf("no session id: %v, %d runs\n%s", err, len(runs(t, log)), out)
	}
}

// TestContinuing: a continuation keeps opencode run's options, less those
// naming the session, the title, a command or files, and the message.
func TestContinuing(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"--auto", "fix it"}, []string{"--auto"}},
		{[]string{"-m", "p/m", "--agent=build", "--format", "json", "-s", "ses_1", "go on"}, []string{"-m", "p/m", "--agent=build", "--format", "json"}},
		{[]string{"-c", "--fork", "--title", "x", "-f", "a.txt", "--command", "init", "--print-logs", "msg", "--", "-not-a-flag"}, []string{"--print-logs"}},
	} {
		if got := continuing(c.in); !slices.Equal(got, c.want) {
			t.Errorf("continuing(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
