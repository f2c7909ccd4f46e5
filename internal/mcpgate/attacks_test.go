package mcpgate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBadCalls: calls no one can approve as they are are refused with an
// error result saying why, nothing is asked, and the server never sees
// them; an edit that is no object is refused by askd, and the call waits
// on.
func TestBadCalls(t *testing.T) {
	f := newFixture(t)
	up := startRecordingServer(t, false)
	const session = "bad"
	w := f.watch(t, session)
	g := startGate(t, f.env(), "--name", "scripted", "--session", session, "--upstream", up.URL)
	cs := g.connect(t, "", nil)

	refused := []struct {
		name string
		args any
		want string
	}{
		{"an array", []any{1, 2}, "not a JSON object"},
		{"a string", "rm -rf /", "not a JSON object"},
		{"over the payload limit", map[string]any{"text": strings.Repeat("x", askd.MaxPayloadBytes)}, fmt.Sprintf("limit of %d bytes", askd.MaxPayloadBytes)},
	}
	for _, c := range refused {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: c.args})
		if err != nil || !res.IsError || !strings.Contains(text(res), c.want) || !strings.Contains(text(res), "did not get the call") {
			t.Errorf("arguments %s: %v, %q; want an error result saying %q", c.name, err, text(res), c.want)
		}
	}
	if asks := f.asks(t, session); len(asks) > 0 {
		t.Fatalf("refused calls asked: %q", asks[0].Title)
	}
	if calls := up.calls(); len(calls) > 0 {
		t.Fatalf("the server got a refused call: %s", calls[0])
	}

	// An edit that is no object: askd refuses it (422), the approval waits
	// on, and the call goes on as the person then approves it.
	out := callAsync(cs, context.Background(), "echo", map[string]any{"text": "as asked"})
	a := w.asked(t)
	_, err := f.person.Answer(context.Background(), a.ID, &askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(`["not", "an", "object"]`)})
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusUnprocessableEntity || !strings.Contains(ce.Message, "object") {
		t.Fatalf("an edit that is no object: %v, want 422 naming the rule", err)
	}
	if d, err := f.person.Show(context.Background(), a.ID); err != nil || !d.Pending() {
		t.Fatalf("after the refused edit, the approval: %v, %+v", err, d)
	}
	f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
	if res := (<-out).must(t); res.IsError || text(res) != "as asked" {
		t.Fatalf("approved after a refused edit: %q", text(res))
	}
}

