//go:build unix

package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
)

// askd gate run (SPEC §12) as a CI step runs it: the real binary against a
// real server, with a real command, answered by a person through the API.

// gateProc is one askd gate run of the built binary, running.
type gateProc struct {
	cmd            *exec.Cmd
	stdout, stderr *testserver.SyncBuffer
	exited         chan struct{}
}

// startGate starts `askd gate run ARGS...` with srv's agent token asking in
// session, stdin as its standard input; no ASKD_* variable of the test's own
// environment reaches it.
func startGate(t *testing.T, srv *testserver.Server, session, stdin string, args ...string) *gateProc {
	t.Helper()
	g := &gateProc{stdout: &testserver.SyncBuffer{}, stderr: &testserver.SyncBuffer{}, exited: make(chan struct{})}
	g.cmd = exec.Command(testserver.Binary(t), append([]string{"gate", "run"}, args...)...)
	g.cmd.Env = gateEnv(srv.URL, srv.AgentToken, session)
	g.cmd.Stdin = strings.NewReader(stdin)
	g.cmd.Stdout, g.cmd.Stderr = g.stdout, g.stderr
	// Its own process group, so that a test that fails leaves no command
	// behind (see Cleanup); and a command's child holding stdout open past
	// askd's exit does not hold up Wait.
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	g.cmd.WaitDelay = 5 * time.Second
	if err := g.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { g.cmd.Wait(); close(g.exited) }()
	t.Cleanup(func() {
		syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
		<-g.exited
		if t.Failed() {
			t.Logf("askd gate run %q:\nstdout: %s\nstderr: %s", args, g.stdout, g.stderr)
		}
	})
	return g
}

// gateEnv is the test's environment without ASKD_* variables, with url,
// token and session as ASKD_URL, ASKD_TOKEN and ASKD_SESSION.
func gateEnv(url, token, session string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ASKD_") {
			env = append(env, kv)
		}
	}
	return append(env, "ASKD_URL="+url, "ASKD_TOKEN="+token, "ASKD_SESSION="+session)
}

// exit waits for askd gate run to end and returns its exit status.
func (g *gateProc) exit(t *testing.T) int {
	t.Helper()
	select {
	case <-g.exited:
	case <-time.After(time.Minute):
		t.Fatalf("askd gate run still running; stderr: %s", g.stderr)
	}
	return g.cmd.ProcessState.ExitCode()
}

// gateCLI runs askd gate with args, as askd's main does, and returns its
// stdout, stderr and error.
func gateCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Command(t.Context(), &cli.Env{Stdout: &out, Stderr: &errOut, Getenv: os.Getenv}, args)
	return out.String(), errOut.String(), err
}

// pendingAsk waits for session's one pending ask and returns it.
func pendingAsk(t *testing.T, srv *testserver.Server, session string) *askd.Ask {
	t.Helper()
	asks := srv.Pending(t, session, 1)
	if len(asks) != 1 {
		t.Fatalf("%d pending asks in session %q, want 1", len(asks), session)
	}
	return asks[0]
}

// asksIn returns every ask of session, pending or settled.
func asksIn(t *testing.T, srv *testserver.Server, session string) []*askd.Ask {
	t.Helper()
	asks, err := srv.Human().List(t.Context(), client.ListOptions{Session: session})
	if err != nil {
		t.Fatal(err)
	}
	return asks
}

// askdLines checks that every line of stderr that is not one of CMD's
// (those in cmdLines) starts with "askd gate:", and returns askd's lines.
func askdLines(t *testing.T, stderr string, cmdLines ...string) string {
	t.Helper()
	var own []string
	for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "askd gate: "):
			own = append(own, line)
		case !contains(cmdLines, line):
			t.Errorf("stderr line %q neither askd's (askd gate: ...) nor the command's", line)
		}
	}
	return strings.Join(own, "\n")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestGateRunApproved: once approved, the command runs with stdin, stdout
