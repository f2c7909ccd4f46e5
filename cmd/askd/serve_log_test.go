package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// logLine is one line of askd serve --log-format json.
type logLine map[string]any

// waitLog waits until the log holds a line that match accepts, and returns it.
// Access lines are written as requests end, which may be after their
// response reached the client.
func waitLog(t *testing.T, logs *testserver.SyncBuffer, what string, match func(logLine) bool) logLine {
	t.Helper()
	var found logLine
	testserver.Eventually(t, "a log line for "+what, func() bool {
		for _, l := range logLines(t, logs) {
			if match(l) {
				found = l
				return true
			}
		}
		return false
	})
	return found
}

// logLines parses every line of the log, each of which must be a JSON object.
func logLines(t *testing.T, logs *testserver.SyncBuffer) []logLine {
	t.Helper()
	var out []logLine
	sc := bufio.NewScanner(strings.NewReader(logs.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l logLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

func route(r string) func(logLine) bool {
	return func(l logLine) bool { return l["msg"] == "request" && l["route"] == r }
}

// wantFields fails the test unless l has each of want's fields with its
// value (numbers as JSON numbers), and none of absent's.
func wantFields(t *testing.T, l logLine, want map[string]any, absent ...string) {
	t.Helper()
	for k, v := range want {
		if n, ok := v.(int); ok {
			v = float64(n)
		}
		if l[k] != v {
			t.Errorf("%s: %v, want %v, in %v", k, l[k], v, l)
		}
	}
	for _, k := range absent {
		if _, ok := l[k]; ok {
			t.Errorf("%s: %v, want none, in %v", k, l[k], l)
		}
	}
}

// TestAccessLog: askd serve logs one JSON line per request, with its route
// (never the path as sent), status, role, token name and ask, also for a
// parked MCP call, a sign-in and a failed authentication; no line of the
// whole run holds a token, the sign-in code or the wrong secret sent.
func TestAccessLog(t *testing.T) {
	var logs testserver.SyncBuffer
	srv := startServeLogging(t, &logs, "--log-format", "json", "--log-level", "info")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	human := client.New(srv.URL, srv.Human)
	me, err := human.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	humanName := me["name"]

	// An MCP ask_user_question parks on its connection until it is answered.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "askd-test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   srv.URL + "/mcp",
		HTTPClient: &http.Client{Transport: client.Transport{Token: srv.Agent, Session: "logged", Base: http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask_user_question", Arguments: map[string]any{"questions": []map[string]any{{
			"question": "Which log format?", "header": "Format",
			"options": []map[string]any{{"label": "json"}, {"label": "text"}}, "multiSelect": false}}}})
		called <- err
	}()
	var asked *askd.Ask
	testserver.Eventually(t, "the MCP call's ask to be pending", func() bool {
		asks, err := human.List(ctx, client.ListOptions{Session: "logged", Status: askd.StatusPending})
		if err != nil {
			t.Fatal(err)
		}
		if len(asks) > 0 {
			asked = asks[0]
		}
		return asked != nil
	})
	if _, err := human.Answer(ctx, asked.ID, &askd.Answer{Answers: map[string]askd.Choice{"Which log format?": {Values: []string{"json"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := <-called; err != nil {
		t.Fatalf("ask_user_question: %v", err)
	}

	answer := waitLog(t, &logs, "the answer", route("POST /api/asks/{id}/answer"))
	wantFields(t, answer, map[string]any{"level": "INFO", "method": "POST", "status": 200, "role": "human",
		"token": humanName, "ask": int(asked.ID)})
	if c, _ := answer["client"].(string); !strings.HasPrefix(c, "127.0.0.1:") {
		t.Errorf("client %q, want the client's address", c)
	}
	if d, _ := answer["duration"].(float64); d <= 0 {
		t.Errorf("duration %v, want the request's", answer["duration"])
	}
	parked := waitLog(t, &logs, "the parked MCP call", func(l logLine) bool {
		return l["msg"] == "request" && l["route"] == "/mcp" && l["tool"] == "ask_user_question"
	})
	wantFields(t, parked, map[string]any{"method": "POST", "status": 200, "role": "agent", "token": "agent", "rpc": "tools/call"})

	// An ask created over HTTP: the line names the ask made.
	agent := client.New(srv.URL, srv.Agent)
	agent.Session = "logged-http"
	a, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Logs are in"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	created := waitLog(t, &logs, "the create", route("POST /api/asks"))
	wantFields(t, created, map[string]any{"status": 201, "role": "agent", "token": "agent", "ask": int(a.ID)})

	// The sign-in link, then the browser it signed in.
	code := signInCode(t, srv.SignIn)
	cookie := get(t, srv.SignIn, nil, http.StatusSeeOther).Cookies()
	if len(cookie) == 0 {
		t.Fatal("the sign-in link set no cookie")
	}
	waitLog(t, &logs, "the sign-in", route("GET /signin"))
	get(t, srv.URL+"/api/sessions", func(r *http.Request) { r.AddCookie(cookie[0]) }, http.StatusOK)
	browser := waitLog(t, &logs, "the browser", route("GET /api/sessions"))
	wantFields(t, browser, map[string]any{"role": "browser", "token": humanName, "status": 200})

	// A wrong token is a warning, without the token.
	const wrong = "askd_h_not-a-token-but-a-secret-all-the-same"
	get(t, srv.URL+"/api/asks?status=pending", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+wrong) }, http.StatusUnauthorized)
	refused := waitLog(t, &logs, "the wrong token", func(l logLine) bool { return l["route"] == "GET /api/asks" && l["status"] == 401.0 })
	wantFields(t, refused, map[string]any{"level": "WARN", "role": "none"}, "token")

	all := logs.String()
	for what, secret := range map[string]string{"the human token": srv.Human, "the agent token": srv.Agent, "the sign-in code": code, "the wrong token": wrong} {
		if strings.Contains(all, secret) {
			t.Errorf("the log holds %s", what)
		}
	}
	if strings.Contains(all, "status=pending") || strings.Contains(all, "code=") {
		t.Error("the log holds a query string")
	}
}

// signInCode is the code in a sign-in link.
func signInCode(t *testing.T, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil || u.Query().Get("code") == "" {
		t.Fatalf("sign-in link %q holds no code", link)
	}
	return u.Query().Get("code")
}

// get sends a GET, following no redirect, and fails the test unless it is
// answered with status.
func get(t *testing.T, u string, prepare func(*http.Request), status int) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(req)
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("GET %s: %s, want %d", req.URL.Path, resp.Status, status)
	}
	return resp
}

