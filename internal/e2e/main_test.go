// Package e2e runs the real askd binary as several processes on one
// PostgreSQL: agent and inbox sides apart (SPEC §6), a load balancer in front
// of the agent side, and the database cut away under them.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	testserver.RemoveBinary()
	os.Exit(code)
}

// proc is one running `askd serve`.
type proc struct {
	URL    string
	cmd    *exec.Cmd
	stderr *testserver.SyncBuffer
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// serve starts `askd serve --role role --db db` on a free loopback port and
// waits for its "listening on" line. It is stopped when t ends; its log is
// shown if t failed.
func serve(t *testing.T, name, role, db string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--role", role, "--db", db, "--log-level", "debug"}, extra...)
	cmd := exec.Command(testserver.Binary(t), args...)
	p := &proc{cmd: cmd, stderr: &testserver.SyncBuffer{}}
	cmd.Stderr = p.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start askd %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT) // in case a test left it stopped
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("askd %s (%s) log:\n%s", name, role, p.stderr.String())
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case p.URL = <-found:
	case <-time.After(30 * time.Second):
		t.Fatalf("askd %s did not say where it listens; log:\n%s", name, p.stderr.String())
	}
	return p
}

// stop and cont pause and resume the process (SIGSTOP, SIGCONT).
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
}

func (p *proc) cont(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// ready returns the status code of the process's /readyz.
func (p *proc) ready() int {
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get(p.URL + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// token creates a token with `askd token create --json` on the database.
func token(t *testing.T, db, role, name string) string {
	t.Helper()
	out := testserver.Output(t, "token", "create", "--"+role, name, "--json", "--db", db)
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal([]byte(out), &tok); err != nil || tok.Token == "" {
		t.Fatalf("askd token create printed %q: %v", out, err)
	}
	return tok.Token
}

// withUser returns the postgres:// URL u with its user replaced.
func withUser(t *testing.T, u, user string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.User = url.User(user)
	return p.String()
}

// connect opens an MCP session (go-sdk client, streamable HTTP) to endpoint as
// the agent token in session; version "" is the newest revision.
func connect(t *testing.T, endpoint, tok, session, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: client.Transport{Token: tok, Session: session, Base: http.DefaultTransport}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "askd-e2e", Version: "1"}, nil).
		Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("MCP connect to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// result is what a tool call returned.
type result struct {
	res *mcp.CallToolResult
	err error
}

// callAsync calls a tool on a goroutine.
func callAsync(ctx context.Context, cs *mcp.ClientSession, name string, args any) <-chan result {
	ch := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		ch <- result{res, err}
	}()
	return ch
}

// call calls a tool and fails t on a protocol error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// text is a tool result's first text block.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatal("tool result without content")
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("tool result content %T", res.Content[0])
	}
	return tc.Text
}

// questionArgs is an ask_user_question call with one single-select question.
func questionArgs(q string) map[string]any {
	return map[string]any{"questions": []map[string]any{{
		"question": q, "header": "Pick", "multiSelect": false,
		"options": []map[string]any{{"label": "red"}, {"label": "green"}, {"label": "blue"}},
	}}}
}

// answers is the answers map of an ask_user_question result.
func answers(t *testing.T, r result) map[string]any {
	t.Helper()
	if r.err != nil {
		t.Fatalf("ask_user_question: %v", r.err)
	}
	if r.res.IsError {
		t.Fatalf("ask_user_question error: %s", text(t, r.res))
	}
	var out struct {
		Answers map[string]any `json:"answers"`
	}
	if err := json.Unmarshal([]byte(text(t, r.res)), &out); err != nil {
		t.Fatalf("ask_user_question result %q: %v", text(t, r.res), err)
	}
	return out.Answers
}

// pendingIn waits for n pending asks in session, seen through c, and returns them.
func pendingIn(t *testing.T, c *client.Client, session string, n int) []int64 {
	t.Helper()
	var ids []int64
	testserver.Eventually(t, fmt.Sprintf("%d pending asks in %s", n, session), func() bool {
		asks, err := c.List(context.Background(), client.ListOptions{Session: session, Status: "pending", Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		ids = ids[:0]
		for _, a := range asks {
			ids = append(ids, a.ID)
		}
		return len(asks) == n
	})
	return ids
}