// and stderr passed through untouched, and askd gate run exits with its
// status; the ask is an approval of tool "gate run" whose payload holds the
// --payload fields and the command line.
func TestGateRunApproved(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	for _, tt := range []struct {
		name   string
		script string
		status int
	}{
		{"exit 0", `cat; echo "to stderr" >&2`, 0},
		{"exit 3", `cat; echo "to stderr" >&2; exit 3`, 3},
		{"exit 1, told apart by stderr", `cat; echo "to stderr" >&2; exit 1`, 1},
		{"killed by SIGTERM: 128+15", `cat; echo "to stderr" >&2; kill -TERM $$`, 128 + 15},
	} {
		t.Run(tt.name, func(t *testing.T) {
			session := "ci-" + strings.NewReplacer(" ", "-", ",", "", ":", "", "+", "").Replace(tt.name)
			g := startGate(t, srv, session, "line one\nline two\n",
				"--title", "Deploy to production", "--details", "build 42", "--payload", `{"env": "prod", "replicas": 3}`,
				"--", "sh", "-c", tt.script, "deploy step")
			a := pendingAsk(t, srv, session)
			if a.Kind != askd.KindApproval || a.ToolName != "gate run" || a.Title != "Deploy to production" || a.Details != "build 42" {
				t.Errorf("the ask: %s, tool %q, %q, %q; want an approval of tool \"gate run\" with the title and details given", a.Kind, a.ToolName, a.Title, a.Details)
			}
			var payload map[string]any
			if err := json.Unmarshal(a.Payload, &payload); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"env": "prod", "replicas": 3.0, "command": "sh -c '" + strings.ReplaceAll(tt.script, "'", `'\''`) + "' 'deploy step'"}
			if fmt.Sprint(payload) != fmt.Sprint(want) {
				t.Errorf("payload %v, want %v", payload, want)
			}
			if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
				t.Fatal(err)
			}
			if got := g.exit(t); got != tt.status {
				t.Errorf("exit status %d, want the command's, %d", got, tt.status)
			}
			if out := g.stdout.String(); out != "line one\nline two\n" {
				t.Errorf("stdout %q, want the command's stdin back, and nothing else", out)
			}
			own := askdLines(t, g.stderr.String(), "to stderr")
			if !strings.Contains(g.stderr.String(), "to stderr\n") || !strings.Contains(own, fmt.Sprintf("approval #%d approved by %s; running sh -c", a.ID, srv.HumanName)) {
				t.Errorf("stderr %q: want askd's line saying the command runs, then the command's own", g.stderr)
			}
			if strings.Contains(own, "did not run") {
				t.Errorf("stderr %q says the command did not run", own)
			}
		})
	}
}

// TestGateRunModified: the payload as the person edited it reaches the
// command in ASKD_PAYLOAD; an edit of its command runs nothing.
func TestGateRunModified(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	marker := filepath.Join(t.TempDir(), "ran")
	script := `printf '%s' "$ASKD_PAYLOAD"; touch "$0"`
	line := "sh -c '" + strings.ReplaceAll(script, "'", `'\''`) + "' " + marker

	g := startGate(t, srv, "modify", "", "--title", "Scale", "--payload", `{"replicas": 3}`, "--", "sh", "-c", script, marker)
	a := pendingAsk(t, srv, "modify")
	edited := fmt.Sprintf(`{"command":%q,"replicas":5,"note":"not on Friday"}`, line)
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(edited)}); err != nil {
		t.Fatal(err)
	}
	if got := g.exit(t); got != 0 {
		t.Fatalf("exit status %d, want 0", got)
	}
	var got, want map[string]any
	if err := json.Unmarshal([]byte(g.stdout.String()), &got); err != nil {
		t.Fatalf("ASKD_PAYLOAD %q: %v", g.stdout, err)
	}
	json.Unmarshal([]byte(edited), &want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ASKD_PAYLOAD %v, want the edited payload %v", got, want)
	}

	// The person changed the command: what runs is only what was asked.
	os.Remove(marker)
	g = startGate(t, srv, "modify-command", "", "--title", "Scale", "--", "sh", "-c", script, marker)
	a = pendingAsk(t, srv, "modify-command")
	changed := fmt.Sprintf(`{"command":%q}`, "sh -c 'rm -rf /'")
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(changed)}); err != nil {
		t.Fatal(err)
	}
	if got := g.exit(t); got != 1 {
		t.Errorf("exit status %d, want 1", got)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran (%v) though its command was edited", err)
	}
	if own := askdLines(t, g.stderr.String()); !strings.Contains(own, "command changed") || !strings.HasSuffix(own, "the command did not run") {
		t.Errorf("stderr %q, want it to say the command was changed and did not run", own)
	}
}

