package soak_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var ()

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	testserver.RemoveBinary()
	os.Exit(code)
}

// askdBinary is the askd binary, built once per test process.
func askdBinary(t testing.TB) string { return testserver.Binary(t) }

// tokens are the human and agent tokens of a soak database.
type tokens struct{ human, agent string }

// newTokens creates a human and an agent token on db with `askd token create`.
func newTokens(t testing.TB, db string) tokens {
	t.Helper()
	// askd token never creates a database; askd migrate does, as serve would.
	if out, err := exec.Command(askdBinary(t), "migrate", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("askd migrate: %v\n%s", err, out)
	}
	create := func(flag, name string) string {
		out, err := exec.Command(askdBinary(t), "token", "create", flag, name, "--json", "--db", db).Output()
		if err != nil {
			var stderr []byte
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = ee.Stderr
			}
			t.Fatalf("askd token create %s %s: %v\n%s", flag, name, err, stderr)
		}
		var tok struct{ Token string }
		if err := json.Unmarshal(out, &tok); err != nil || tok.Token == "" {
			t.Fatalf("askd token create: %q: %v", out, err)
		}
		return tok.Token
	}
	return tokens{human: create("--human", "soak-human"), agent: create("--agent", "soak-agent")}
}

// server is one askd serve process.
type server struct {
	cmd  *exec.Cmd
	URL  string
	done chan struct{} // closed once the process has exited
	err  error         // its exit status, once done is closed
	log  *logTail
}

// logTail keeps the last lines a process wrote, for failure messages.
type logTail struct {
	mu    sync.Mutex
	lines []string
}

func (l *logTail) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
	if len(l.lines) > 40 {
		l.lines = l.lines[len(l.lines)-40:]
	}
}

func (l *logTail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// startServer runs `askd serve` on 127.0.0.1:0 over db with extra flags and
// waits until it listens. The process is killed when t ends, if still running.
func startServer(t testing.TB, db string, extra ...string) *server {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db, "--log-level", "warn"}, extra...)
	cmd := exec.Command(askdBinary(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan struct{}), log: &logTail{}}
	listening := make(chan string, 1)
	var pipes sync.WaitGroup
	pipes.Add(2)
	go func() {
		defer pipes.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			s.log.add(line)
			// "askd VERSION listening on http://127.0.0.1:PORT (role ...)"
			if _, rest, ok := strings.Cut(line, " listening on "); ok {
				u, _, _ := strings.Cut(rest, " ")
				select {
				case listening <- u:
				default:
				}
			}
		}
	}()
	go func() {
		defer pipes.Done()
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.log.add(sc.Text())
		}
	}()
	go func() {
		pipes.Wait() // Wait closes the pipes: read them to the end first
		s.err = cmd.Wait()
		close(s.done)
	}()
	t.Cleanup(func() { s.kill(t) })
	select {
	case s.URL = <-listening:
	case <-s.done:
		t.Fatalf("askd serve exited before listening: %v\n%s", s.err, s.log)
	case <-time.After(30 * time.Second):
		s.kill(t)
		t.Fatalf("askd serve did not listen within 30 s\n%s", s.log)
	}
	return s
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill(t testing.TB) {
	t.Helper()
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Kill()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Errorf("askd (pid %d) still running 30 s after SIGKILL", s.cmd.Process.Pid)
	}
}

// terminate sends SIGTERM and returns how long the process took to exit and
// its exit status.
func (s *server) terminate(t testing.TB, within time.Duration) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
		return time.Since(start), s.err
	case <-time.After(within):
		s.kill(t)
		t.Fatalf("askd did not exit within %s of SIGTERM\n%s", within, s.log)
		return 0, nil
	}
}

// mcpConnect opens an MCP client session (go-sdk, streamable HTTP) to the
// server at baseURL as the agent in session.
func mcpConnect(ctx context.Context, baseURL, token, session string) (*mcp.ClientSession, error) {
	hc := &http.Client{Transport: client.Transport{Token: token, Session: session, Base: http.DefaultTransport}}
	mt := &mcp.StreamableClientTransport{Endpoint: baseURL + "/mcp", HTTPClient: hc, MaxRetries: -1}
	return mcp.NewClient(&mcp.Implementation{Name: "askd-soak", Version: "1"}, nil).Connect(ctx, mt, nil)
}

// resultText is the text of a tool result's first content block.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

var _ = io.Discard