// TestRawAttacks sends what the go-sdk client cannot: a key twice in the
// arguments (parsers differ on which counts) and a JSON-RPC batch (which
// would carry calls past the gate). Both are refused; nothing is asked or
// passed on.
func TestRawAttacks(t *testing.T) {
	f := newFixture(t)
	up := startRecordingServer(t, false)
	g := startGate(t, f.env(), "--name", "scripted", "--session", "raw", "--upstream", up.URL)
	p := &rawPeer{t: t, c: newLineConn(g.out, g.in, nil)}
	p.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "raw", "version": "1"}})
	p.notify("notifications/initialized")

	for id, raw := range map[string]string{
		// a key twice in the arguments: which one did the person see?
		"dup-arg": `{"jsonrpc":"2.0","id":"dup-arg","method":"tools/call","params":{"name":"echo","arguments":{"text":"shown","text":"run"}}}`,
		// a method twice: a parser keeping the first reads a tools/call
		"dup-method": `{"jsonrpc":"2.0","id":"dup-method","method":"tools/call","method":"ping","params":{"name":"echo","arguments":{"text":"run"}}}`,
		"dup-name":   `{"jsonrpc":"2.0","id":"dup-name","method":"tools/call","params":{"name":"echo","name":"env","arguments":{}}}`,
	} {
		p.sendRaw(raw)
		if m := p.response(id); m.Error == nil || !strings.Contains(string(m.Error), "duplicate key") {
			t.Errorf("%s: %s", id, m.raw)
		}
	}
	// A tools/call without an id: no one could approve it.
	p.sendRaw(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"notified"}}}`)
	// Answers to a question the server never asked through the gate.
	p.sendRaw(`{"jsonrpc":"2.0","id":"forged","method":"tools/call","params":{"name":"survey","arguments":{},"inputResponses":{"form":{"action":"accept","content":{"code":"AAA-00","sure":true}}},"requestState":"state-1"}}`)
	if m := p.response("forged"); !strings.Contains(string(m.Result), "did not ask through the gate") || !strings.Contains(string(m.Result), `"isError":true`) {
		t.Errorf("forged inputResponses: %s", m.raw)
	}
	p.sendRaw(`[{"jsonrpc":"2.0","id":"b1","method":"tools/call","params":{"name":"echo","arguments":{"text":"batched"}}}]`)
	if m := p.response(""); m.Error == nil || !strings.Contains(string(m.Error), "batch") {
		t.Errorf("a batch: %s", m.raw)
	}
	if asks := f.asks(t, "raw"); len(asks) > 0 {
		t.Fatalf("asked: %q", asks[0].Title)
	}
	if calls := up.calls(); len(calls) > 0 {
		t.Fatalf("the server got a refused call: %s", calls[0])
	}
}

// TestServerDies: the server exiting mid-call gives the client an error
// result saying so, for the call it was running (approved: the approval
// stays as decided) and for one still held (its approval stays pending);
// the gate ends, saying how the server exited.
func TestServerDies(t *testing.T) {
	f := newFixture(t)
	const session = "dies"
	w := f.watch(t, session)
	g := startGate(t, f.env(), append([]string{"--name", "scripted", "--session", session, "--"}, scripted(t, "")...)...)
	cs := g.connect(t, "", nil)

	held := callAsync(cs, context.Background(), "echo", map[string]any{"text": "held"})
	heldAsk := w.asked(t)
	dying := callAsync(cs, context.Background(), "die", map[string]any{})
	dieAsk := w.asked(t)
	f.answer(t, dieAsk.ID, &askd.Answer{Decision: askd.DecisionApproved})

	res := (<-dying).must(t)
	if !res.IsError || !strings.Contains(text(res), "went away") || !strings.Contains(text(res), "may or may not have run") {
		t.Errorf("the call the server died in: %q", text(res))
	}
	res = (<-held).must(t)
	if !res.IsError || !strings.Contains(text(res), "went away") || !strings.Contains(text(res), fmt.Sprintf("#%d stays pending", heldAsk.ID)) || !strings.Contains(text(res), "exit status 3") {
		t.Errorf("the held call: %q", text(res))
	}
	if a, err := f.person.Show(context.Background(), dieAsk.ID); err != nil || a.Answer == nil || a.Answer.Decision != askd.DecisionApproved {
		t.Errorf("the approval of the call the server died in: %v, %+v", err, a)
	}
	if a, err := f.person.Show(context.Background(), heldAsk.ID); err != nil || !a.Pending() {
		t.Errorf("the held call's approval: %v, %+v; want it pending", err, a)
	}
	err := g.stop()
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || cli.ExitCode(err) != 1 {
		t.Errorf("the gate ended with %v (exit %d), want the server's exit status", err, cli.ExitCode(err))
	}
}

// TestThirdPartyText: a tool's description with links, Markdown and control
// characters reaches the client unchanged (the inbox, not the gate, shows
// such text safely); arguments holding them are put to askd as text, their
// control characters written as escapes.
func TestThirdPartyText(t *testing.T) {
	f := newFixture(t)
	const session = "text"
	w := f.watch(t, session)
	g := startGate(t, f.env(), append([]string{"--name", "scripted", "--session", session, "--"}, scripted(t, "")...)...)
	cs := g.connect(t, "", nil)
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var desc string
	for _, tool := range tools.Tools {
		if tool.Name == "echo" {
			desc = tool.Description
		}
	}
	if desc != trickyDescription {
		t.Fatalf("echo's description through the gate: %q, want %q", desc, trickyDescription)
	}
	arg := "\x1b[2J[click](https://evil.example) \u202eevil\u202c"
	out := callAsync(cs, context.Background(), "echo", map[string]any{"text": arg})
	a := w.asked(t)
	if strings.ContainsAny(a.Details, "\x1b\u202e") || !strings.Contains(a.Details, `\x1b[2J[click](https://evil.example) \u202eevil\u202c`) {
		t.Fatalf("details:\n%s", a.Details)
	}
	var payload map[string]string
	if json.Unmarshal(a.Payload, &payload) != nil || payload["text"] != arg {
		t.Fatalf("payload %s, want the arguments as sent", a.Payload)
	}
	f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
	if res := (<-out).must(t); text(res) != arg {
		t.Fatalf("the server got %q", text(res))
	}
}