// TestGateRunRefused: rejected, dismissed or withdrawn, the command never
// runs; askd gate run exits 1 with the comment or reply on stderr.
func TestGateRunRefused(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	for _, tt := range []struct {
		name   string
		settle func(ctx context.Context, id int64, session string) error
		want   []string
	}{
		{"rejected", func(ctx context.Context, id int64, _ string) error {
			_, err := srv.Human().Answer(ctx, id, &askd.Answer{Decision: askd.DecisionRejected, Comment: "not during the freeze\nask again on Monday"})
			return err
		}, []string{"was rejected by " + srv.HumanName + ": not during the freeze", "askd gate: ask again on Monday"}},
		{"dismissed", func(ctx context.Context, id int64, _ string) error {
			_, err := srv.Human().Dismiss(ctx, id, "wrong channel")
			return err
		}, []string{"was dismissed by " + srv.HumanName + ": wrong channel"}},
		{"withdrawn", func(ctx context.Context, id int64, session string) error {
			_, err := srv.Agent(session).Withdraw(ctx, id)
			return err
		}, []string{"was withdrawn"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "ran")
			session := "refused-" + tt.name
			g := startGate(t, srv, session, "", "--title", "Drop the old table", "--", "touch", marker)
			a := pendingAsk(t, srv, session)
			if err := tt.settle(t.Context(), a.ID, session); err != nil {
				t.Fatal(err)
			}
			if got := g.exit(t); got != 1 {
				t.Errorf("exit status %d, want 1", got)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the command ran (%v)", err)
			}
			own := askdLines(t, g.stderr.String())
			for _, w := range append(tt.want, fmt.Sprintf("approval #%d", a.ID)) {
				if !strings.Contains(own, w) {
					t.Errorf("stderr %q, want %q", own, w)
				}
			}
			if !strings.HasSuffix(own, "askd gate: the command did not run") || g.stdout.String() != "" {
				t.Errorf("stdout %q, stderr %q: want nothing on stdout, and the last line saying the command did not run", g.stdout, own)
			}
		})
	}
}

// TestGateRunUndecided: no decision within --wait is exit 75, naming the
// ask that is still pending; so is askd unreachable, naming none.
func TestGateRunUndecided(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	marker := filepath.Join(t.TempDir(), "ran")
	g := startGate(t, srv, "undecided", "", "--title", "Deploy", "--wait", "300ms", "--", "touch", marker)
	if got := g.exit(t); got != 75 {
		t.Errorf("exit status %d, want 75", got)
	}
	a := pendingAsk(t, srv, "undecided")
	want := fmt.Sprintf("approval #%d is still pending (askd check %d)", a.ID, a.ID)
	if own := askdLines(t, g.stderr.String()); !strings.Contains(own, "no decision within 300ms: "+want) || !strings.HasSuffix(own, "askd gate: the command did not run") {
		t.Errorf("stderr %q, want %q", own, want)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran (%v)", err)
	}

	// Nothing listens at the address askd is said to be at.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + l.Addr().String()
	l.Close()
	cmd := exec.Command(testserver.Binary(t), "gate", "run", "--title", "Deploy", "--", "touch", marker)
	cmd.Env = gateEnv(gone, srv.AgentToken, "unreachable")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 75 {
		t.Errorf("askd unreachable: exit status %d (%v), want 75", code, err)
	}
	if own := askdLines(t, string(out)); !strings.Contains(own, "nothing answers there") || !strings.Contains(own, "nothing was asked") {
		t.Errorf("askd unreachable: %q, want it said", own)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran (%v)", err)
	}
}

