package mcpgate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEverything puts the real server-everything from npm behind the gate,
// with a go-sdk client that declares no elicitation: the server asks all
// the same (the gate declares elicitation to it), the question is a form
// ask in askd, and what the person does there is what the server gets.
func TestEverything(t *testing.T) {
	f := newFixture(t)
	server := npmServer(t, "mcp-server-everything", "stdio")
	gate := func(t *testing.T) (*mcp.ClientSession, *watcher) {
		session := "everything-" + strings.ReplaceAll(t.Name(), "/", "-")
		w := f.watch(t, session)
		g := startGate(t, f.env(), append([]string{"--name", "everything", "--session", session, "--allow", "trigger-elicitation-request", "--"}, server...)...)
		return g.connect(t, "", nil), w
	}
	// elicit calls the eliciting tool, lets the person act on its form
	// ask, and returns what the server says it got (its "Raw result").
	elicit := func(t *testing.T, act func(a *askd.Ask)) map[string]any {
		cs, w := gate(t)
		out := callAsync(cs, context.Background(), "trigger-elicitation-request", map[string]any{})
		a := w.asked(t)
		if a.Kind != askd.KindForm || a.Source != "everything" || a.Schema == nil {
			t.Fatalf("the form ask: kind %s, source %q, schema %s", a.Kind, a.Source, a.Schema)
		}
		act(a)
		res := (<-out).must(t)
		all := text(res)
		_, raw, ok := strings.Cut(all, "Raw result: ")
		var got map[string]any
		if !ok || json.Unmarshal([]byte(raw), &got) != nil {
			t.Fatalf("the server's result has no raw result: %q", all)
		}
		return got
	}

	t.Run("answered", func(t *testing.T) {
		entered := map[string]any{
			"name": "Sam Example", "check": true, "firstLine": "It was a bright cold day in April.",
			"email": "sam@example.com", "homepage": "https://example.com/sam", "birthdate": "1990-01-01",
			"integer": 42.0, "number": 3.5,
			"untitledSingleSelectEnum":   "Ross",
			"untitledMultipleSelectEnum": []any{"Piano", "Drums"},
			"titledSingleSelectEnum":     "hero-2",
			"titledMultipleSelectEnum":   []any{"fish-1", "fish-3"},
			"legacyTitledEnum":           "pet-3",
		}
		got := elicit(t, func(a *askd.Ask) {
			var schema struct{ Properties map[string]any }
			json.Unmarshal(a.Schema, &schema)
			for k := range entered {
				if _, ok := schema.Properties[k]; !ok {
					t.Errorf("the form has no field %q: %s", k, a.Schema)
				}
			}
			f.answer(t, a.ID, &askd.Answer{Content: entered})
		})
		want := map[string]any{"action": "accept", "content": entered}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the server got %v\nwant %v", got, want)
		}
	})

	t.Run("declined", func(t *testing.T) {
		got := elicit(t, func(a *askd.Ask) { f.answer(t, a.ID, &askd.Answer{Action: askd.FormDecline}) })
		if !reflect.DeepEqual(got, map[string]any{"action": "decline"}) {
			t.Fatalf("the server got %v, want decline", got)
		}
	})

	t.Run("dismissed", func(t *testing.T) {
		got := elicit(t, func(a *askd.Ask) {
			if _, err := f.person.Dismiss(context.Background(), a.ID, "not now"); err != nil {
				t.Fatal(err)
			}
		})
		if !reflect.DeepEqual(got, map[string]any{"action": "cancel"}) {
			t.Fatalf("the server got %v, want cancel", got)
		}
	})
}

// TestTransparent: what a client gets through the gate (the server's
// initialize result, its tools, resources, resource templates and prompts,
// a resource read, a prompt, a completion, a log level set, a ping) is,
// byte for byte, what a client gets from the server itself when it
// declares what the gate declares to the server (elicitation, form and
// url). The client behind the gate declares nothing.
func TestTransparent(t *testing.T) {
	f := newFixture(t)
	server := npmServer(t, "mcp-server-everything", "stdio")
	direct, err := startChild(server, stdioEnv(), io.Discard, testTunables.childGrace)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { direct.close() })
	g := startGate(t, f.env(), append([]string{"--name", "everything", "--"}, server...)...)
	gated := newLineConn(g.out, g.in, nil)

	type request struct {
		method string
		params func(caps string, listed map[string]json.RawMessage) any
	}
	none := func(string, map[string]json.RawMessage) any { return map[string]any{} }
	requests := []request{
		{"initialize", func(caps string, _ map[string]json.RawMessage) any {
			return map[string]any{"protocolVersion": "2025-11-25", "capabilities": json.RawMessage(caps), "clientInfo": map[string]string{"name": "raw", "version": "1"}}
		}},
		{"tools/list", none},
		{"resources/list", none},
		{"resources/templates/list", none},
		{"prompts/list", none},
		{"resources/read", func(_ string, listed map[string]json.RawMessage) any {
			var r struct{ Resources []struct{ URI string } }
			if json.Unmarshal(listed["resources/list"], &r) != nil || len(r.Resources) == 0 {
				t.Fatalf("no resources listed: %s", listed["resources/list"])
			}
			return map[string]any{"uri": r.Resources[0].URI}
		}},
		{"prompts/get", func(string, map[string]json.RawMessage) any { return map[string]any{"name": "simple-prompt"} }},
		{"completion/complete", func(string, map[string]json.RawMessage) any {
			return map[string]any{"ref": map[string]string{"type": "ref/prompt", "name": "completable-prompt"}, "argument": map[string]string{"name": "department", "value": "S"}}
		}},
		{"logging/setLevel", func(string, map[string]json.RawMessage) any { return map[string]any{"level": "error"} }},
		{"ping", none},
	}
	var results [2]map[string]json.RawMessage
	for i, peer := range []*rawPeer{{t: t, c: direct}, {t: t, c: gated}} {
		caps := `{}`
		if i == 0 {
			caps = `{"elicitation":{"form":{},"url":{}}}`
		}
		results[i] = map[string]json.RawMessage{}
		for _, r := range requests {
			results[i][r.method] = peer.call(r.method, r.params(caps, results[0]))
			if r.method == "initialize" {
				peer.notify("notifications/initialized")
			}
		}
	}
	for _, r := range requests {
		if !bytes.Equal(compact(t, results[0][r.method]), compact(t, results[1][r.method])) {
			t.Errorf("%s through the gate differs from the server's own:\n direct %s\n  gated %s", r.method, results[0][r.method], results[1][r.method])
		}
	}
	if n := strings.Count(string(results[1]["tools/list"]), `"name"`); n < 10 {
		t.Errorf("tools/list lists %d names: %s", n, results[1]["tools/list"])
	}
	if !strings.Contains(string(results[1]["completion/complete"]), "Sales") {
		t.Errorf("completion/complete: %s", results[1]["completion/complete"])
	}
}

