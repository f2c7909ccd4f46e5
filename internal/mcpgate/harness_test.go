package mcpgate

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also the gate's scripted MCP server and, for the tests
// that kill it, the gate: roleEnv says which.
const roleEnv = "MCPGATE_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "upstream":
		scriptedServer()
		os.Exit(0)
	case "gate":
		os.Exit(gateMain())
	}
	os.Exit(m.Run())
}

// gateMain runs the gate as a process: the arguments in MCPGATE_TEST_ARGS
// (JSON), stdio and environment its own.
func gateMain() int {
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv("MCPGATE_TEST_ARGS")), &args); err != nil {
		panic(err)
	}
	e := &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	return cli.ExitCode(run(context.Background(), e, args, testTunables))
}

// testTunables are the gate's clocks in tests: progress every 50 ms, so a
// test sees it without waiting long; a child stopped after 100 ms (node
// servers with timers of their own do not exit when their stdin closes);
// the checks as in production.
var testTunables = tunables{progressEvery: 50 * time.Millisecond, longestWait: defaultTunables.longestWait, childGrace: 100 * time.Millisecond}

// scripted is the command line of the scripted MCP server (server.go).
func scripted(t testing.TB, mode string) []string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{"env", roleEnv + "=upstream", "MCPGATE_TEST_MODE=" + mode, exe}
}

// fixture is a real askd and the person who answers in it.
type fixture struct {
	askd   *testserver.Server
	person *client.Client
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	return newFixtureWith(t, app.Config{})
}

// newFixtureWith is newFixture with askd configured as cfg says.
func newFixtureWith(t testing.TB, cfg app.Config) *fixture {
	t.Helper()
	s := testserver.Start(t, testserver.Options{Config: cfg})
	return &fixture{askd: s, person: s.Human()}
}

// env is the gate's environment: askd's URL and the agent token.
func (f *fixture) env(extra ...string) map[string]string {
	env := map[string]string{"ASKD_URL": f.askd.URL, "ASKD_TOKEN": f.askd.AgentToken}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	return env
}

// gateRun is a gate run in this process, with pipes for its stdio.
type gateRun struct {
	in     *io.PipeWriter // to the gate's stdin
	out    *io.PipeReader // from its stdout
	stderr *testserver.SyncBuffer
	done   chan error
	cancel context.CancelFunc
}

// startGate runs the gate with args and env, until the test ends.
func startGate(t testing.TB, env map[string]string, args ...string) *gateRun {
	t.Helper()
	return startGateWith(t, env, testTunables, args...)
}

// startGateWith is startGate with the gate's clocks tun.
func startGateWith(t testing.TB, env map[string]string, tun tunables, args ...string) *gateRun {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	g := &gateRun{in: inW, out: outR, stderr: &testserver.SyncBuffer{}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	e := &cli.Env{Stdin: inR, Stdout: outW, Stderr: g.stderr, Getenv: func(k string) string { return env[k] }}
	go func() {
		err := run(ctx, e, args, tun)
		outW.Close()
		inR.Close()
		g.done <- err
	}()
	t.Cleanup(func() {
		g.stop()
		if t.Failed() {
			t.Logf("gate's stderr:\n%s", g.stderr)
		}
	})
	return g
}

// stop ends the gate: its stdin closed, as a client does, and its context
// (a listener's end); it returns how the gate ended.
func (g *gateRun) stop() error {
	g.in.Close()
	g.cancel()
	err := <-g.done
	g.done <- err
	return err
}

// connect connects a go-sdk client at protocol revision version ("" for
// the SDK's default) that declares nothing: no elicitation.
func (g *gateRun) connect(t testing.TB, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpgate-test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: g.out, Writer: g.in}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect through the gate: %v\ngate's stderr:\n%s", err, g.stderr)
	}
	// The go-sdk client's Close waits for its calls: the gate goes first,
	// which ends those a failed test left waiting.
	t.Cleanup(func() { g.stop(); cs.Close() })
	return cs
}