// TestGateRunAskdGoesAway: askd unreachable while askd gate run waits: it
// looks again until --wait is over, then exits 75 naming the approval.
func TestGateRunAskdGoesAway(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	marker := filepath.Join(t.TempDir(), "ran")
	g := startGate(t, srv, "goes-away", "", "--title", "Deploy", "--wait", "2s", "--", "touch", marker)
	a := pendingAsk(t, srv, "goes-away")
	// Gone once askd gate run has the ask back, and waits on it.
	testserver.Eventually(t, "askd gate run waiting", func() bool {
		return strings.Contains(g.stderr.String(), fmt.Sprintf("waiting up to 2s for approval #%d: Deploy", a.ID))
	})
	srv.HTTP.Listener.Close() // no new connection from here on
	srv.HTTP.CloseClientConnections()
	if got := g.exit(t); got != 75 {
		t.Errorf("exit status %d, want 75", got)
	}
	want := fmt.Sprintf("approval #%d is still pending (askd check %d)", a.ID, a.ID)
	if own := askdLines(t, g.stderr.String()); !strings.Contains(own, want) || !strings.Contains(own, "askd at "+srv.URL) {
		t.Errorf("stderr %q, want why askd could not be reached, and %q", own, want)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran (%v)", err)
	}
}

// TestGateRunForwardsSignals: SIGTERM sent to askd gate run reaches the
// command, whose trap decides how it ends; while askd still waits, SIGTERM
// ends the wait (128+15) and the command never runs.
func TestGateRunForwardsSignals(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	marker := filepath.Join(t.TempDir(), "trapped")
	// The command says "ready" once its trap is set, then waits on a
	// child (wait returns at once on a trapped signal, sleep would not).
	script := `trap 'kill $!; echo TERM > "$0"; exit 7' TERM; echo ready; sleep 600 & wait $!`
	g := startGate(t, srv, "signals", "", "--title", "Long job", "--", "sh", "-c", script, marker)
	a := pendingAsk(t, srv, "signals")
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the command ready", func() bool { return g.stdout.String() == "ready\n" })
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if got := g.exit(t); got != 7 {
		t.Errorf("exit status %d, want the command's, 7", got)
	}
	if b, err := os.ReadFile(marker); string(b) != "TERM\n" {
		t.Errorf("the command's trap wrote %q (%v), want TERM", b, err)
	}

	// Before a decision: the wait ends, the ask stays pending.
	os.Remove(marker)
	g = startGate(t, srv, "signals-waiting", "", "--title", "Long job", "--", "touch", marker)
	a = pendingAsk(t, srv, "signals-waiting")
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	stoppedPending(t, g, a, marker)
}

// stoppedPending checks how g ended after a SIGTERM before its command ran:
// 143, its last line naming ask a as still pending and saying that the
// command did not run, and no marker, the file the command would make.
func stoppedPending(t *testing.T, g *gateProc, a *askd.Ask, marker string) {
	t.Helper()
	if got := g.exit(t); got != 128+15 {
		t.Errorf("SIGTERM before the command ran: exit status %d, want 143", got)
	}
	want := fmt.Sprintf("approval #%d is still pending (askd check %d)", a.ID, a.ID)
	if own := askdLines(t, g.stderr.String()); !strings.Contains(own, want) || !strings.HasSuffix(own, "the command did not run") {
		t.Errorf("stderr %q, want %q and that the command did not run", own, want)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran (%v)", err)
	}
}