// TestTokenStaysWithAskd: askd's token, and every ASKD_* variable, is never
// in the server's environment, nor in any request to a remote server; the
// remote server gets the --upstream-header headers.
func TestTokenStaysWithAskd(t *testing.T) {
	f := newFixture(t)
	t.Setenv("ASKD_TOKEN", f.askd.AgentToken)
	t.Setenv("ASKD_URL", f.askd.URL)
	t.Setenv("ASKD_SESSION", "token")
	t.Setenv("ASKD_ANYTHING", "else")

	g := startGate(t, f.env(), append([]string{"--name", "scripted", "--allow", "env", "--"}, scripted(t, "")...)...)
	res, err := g.connect(t, "", nil).CallTool(context.Background(), &mcp.CallToolParams{Name: "env", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("env: %v, %+v", err, res)
	}
	env := text(res)
	if !strings.Contains(env, "PATH=") {
		t.Fatalf("the server's environment lacks PATH: %q", env)
	}
	for _, line := range strings.Split(env, "\n") {
		if strings.HasPrefix(strings.ToUpper(line), "ASKD_") || strings.Contains(line, f.askd.AgentToken) {
			t.Errorf("the server's environment holds %q", line)
		}
	}

	up := startRecordingServer(t, false)
	w := f.watch(t, "token")
	g = startGate(t, f.env(), "--name", "remote", "--session", "token", "--upstream", up.URL, "--upstream-header", "X-Upstream-Key: k1")
	out := callAsync(g.connect(t, "", nil), context.Background(), "echo", map[string]any{"text": "hi"})
	f.answer(t, w.asked(t).ID, &askd.Answer{Decision: askd.DecisionApproved})
	(<-out).must(t)
	seen := up.seen()
	if len(seen) < 3 {
		t.Fatalf("the remote server got %d requests", len(seen))
	}
	for _, req := range seen {
		if req.header.Get("X-Upstream-Key") != "k1" {
			t.Errorf("a request without --upstream-header's header: %v", req.header)
		}
		for k, vs := range req.header {
			for _, v := range vs {
				if strings.Contains(v, f.askd.AgentToken) || strings.EqualFold(k, "Authorization") {
					t.Errorf("the remote server got %s: %s", k, v)
				}
			}
		}
		if strings.Contains(req.body, f.askd.AgentToken) {
			t.Errorf("the remote server got the token in a body")
		}
	}
}

// TestListener: the HTTP listener answers only requests whose Host names
// it and whose Origin, if any, is its own; off loopback it requires its
// Bearer token. A refused request reaches neither the server nor askd.
func TestListener(t *testing.T) {
	f := newFixture(t)
	up := startRecordingServer(t, false)
	listen := func(t *testing.T, addr string, extra ...string) string {
		got := make(chan string, 1)
		tun := testTunables
		tun.listening = func(a string) { got <- a }
		startGateWith(t, f.env(), tun, append([]string{"--name", "remote", "--session", "listener", "--listen", addr, "--upstream", up.URL}, extra...)...)
		return <-got
	}
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(addr string, header map[string]string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+frontPath, strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		return resp.StatusCode, b.String()
	}

	t.Run("loopback", func(t *testing.T) {
		addr := listen(t, "127.0.0.1:0")
		for _, c := range []struct {
			header map[string]string
			want   string
		}{
			{map[string]string{"Host": "evil.example"}, "DNS rebinding"},
			{map[string]string{"Host": "evil.example:80"}, "DNS rebinding"},
			{map[string]string{"Origin": "http://evil.example"}, "cross-origin"},
			{map[string]string{"Origin": "null"}, "cross-origin"},
		} {
			if status, body := post(addr, c.header); status != http.StatusForbidden || !strings.Contains(body, c.want) {
				t.Errorf("%v: %d %q, want 403 saying %q", c.header, status, body, c.want)
			}
		}
		if n := len(up.seen()); n != 0 {
			t.Fatalf("refused requests reached the server: %d", n)
		}
		if status, body := post(addr, map[string]string{"Origin": "http://" + addr}); status != http.StatusOK || !strings.Contains(body, "protocolVersion") {
			t.Fatalf("its own origin: %d %q", status, body)
		}
	})

	// A session ended by DELETE is gone before the 204: the next request
	// naming it is 404 (the conformance suite's check, which raced the
	// session's goroutine).
	t.Run("DELETE ends the session", func(t *testing.T) {
		// A server of its own: the sessions' own requests to theirs (a GET
		// stream each) may come after this test, and the others count what
		// reached theirs.
		own := startRecordingServer(t, false)
		got := make(chan string, 1)
		tun := testTunables
		tun.listening = func(a string) { got <- a }
		startGateWith(t, f.env(), tun, "--name", "remote", "--session", "listener", "--listen", "127.0.0.1:0", "--upstream", own.URL)
		addr := <-got
		do := func(method, id, body string) *http.Response {
			t.Helper()
			req, _ := http.NewRequest(method, "http://"+addr+frontPath, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if id != "" {
				req.Header.Set("Mcp-Session-Id", id)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp
		}
		id := do(http.MethodPost, "", initialize).Header.Get("Mcp-Session-Id")
		if id == "" {
			t.Fatal("initialize: no Mcp-Session-Id")
		}
		for i := range 20 {
			if resp := do(http.MethodDelete, id, ""); resp.StatusCode != http.StatusNoContent {
				t.Fatalf("DELETE: %d", resp.StatusCode)
			}
			ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
			if resp := do(http.MethodPost, id, ping); resp.StatusCode != http.StatusNotFound {
				t.Fatalf("round %d: a ping naming the deleted session: %d, want 404", i, resp.StatusCode)
			}
			id = do(http.MethodPost, "", initialize).Header.Get("Mcp-Session-Id")
		}
	})

	t.Run("off loopback", func(t *testing.T) {
		e := &cli.Env{Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &strings.Builder{}, Getenv: func(k string) string { return f.env()[k] }}
		err := run(context.Background(), e, []string{"--name", "remote", "--listen", "0.0.0.0:0", "--upstream", up.URL}, testTunables)
		var usage cli.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "--listen-token-file") {
			t.Fatalf("off loopback without a token: %v", err)
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "listen-token")
		if err := os.WriteFile(file, []byte("s3cret-listener\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		addr := listen(t, "0.0.0.0:0", "--listen-token-file", file)
		_, port, _ := strings.Cut(addr, "]:")
		if port == "" {
			_, port, _ = strings.Cut(addr, ":")
		}
		addr = "127.0.0.1:" + port
		before := len(up.seen())
		for _, auth := range []string{"", "Bearer wrong", "Basic czNjcmV0LWxpc3RlbmVy"} {
			if status, _ := post(addr, map[string]string{"Authorization": auth}); status != http.StatusUnauthorized {
				t.Errorf("Authorization %q: %d, want 401", auth, status)
			}
		}
		if seen := up.seen(); len(seen) != before {
			t.Fatalf("unauthorized requests reached the server: %+v", seen[before:])
		}
		if status, _ := post(addr, map[string]string{"Authorization": "Bearer s3cret-listener"}); status != http.StatusOK {
			t.Fatalf("the right token: %d", status)
		}
	})
}

// TestTokenFile: a token file others may read is refused, naming the rule,
// before anything starts; one of mode 0600 is used.
func TestTokenFile(t *testing.T) {
	f := newFixture(t)
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(f.askd.AgentToken+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	noEnv := map[string]string{"ASKD_URL": f.askd.URL}
	args := append([]string{"--name", "scripted", "--session", "tokenfile", "--token-file", file, "--"}, scripted(t, "")...)
	e := &cli.Env{Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &strings.Builder{}, Getenv: func(k string) string { return noEnv[k] }}
	err := run(context.Background(), e, args, testTunables)
	if cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), "0644") || !strings.Contains(err.Error(), "0600") {
		t.Fatalf("a token file of mode 0644: %v (exit %d), want refused naming the rule", err, cli.ExitCode(err))
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	w := f.watch(t, "tokenfile")
	g := startGate(t, noEnv, args...)
	out := callAsync(g.connect(t, "", nil), context.Background(), "echo", map[string]any{"text": "by file"})
	f.answer(t, w.asked(t).ID, &askd.Answer{Decision: askd.DecisionApproved})
	if res := (<-out).must(t); text(res) != "by file" {
		t.Fatalf("with the token from the file: %q", text(res))
	}
}

// TestAskdRefuses: a gate fails closed. askd at its pending cap answers
// the next call with an error result naming the limit; askd unreachable,
// with one saying so; the server gets neither call.
func TestAskdRefuses(t *testing.T) {
	f := newFixtureWith(t, app.Config{MaxPending: 1})
	up := startRecordingServer(t, false)
	w := f.watch(t, "refuses")
	g := startGate(t, f.env(), "--name", "remote", "--session", "refuses", "--upstream", up.URL)
	cs := g.connect(t, "", nil)
	held := callAsync(cs, context.Background(), "echo", map[string]any{"text": "first"})
	first := w.asked(t)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "second"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "--max-pending") || !strings.Contains(text(res), "did not get the call") {
		t.Errorf("past the pending cap: %v, %q", err, text(res))
	}
	f.answer(t, first.ID, &askd.Answer{Decision: askd.DecisionRejected})
	(<-held).must(t)

	gone := f.env("ASKD_URL", "http://127.0.0.1:1")
	g = startGate(t, gone, "--name", "remote", "--session", "refuses", "--upstream", up.URL)
	res, err = g.connect(t, "", nil).CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "third"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "could not be reached") || !strings.Contains(text(res), "did not get the call") {
		t.Errorf("askd unreachable: %v, %q", err, text(res))
	}
	if calls := up.calls(); len(calls) > 0 {
		t.Fatalf("the server got a call no one approved: %s", calls[0])
	}
}