func TestServeLogFormat(t *testing.T) {
	tests := []struct {
		name, format string
		wantErr      string
	}{
		{"json", "json", ""},
		{"text", "text", ""},
		{"bad", "yaml", `--log-format: "yaml" is not text or json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.wantErr != "" {
				err := run(context.Background(), []string{"serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "askd.db"), "--log-format", tt.format}, nil, io.Discard, io.Discard)
				if cli.ExitCode(err) != 2 || err.Error() != tt.wantErr {
					t.Fatalf("serve --log-format %s: %v, want the usage error %q", tt.format, err, tt.wantErr)
				}
				return
			}
			var logs testserver.SyncBuffer
			srv := startServeLogging(t, &logs, "--log-format", tt.format, "--log-level", "info")
			get(t, srv.URL+"/healthz", nil, http.StatusOK)
			want := `"route":"GET /healthz"`
			if tt.format == "text" {
				want = `route="GET /healthz"`
			}
			testserver.Eventually(t, "a line with "+want, func() bool { return strings.Contains(logs.String(), want) })
			if tt.format == "json" {
				logLines(t, &logs) // each line is JSON
			}
		})
	}
}

// The access log is at info: --log-level warn keeps only failed
// authentications.
func TestServeLogLevelWarnHidesAccessLog(t *testing.T) {
	var logs testserver.SyncBuffer
	srv := startServeLogging(t, &logs, "--log-format", "json", "--log-level", "warn")
	get(t, srv.URL+"/healthz", nil, http.StatusOK)
	get(t, srv.URL+"/api/asks", func(r *http.Request) { r.Header.Set("Authorization", "Bearer askd_h_wrong") }, http.StatusUnauthorized)
	waitLog(t, &logs, "the wrong token", func(l logLine) bool { return l["status"] == 401.0 })
	for _, l := range logLines(t, &logs) {
		if l["level"] == "INFO" {
			t.Errorf("an info line at --log-level warn: %v", l)
		}
	}
}