// TestGateRunSignalWhileAsking: a signal that comes while askd's reply to
// the ask is on its way ends the gate as one that comes while it waits:
// 128+15, naming the approval left pending, not "nothing was asked". The
// reply is held in a proxy until the signal was sent.
func TestGateRunSignalWhileAsking(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(res *http.Response) error {
		if res.Request.Method == http.MethodPost && res.Request.URL.Path == "/api/asks" {
			close(held) // the ask is made: its reply is here
			<-release
		}
		return nil
	}
	front := httptest.NewServer(rp)
	t.Cleanup(front.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	via := *srv
	via.URL = front.URL
	marker := filepath.Join(t.TempDir(), "ran")
	g := startGate(t, &via, "signal-asking", "", "--title", "Long job", "--", "touch", marker)
	select {
	case <-held:
	case <-g.exited:
		t.Fatalf("askd gate run ended before askd replied: %s", g.stderr)
	}
	a := pendingAsk(t, srv, "signal-asking")
	if err := g.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	close(release)
	stoppedPending(t, g, a, marker)
	if got := pendingAsk(t, srv, "signal-asking"); got.ID != a.ID {
		t.Errorf("pending ask #%d, want #%d", got.ID, a.ID)
	}
}

// TestGateRunCommandNotFound: approved, but there is no such command: 127,
// as a shell says.
func TestGateRunCommandNotFound(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	g := startGate(t, srv, "notfound", "", "--title", "Deploy", "--", filepath.Join(t.TempDir(), "no-such-command"))
	a := pendingAsk(t, srv, "notfound")
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	if got := g.exit(t); got != 127 {
		t.Errorf("exit status %d, want 127", got)
	}
	if own := askdLines(t, g.stderr.String()); !strings.Contains(own, "no-such-command: not found") {
		t.Errorf("stderr %q, want the command named as not found", own)
	}
}

// TestGateRunMistakes: a mistake in the command line is exit 2, one line
// naming the flag, and nothing is asked.
func TestGateRunMistakes(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	t.Setenv("ASKD_URL", srv.URL)
	t.Setenv("ASKD_TOKEN", srv.AgentToken)
	t.Setenv("ASKD_SESSION", "mistakes")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no title", []string{"--", "true"}, "--title is required"},
		{"no command", []string{"--title", "T"}, "give the command to run after --"},
		{"nothing after --", []string{"--title", "T", "--"}, "give the command to run after --"},
		{"command before --", []string{"--title", "T", "make", "deploy"}, `"make": the command goes after --`},
		{"unknown flag", []string{"--titel", "T", "--", "true"}, "unknown flag --titel"},
		{"bad wait", []string{"--title", "T", "--wait", "soon", "--", "true"}, `--wait: "soon" is not a duration`},
		{"negative wait", []string{"--title", "T", "--wait", "-1s", "--", "true"}, "--wait -1s: must be 0 or more"},
		{"payload not JSON", []string{"--title", "T", "--payload", "{env: prod}", "--", "true"}, "--payload: not valid JSON"},
		{"payload not an object", []string{"--title", "T", "--payload", "[1]", "--", "true"}, "--payload: must be a JSON object"},
		{"payload with a command", []string{"--title", "T", "--payload", `{"command": "true"}`, "--", "rm", "-rf", "/"}, `--payload: has "command"`},
		{"key too long", []string{"--title", "T", "--key", strings.Repeat("k", 201), "--", "true"}, "--key: 201 characters, at most 200"},
		{"key with a line break", []string{"--title", "T", "--key", "deploy\nprod", "--", "true"}, "--key: contains a control character"},
		{"key with an escape", []string{"--title", "T", "--key", "deploy\x1b[2J", "--", "true"}, "--key: contains a control character"},
		{"key not UTF-8", []string{"--title", "T", "--key", "deploy\xff", "--", "true"}, "--key: not valid UTF-8"},
		{"title too long", []string{"--title", strings.Repeat("t", 201), "--", "true"}, "title: 201 characters, at most 200"},
		{"human token", []string{"--title", "T", "--token", srv.HumanToken, "--", "true"}, "that is a human token"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, err := gateCLI(t, append([]string{"run"}, tt.args...)...)
			if code := cli.ExitCode(err); code != 2 {
				t.Errorf("exit status %d (%v), want 2", code, err)
			}
			if out != "" || !strings.HasPrefix(errOut, "askd gate: ") || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("stdout %q, stderr %q; want one line, askd gate: ... %s", out, errOut, tt.want)
			}
		})
	}
	// A key of 200 characters is one.
	if err := checkGateKey(strings.Repeat("é", 200)); err != nil {
		t.Errorf("a key of 200 characters: %v", err)
	}
	if asks := asksIn(t, srv, "mistakes"); len(asks) != 0 {
		t.Errorf("%d asks made by mistaken command lines, want none", len(asks))
	}
}

