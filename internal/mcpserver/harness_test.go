package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A transport is one way an agent reaches askd's tools: the go-sdk client over
// streamable HTTP at a given protocol revision, or over stdio through the
// `askd mcp` bridge running as a subprocess.
type transport struct {
	name    string
	version string // the revision the client asks for; "" is the newest
	stdio   bool
}

var transports = []transport{
	{name: "http-newest"},
	{name: "http-2025-11-25", version: "2025-11-25"},
	{name: "http-2025-06-18", version: "2025-06-18"},
	{name: "stdio-bridge", stdio: true},
	{name: "stdio-bridge-2025-06-18", version: "2025-06-18", stdio: true},
}

// forEach runs f once per transport.
func forEach(t *testing.T, f func(t *testing.T, tr transport)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			f(t, tr)
		})
	}
}

const progressEvery = 50 * time.Millisecond

// start runs a real askd (SQLite file, HTTP on 127.0.0.1:0) with the MCP handler.
func start(t *testing.T, cfg app.Config) *testserver.Server {
	t.Helper()
	return testserver.Start(t, testserver.Options{Config: cfg, MCP: func(svc *app.Service) http.Handler {
		return mcpserver.Handler(svc, mcpserver.Options{ProgressInterval: progressEvery})
	}})
}

// connect opens an MCP client session as the server's agent in session.
func connect(t *testing.T, srv *testserver.Server, tr transport, session string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return connectAs(t, srv, tr, srv.AgentToken, session, opts)
}

// connectAs opens an MCP client session with agent token token in session.
func connectAs(t *testing.T, srv *testserver.Server, tr transport, token, session string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mt mcp.Transport
	if tr.stdio {
		cmd := exec.Command(askdBinary(t), "mcp")
		cmd.Env = append(os.Environ(), "ASKD_URL="+srv.URL, "ASKD_TOKEN="+token, "ASKD_SESSION="+session, "ASKD_LOG_LEVEL=warn")
		cmd.Stderr = testWriter{t}
		mt = &mcp.CommandTransport{Command: cmd}
	} else {
		mt = &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: client.Transport{Token: token, Session: session, Base: http.DefaultTransport}}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "askd-test", Version: "1"}, opts).Connect(ctx, mt, &mcp.ClientSessionOptions{ProtocolVersion: tr.version})
	if err != nil {
		t.Fatalf("connect %s: %v", tr.name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("askd mcp: %s", strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.RemoveBinary()
	os.Exit(code)
}

// askdBinary is the askd binary, built once per test process.
func askdBinary(t *testing.T) string { return testserver.Binary(t) }

// call calls a tool and fails the test on a protocol error.
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

type outcome struct {
	res *mcp.CallToolResult
	err error
}

// callAsync calls a tool in the background.
func callAsync(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams) <-chan outcome {
	ch := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(ctx, params)
		ch <- outcome{res, err}
	}()
	return ch
}

func await(t *testing.T, ch <-chan outcome) *mcp.CallToolResult {
	t.Helper()
	select {
	case o := <-ch:
		if o.err != nil {
			t.Fatalf("call: %v", o.err)
		}
		return o.res
	case <-time.After(30 * time.Second):
		t.Fatal("call did not return")
	}
	return nil
}

// text is a result's only text block.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content block, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want text", res.Content[0])
	}
	return tc.Text
}

// structured checks a JSON result (structuredContent plus the same JSON as
// text) and decodes it into v.
func structured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	txt := text(t, res)
	sc, err := json.Marshal(res.StructuredContent)
	if err != nil || res.StructuredContent == nil {
		t.Fatalf("no structuredContent (text %s)", txt)
	}
	if !jsonEqual(t, sc, []byte(txt)) {
		t.Fatalf("structuredContent %s differs from text %s", sc, txt)
	}
	if err := json.Unmarshal([]byte(txt), v); err != nil {
		t.Fatalf("decode %s: %v", txt, err)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	p, _ := json.Marshal(x)
	q, _ := json.Marshal(y)
	return string(p) == string(q)
}

// pending waits for the session's n-th pending ask to appear in the inbox.
func pending(t *testing.T, srv *testserver.Server, session string, n int) []*askd.Ask {
	t.Helper()
	return srv.Pending(t, session, n)
}

// settledAs waits until ask id reaches status (and reason) and returns it.
func settledAs(t *testing.T, srv *testserver.Server, id int64, status askd.Status, reason askd.CancelReason) *askd.Ask {
	t.Helper()
	var a *client.AskDetail
	testserver.Eventually(t, fmt.Sprintf("ask %d %s/%s", id, status, reason), func() bool {
		var err error
		if a, err = srv.Human().Show(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return a.Status == status && a.CancelReason == reason
	})
	return &a.Ask
}

// toldWait waits until ask id is recorded as told to its agent.
func toldWait(t *testing.T, srv *testserver.Server, id int64) {
	t.Helper()
	testserver.Eventually(t, fmt.Sprintf("ask %d recorded as told", id), func() bool {
		a, err := srv.Human().Show(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return a.ToldAt != nil
	})
}

// cutOffWait waits until ask id's call was cut off (testserver.Server.CutOff).
func cutOffWait(t *testing.T, srv *testserver.Server, id int64) *askd.Ask {
	t.Helper()
	return srv.CutOff(t, id)
}

func answer(t *testing.T, srv *testserver.Server, id int64, ans *askd.Answer) {
	t.Helper()
	if _, err := srv.Human().Answer(context.Background(), id, ans); err != nil {
		t.Fatalf("answer %d: %v", id, err)
	}
}

// countAsks is how many asks the store holds, in every state.
func countAsks(t *testing.T, srv *testserver.Server) int {
	t.Helper()
	n := 0
	for _, st := range []askd.Status{askd.StatusPending, askd.StatusAnswered, askd.StatusCancelled} {
		asks, err := srv.Human().List(context.Background(), client.ListOptions{Status: st, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		n += len(asks)
	}
	return n
}

// progressLog records the progress tokens of the notifications a client
// receives: a call's first one proves the server is waiting on it.
type progressLog struct {
	mu   sync.Mutex
	seen map[string]bool
}

// options are client options whose progress handler records into l.
func (l *progressLog) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.seen == nil {
			l.seen = map[string]bool{}
		}
		l.seen[fmt.Sprint(r.Params.ProgressToken)] = true
	}}
}

// waiting waits until a progress notification for token came: the call
// that sent it is waiting in the server.
func (l *progressLog) waiting(t *testing.T, token string) {
	t.Helper()
	testserver.Eventually(t, "a progress notification for "+token+" (the call waiting)", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.seen[token]
	})
}