// watcher follows askd's event stream, as the inbox does.
type watcher struct {
	events <-chan client.Event
}

// watch opens the event stream of session's asks, from now on.
func (f *fixture) watch(t testing.TB, session string) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch, err := f.person.EventsWith(ctx, -1, client.EventFilter{Session: session})
	if err != nil {
		t.Fatal(err)
	}
	return &watcher{events: ch}
}

// next waits for the next event of one of the actions and returns its ask.
func (w *watcher) next(t testing.TB, actions ...string) *askd.Ask {
	t.Helper()
	timeout := time.After(time.Minute)
	for {
		select {
		case ev, ok := <-w.events:
			if !ok {
				t.Fatalf("the event stream ended before a %v event", actions)
			}
			for _, a := range actions {
				if ev.Event.Action == a {
					return ev.Event.Ask
				}
			}
		case <-timeout:
			t.Fatalf("no %v event within a minute", actions)
			return nil
		}
	}
}

// asked waits for the next ask made in the watched session.
func (w *watcher) asked(t testing.TB) *askd.Ask {
	t.Helper()
	return w.next(t, askd.ActionCreated)
}

// answer answers ask id as the person.
func (f *fixture) answer(t testing.TB, id int64, ans *askd.Answer) *askd.Ask {
	t.Helper()
	a, err := f.person.Answer(context.Background(), id, ans)
	if err != nil {
		t.Fatalf("answer ask %d: %v", id, err)
	}
	return a
}

// callAsync calls a tool and returns the outcome on a channel.
func callAsync(cs *mcp.ClientSession, ctx context.Context, name string, args any) <-chan callOutcome {
	ch := make(chan callOutcome, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		ch <- callOutcome{res, err}
	}()
	return ch
}

type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

// text is a tool result's text content, joined.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// npmServers are the real MCP servers the tests put the gate in front of,
// pinned: installed once into the user's cache (one npm install for both).
var npmServers = []string{
	"@modelcontextprotocol/server-filesystem@2026.8.31",
	"@modelcontextprotocol/server-everything@2026.8.31",
}

var (
	npmOnce sync.Once
	npmDir  string
	npmErr  error
)

// npmServer returns the command line that runs the npm MCP server whose
// bin is bin, with args. Without node or npm the test skips, loudly;
// in CI (CI=true) it fails.
func npmServer(t testing.TB, bin string, args ...string) []string {
	t.Helper()
	node, nodeErr := exec.LookPath("node")
	npm, npmLookErr := exec.LookPath("npm")
	if nodeErr != nil || npmLookErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node and npm are required in CI for the MCP gate's tests: %v %v", nodeErr, npmLookErr)
		}
		t.Skipf("SKIPPING: node or npm not found (%v %v); CI runs this test", nodeErr, npmLookErr)
	}
	npmOnce.Do(func() { npmDir, npmErr = installServers(npm) })
	if npmErr != nil {
		t.Fatal(npmErr)
	}
	script, err := filepath.EvalSymlinks(filepath.Join(npmDir, "node_modules", ".bin", bin))
	if err != nil {
		t.Fatalf("npm server %s: %v", bin, err)
	}
	return append([]string{node, script}, args...)
}

func installServers(npm string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "askd-test", "mcpgate-"+strings.NewReplacer("@", "", "/", "-").Replace(strings.Join(npmServers, "+")))
	done := filepath.Join(dir, "installed")
	if _, err := os.Stat(done); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"askd-mcpgate-test","private":true}`+"\n"), 0o644); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, append([]string{"install", "--no-audit", "--no-fund", "--silent"}, npmServers...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &installError{err, string(out)}
	}
	return dir, os.WriteFile(done, nil, 0o644)
}

type installError struct {
	err error
	out string
}

func (e *installError) Error() string { return "npm install: " + e.err.Error() + "\n" + e.out }