// TestGateRunHelp: -h says how to tell askd's exit 1 from the command's.
func TestGateRunHelp(t *testing.T) {
	for _, args := range [][]string{{"run", "-h"}, {"run", "--title", "T", "--help", "--", "true"}} {
		out, errOut, err := gateCLI(t, args...)
		if cli.ExitCode(err) != 0 || errOut != "" {
			t.Errorf("askd gate %q: exit %d, stderr %q", args, cli.ExitCode(err), errOut)
		}
		for _, want := range []string{"Usage: askd gate run", "ASKD_PAYLOAD", "75", `"askd gate:"`, "--key"} {
			if !strings.Contains(out, want) {
				t.Errorf("askd gate %q: help lacks %q:\n%s", args, want, out)
			}
		}
	}
}

// TestCommandLine: the payload's command is argv as a shell would split it
// back.
func TestCommandLine(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		want string
	}{
		{[]string{"make", "deploy", "ENV=prod"}, "make deploy ENV=prod"},
		{[]string{"./deploy.sh", "--region", "eu-west-1", "a,b", "user@host:/srv"}, "./deploy.sh --region eu-west-1 a,b user@host:/srv"},
		{[]string{"echo", "two words", "", "it's"}, `echo 'two words' '' 'it'\''s'`},
		{[]string{"sh", "-c", "a; b | c $(d)"}, `sh -c 'a; b | c $(d)'`},
		{[]string{"touch", "naïve"}, "touch 'naïve'"},
	} {
		if got := commandLine(tt.argv); got != tt.want {
			t.Errorf("commandLine(%q) = %s, want %s", tt.argv, got, tt.want)
		}
	}
}