// rawPeer speaks JSON-RPC over a conn, message by message.
type rawPeer struct {
	t    testing.TB
	c    conn
	next int
}

// call sends request method and returns its result's bytes, passing over
// whatever else comes first.
func (p *rawPeer) call(method string, params any) json.RawMessage {
	p.t.Helper()
	p.next++
	id := fmt.Sprintf("raw-%d", p.next)
	p.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		m, err := p.c.read(ctx)
		if err != nil {
			p.t.Fatalf("%s: %v", method, err)
		}
		if m.isResponse() && m.key() == idKey(encode(id)) {
			if m.Error != nil {
				p.t.Fatalf("%s: error %s", method, m.Error)
			}
			return m.Result
		}
	}
}

// sendRaw sends bytes as they are.
func (p *rawPeer) sendRaw(raw string) {
	p.t.Helper()
	if err := p.c.write(context.Background(), &message{raw: []byte(raw)}); err != nil {
		p.t.Fatal(err)
	}
}

// response waits for the response of id ("" for an id of null).
func (p *rawPeer) response(id string) *message {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	want := ""
	if id != "" {
		want = idKey(encode(id))
	}
	for {
		m, err := p.c.read(ctx)
		if err != nil {
			p.t.Fatalf("waiting for the response to %q: %v", id, err)
		}
		if m.Method == "" && m.key() == want {
			return m
		}
	}
}

func (p *rawPeer) notify(method string) {
	p.send(map[string]any{"jsonrpc": "2.0", "method": method})
}

func (p *rawPeer) send(v any) {
	p.t.Helper()
	m, err := parseMessage(encode(v))
	if err != nil {
		p.t.Fatal(err)
	}
	if err := p.c.write(context.Background(), m); err != nil {
		p.t.Fatal(err)
	}
}

func compact(t testing.TB, raw json.RawMessage) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestServerNotifications: what the server sends the client of its own
// accord passes through the gate as it came: the progress of a call
// --allow lets through, each step before the call's result, with the
// client's progress token.
func TestServerNotifications(t *testing.T) {
	f := newFixture(t)
	server := npmServer(t, "mcp-server-everything", "stdio")
	g := startGate(t, f.env(), append([]string{"--name", "everything", "--allow", "trigger-long-running-operation", "--"}, server...)...)
	peer := &rawPeer{t: t, c: newLineConn(g.out, g.in, nil)}
	peer.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]string{"name": "raw", "version": "1"}})
	peer.notify("notifications/initialized")
	peer.send(map[string]any{"jsonrpc": "2.0", "id": "long", "method": "tools/call", "params": map[string]any{
		"name": "trigger-long-running-operation", "arguments": map[string]any{"duration": 0.3, "steps": 3},
		"_meta": map[string]any{"progressToken": "p-1"},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var steps []float64
	for {
		m, err := peer.c.read(ctx)
		if err != nil {
			t.Fatalf("after %v steps: %v", steps, err)
		}
		if m.Method == "notifications/progress" {
			var p struct {
				ProgressToken string  `json:"progressToken"`
				Progress      float64 `json:"progress"`
				Total         float64 `json:"total"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil || p.ProgressToken != "p-1" || p.Total != 3 {
				t.Fatalf("a progress notification: %s (%v)", m.Params, err)
			}
			steps = append(steps, p.Progress)
			continue
		}
		if m.isResponse() && m.key() == idKey(encode("long")) {
			if !strings.Contains(string(m.Result), "Long running operation completed") {
				t.Fatalf("the call's result: %s %s", m.Result, m.Error)
			}
			break
		}
	}
	if fmt.Sprint(steps) != "[1 2 3]" {
		t.Errorf("progress before the result: %v, want [1 2 3]", steps)
	}
	if asks := f.asks(t, "everything"); len(asks) != 0 {
		t.Errorf("an allowed call asked: %d asks", len(asks))
	}
}