// TestGateRunKey: run again with the same --key, askd gate run finds the
// same approval: approved, it runs the command at once; rejected, it exits 1
// at once with the comment; still pending, it waits on it, from any session
// of the token. The same key with other content is a mistake (exit 2), and
// nothing new is asked.
func TestGateRunKey(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	dir := t.TempDir()
	// Each run of the command adds a line to its log.
	runs := func(name string) int {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return strings.Count(string(b), "\n")
	}
	step := func(name string) []string { return []string{"sh", "-c", `echo ran >> "$0"`, filepath.Join(dir, name)} }
	gate := func(session, key, title string, name string, extra ...string) []string {
		return append(append([]string{"--title", title, "--key", key}, extra...), append([]string{"--"}, step(name)...)...)
	}

	t.Run("approved", func(t *testing.T) {
		g := startGate(t, srv, "ci-job-1", "", gate("ci-job-1", "deploy/build-41", "Deploy build 41", "deploy")...)
		a := pendingAsk(t, srv, "ci-job-1")
		if a.Key != "deploy/build-41" {
			t.Errorf("the ask's key %q, want deploy/build-41", a.Key)
		}
		if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}
		if got := g.exit(t); got != 0 || runs("deploy") != 1 {
			t.Fatalf("exit status %d, %d runs; want 0 and 1", got, runs("deploy"))
		}
		// The job retried, in another session of the same token: no
		// new ask, the command runs at once.
		g = startGate(t, srv, "ci-job-1-retry", "", gate("ci-job-1-retry", "deploy/build-41", "Deploy build 41", "deploy")...)
		if got := g.exit(t); got != 0 || runs("deploy") != 2 {
			t.Errorf("retried: exit status %d, %d runs; want 0 and 2", got, runs("deploy"))
		}
		if own := askdLines(t, g.stderr.String()); !strings.Contains(own, fmt.Sprintf("approval #%d approved by", a.ID)) {
			t.Errorf("retried: stderr %q, want approval #%d named", own, a.ID)
		}
		if n := len(asksIn(t, srv, "ci-job-1-retry")); n != 0 {
			t.Errorf("retried: %d asks in the retry's session, want none", n)
		}
	})

	t.Run("rejected", func(t *testing.T) {
		g := startGate(t, srv, "ci-job-2", "", gate("ci-job-2", "deploy/build-42", "Deploy build 42", "rejected")...)
		a := pendingAsk(t, srv, "ci-job-2")
		if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "build 42 fails on ARM"}); err != nil {
			t.Fatal(err)
		}
		if got := g.exit(t); got != 1 {
			t.Errorf("exit status %d, want 1", got)
		}
		g = startGate(t, srv, "ci-job-2", "", gate("ci-job-2", "deploy/build-42", "Deploy build 42", "rejected")...)
		if got := g.exit(t); got != 1 || runs("rejected") != 0 {
			t.Errorf("retried: exit status %d, %d runs; want 1 and none", got, runs("rejected"))
		}
		if own := askdLines(t, g.stderr.String()); !strings.Contains(own, fmt.Sprintf("approval #%d was rejected by %s: build 42 fails on ARM", a.ID, srv.HumanName)) {
			t.Errorf("retried: stderr %q, want the rejection and its comment", own)
		}
		if n := len(asksIn(t, srv, "ci-job-2")); n != 1 {
			t.Errorf("%d asks in the session, want the one", n)
		}
	})

	t.Run("pending, then decided", func(t *testing.T) {
		g := startGate(t, srv, "ci-job-3", "", gate("ci-job-3", "deploy/build-43", "Deploy build 43", "later", "--wait", "200ms")...)
		if got := g.exit(t); got != 75 {
			t.Fatalf("exit status %d, want 75", got)
		}
		a := pendingAsk(t, srv, "ci-job-3")
		if own := askdLines(t, g.stderr.String()); !strings.Contains(own, fmt.Sprintf("approval #%d is still pending (askd check %d)", a.ID, a.ID)) || !strings.Contains(own, "same --key") {
			t.Errorf("stderr %q, want the pending approval named, and to run again with the same key", own)
		}
		// Run again from another session; the person approves the same
		// ask, before the run looks or while it waits.
		g = startGate(t, srv, "ci-job-3-retry", "", gate("ci-job-3-retry", "deploy/build-43", "Deploy build 43", "later")...)
		if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
			t.Fatal(err)
		}
		if got := g.exit(t); got != 0 || runs("later") != 1 {
			t.Errorf("retried: exit status %d, %d runs; want 0 and 1", got, runs("later"))
		}
		if n := len(asksIn(t, srv, "ci-job-3-retry")); n != 0 {
			t.Errorf("retried: %d asks in the retry's session, want none", n)
		}
	})

	t.Run("other content", func(t *testing.T) {
		g := startGate(t, srv, "ci-job-4", "", gate("ci-job-4", "deploy/build-41", "Deploy build 41 to eu-west", "other")...)
		if got := g.exit(t); got != 2 || runs("other") != 0 {
			t.Errorf("exit status %d, %d runs; want 2 and none", got, runs("other"))
		}
		if own := askdLines(t, g.stderr.String()); !strings.Contains(own, `key "deploy/build-41"`) || !strings.HasSuffix(own, "the command did not run") {
			t.Errorf("stderr %q, want the key named, and that the command did not run", own)
		}
		if n := len(asksIn(t, srv, "ci-job-4")); n != 0 {
			t.Errorf("%d asks, want none", n)
		}
	})
}

// TestGateRunPolicy: a gate's ask is an approval like any other: a policy
// matching its command by prefix makes it need two people, and the command
// runs once the second has approved.
func TestGateRunPolicy(t *testing.T) {
	srv := testserver.Start(t, testserver.Options{})
	if _, err := srv.Human().CreatePolicy(t.Context(), &askd.PolicyInput{Match: askd.MatchPrefix, Tool: "gate run", Prefix: "touch", Approvals: 2}); err != nil {
		t.Fatal(err)
	}
	bob := client.New(srv.URL, srv.Token(t, "bob", askd.RoleHuman))
	marker := filepath.Join(t.TempDir(), "ran")
	g := startGate(t, srv, "two-people", "", "--title", "Rotate the signing key", "--", "touch", marker)
	a := pendingAsk(t, srv, "two-people")
	if a.ApprovalsNeeded != 2 {
		t.Fatalf("approvals needed %d, want 2", a.ApprovalsNeeded)
	}
	if b, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil || !b.Pending() {
		t.Fatalf("the first approval: %v, pending %v; want it pending", err, b.Pending())
	}
	select {
	case <-g.exited:
		t.Fatalf("askd gate run ended after one approval of two: %s", g.stderr)
	default:
	}
	if _, err := bob.Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	if got := g.exit(t); got != 0 {
		t.Errorf("exit status %d, want 0", got)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
}

// TestGateRunCtrlC: at a terminal, Ctrl-C reaches the command once: the
// terminal sends it to askd and the command alike, and askd does not pass
// it on a second time (a second Ctrl-C means "stop now" to some programs).
// The terminal is a pseudo-terminal that script(1) from util-linux opens.
// (A shell may run its trap once for two signals that arrive together, so
// a second SIGINT shows in most runs, not all.)
func TestGateRunCtrlC(t *testing.T) {
	script, err := exec.LookPath("script")
	if err != nil || runtime.GOOS != "linux" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true: needs util-linux's script(1) for a terminal (.ci/run installs it)")
		}
		t.Skip("needs util-linux's script(1) for a terminal")
	}
	srv := testserver.Start(t, testserver.Options{})
	marker := filepath.Join(t.TempDir(), "interrupts")
	// The command counts its SIGINTs, and ends once the test says so (a
	// shell runs a trap between commands: one blocked in read would wait).
	// exec: askd itself in the terminal's foreground, not a shell
	// waiting on it (which a Ctrl-C would end with 130 of its own).
	gate := "exec " + commandLine([]string{testserver.Binary(t), "gate", "run", "--title", "At a terminal", "--",
		"sh", "-c", `trap 'echo INT >> "$0"' INT; : > "$0.ready"; while [ ! -e "$0.stop" ]; do sleep 0.05; done; echo stopped`, marker})
	cmd := exec.Command(script, "-qec", gate, "/dev/null")
	cmd.Env = append(gateEnv(srv.URL, srv.AgentToken, "tty"), "SHELL=/bin/sh")
	typed, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var screen testserver.SyncBuffer
	cmd.Stdout, cmd.Stderr = &screen, &screen
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var exit error
	go func() { exit = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("the terminal:\n%s", screen.String())
		}
	})
	a := pendingAsk(t, srv, "tty")
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the command ready", func() bool { _, err := os.Stat(marker + ".ready"); return err == nil })
	if _, err := typed.Write([]byte{0x03}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	testserver.Eventually(t, "the command's trap", func() bool { b, _ := os.ReadFile(marker); return len(b) > 0 })
	if err := os.WriteFile(marker+".stop", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if exit != nil {
			t.Errorf("exit: %v, want 0", exit)
		}
	case <-time.After(time.Minute):
		t.Fatal("askd gate run still running")
	}
	if b, _ := os.ReadFile(marker); string(b) != "INT\n" {
		t.Errorf("the command's SIGINTs: %q, want one", b)
	}
	if !strings.Contains(screen.String(), "stopped") {
		t.Errorf("the command did not end as it does: %q", screen.String())
	}
}

// TestSplitCommand: the "--" that ends askd's flags is the first that is no
// flag's value; CMD's own flags stay CMD's.
func TestSplitCommand(t *testing.T) {
	for _, tt := range []struct {
		name        string
		args        []string
		flags, argv []string
		found       bool
	}{
		{"plain", []string{"--title", "T", "--", "make", "--wait", "x"}, []string{"--title", "T"}, []string{"make", "--wait", "x"}, true},
		{"-- as a flag's value", []string{"--details", "--", "--title=T", "--", "true"}, []string{"--details", "--", "--title=T"}, []string{"true"}, true},
		{"no --", []string{"--title", "T", "make"}, []string{"--title", "T", "make"}, nil, false},
		{"nothing after --", []string{"--title", "T", "--"}, []string{"--title", "T"}, []string{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := &cli.Env{Getenv: func(string) string { return "" }}
			fs := cli.Flags(e, "gate run", gateRunSynopsis)
			fs.String("title", "", "")
			fs.String("details", "", "")
			flagArgs, argv, found := splitCommand(fs, tt.args)
			if fmt.Sprint(flagArgs) != fmt.Sprint(tt.flags) || fmt.Sprint(argv) != fmt.Sprint(tt.argv) || found != tt.found {
				t.Errorf("splitCommand(%q) = %q, %q, %v; want %q, %q, %v", tt.args, flagArgs, argv, found, tt.flags, tt.argv, tt.found)
			}
		})
	}
}
