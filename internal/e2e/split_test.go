package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestSplit runs two agent and two inbox processes on one database and shows
// that they share everything through it and nothing else.
func TestSplit(t *testing.T) {
	db := pgtest.URL(t)
	agentTok := token(t, db, "agent", "agent-1")
	humanTok := token(t, db, "human", "alice")
	agentA := serve(t, "agent A", "agent", db)
	agentB := serve(t, "agent B", "agent", db)
	inboxA := serve(t, "inbox A", "inbox", db)
	inboxB := serve(t, "inbox B", "inbox", db)
	ctx := t.Context()

	t.Run("answer on inbox B releases ask_user_question on agent A", func(t *testing.T) {
		cs := connect(t, agentA.URL+"/mcp", agentTok, "split-release", "")
		got := callAsync(ctx, cs, "ask_user_question", questionArgs("Which colour?"))
		people := client.New(inboxB.URL, humanTok)
		id := pendingIn(t, people, "split-release", 1)[0]
		if _, err := people.Answer(ctx, id, &askd.Answer{Answers: map[string]askd.Choice{"Which colour?": {Values: []string{"green"}}}}); err != nil {
			t.Fatalf("answer on inbox B: %v", err)
		}
		select {
		case r := <-got:
			if a := answers(t, r); a["Which colour?"] != "green" {
				t.Fatalf("agent A's call returned answers %v", a)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("agent A's blocked call was not released by the answer on inbox B")
		}
	})

	t.Run("SSE on inbox A sees an ask created through agent B", func(t *testing.T) {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		events, err := client.New(inboxA.URL, humanTok).Events(sctx, -1)
		if err != nil {
			t.Fatalf("events on inbox A: %v", err)
		}
		agents := client.New(agentB.URL, agentTok)
		agents.Session = "split-sse"
		a, err := agents.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "Release notes drafted"}, 0)
		if err != nil {
			t.Fatalf("create on agent B: %v", err)
		}
		timeout := time.After(10 * time.Second)
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatal("inbox A's event stream ended")
				}
				if e.Type == "ask.created" && e.Event.AskID == a.ID {
					return
				}
			case <-timeout:
				t.Fatalf("inbox A's stream did not show ask %d created on agent B", a.ID)
			}
		}
	})

	t.Run("ask on agent A answered on inbox B is returned by check_ask on A", func(t *testing.T) {
		cs := connect(t, agentA.URL+"/mcp", agentTok, "split-check", "")
		var created struct {
			ID int64 `json:"id"`
		}
		res := call(t, cs, "ask", map[string]any{"kind": "decision", "title": "Ship it today?",
			"options": []map[string]any{{"label": "yes"}, {"label": "no"}}})
		if err := json.Unmarshal([]byte(text(t, res)), &created); err != nil || created.ID == 0 {
			t.Fatalf("ask returned %s", text(t, res))
		}
		if _, err := client.New(inboxB.URL, humanTok).Answer(ctx, created.ID, &askd.Answer{Answer: "no"}); err != nil {
			t.Fatalf("answer on inbox B: %v", err)
		}
		res = call(t, cs, "check_ask", map[string]any{"id": created.ID})
		out := text(t, res)
		if res.IsError || !strings.Contains(out, `"status":"answered"`) || !strings.Contains(out, `"no"`) {
			t.Fatalf("check_ask on agent A: %s", out)
		}
	})

	t.Run("each side refuses the other's tokens", func(t *testing.T) {
		for _, c := range []struct {
			name, method, url, token string
		}{
			{"human token on agent MCP", "POST", agentA.URL + "/mcp", humanTok},
			{"human token on agent API", "POST", agentB.URL + "/api/asks", humanTok},
			{"human token listing on agent side", "GET", agentA.URL + "/api/asks", humanTok},
			{"agent token on inbox list", "GET", inboxA.URL + "/api/asks", agentTok},
			{"agent token creating on inbox", "POST", inboxB.URL + "/api/asks", agentTok},
			{"agent token on inbox events", "GET", inboxA.URL + "/api/events", agentTok},
		} {
			req, _ := http.NewRequestWithContext(ctx, c.method, c.url, strings.NewReader(`{"kind":"ready","title":"x"}`))
			req.Header.Set("Authorization", "Bearer "+c.token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: %s, want 403", c.name, resp.Status)
			}
		}
	})

	t.Run("the inbox answers with every agent process stopped", func(t *testing.T) {
		// The inbox side knows no agent process: it only writes to the
		// database. With both agent processes frozen, answering still works.
		agents := client.New(agentA.URL, agentTok)
		agents.Session = "split-frozen"
		a, err := agents.Create(ctx, &askd.AskInput{Kind: askd.KindBlocked, Title: "Need the staging password"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		agentA.stop(t)
		agentB.stop(t)
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = client.New(inboxA.URL, humanTok).Answer(actx, a.ID, &askd.Answer{Answer: "it is in the vault"})
		cancel()
		agentA.cont(t)
		agentB.cont(t)
		if err != nil {
			t.Fatalf("answer with the agent side stopped: %v", err)
		}
		got, err := agents.Check(ctx, a.ID, 0)
		if err != nil || got.Status != askd.StatusAnswered {
			t.Fatalf("check on agent A after: %+v, %v", got, err)
		}
	})

	t.Run("an answer on inbox B reaches a channel bridge attached to agent A", func(t *testing.T) {
		bridge := client.New(agentA.URL, agentTok)
		bridge.Session = "split-channel"
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		tells, err := bridge.Attach(sctx, "split-channel")
		if err != nil {
			t.Fatalf("attach on agent A: %v", err)
		}
		asker := client.New(agentB.URL, agentTok)
		asker.Session = "split-channel"
		a, err := asker.Create(ctx, &askd.AskInput{Kind: askd.KindDecision, Title: "Merge now?"}, 0)
		if err != nil {
			t.Fatalf("create on agent B: %v", err)
		}
		people := client.New(inboxB.URL, humanTok)
		if _, err := people.Answer(ctx, a.ID, &askd.Answer{Answer: "yes"}); err != nil {
			t.Fatalf("answer on inbox B: %v", err)
		}
		var tell askd.ChannelTell
		select {
		case tell = <-tells:
		case <-time.After(10 * time.Second):
			t.Fatal("the bridge on agent A was not handed the answer given on inbox B")
		}
		if tell.AskID != a.ID || tell.Outcome != "answered" || !strings.Contains(tell.Text, "Merge now?") {
			t.Fatalf("told text %+v", tell)
		}
		if _, err := bridge.ChannelTold(ctx, "split-channel", tell.Key); err != nil {
			t.Fatalf("report told on agent A: %v", err)
		}
		d, err := people.Show(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if d.Ask.ToldAt == nil || !slices.ContainsFunc(d.History, func(e *askd.Event) bool { return e.Action == askd.ActionTold && e.Note == "by channel" }) {
			t.Fatalf("ask %d after the report: told %v, history %+v", a.ID, d.Ask.ToldAt, d.History)
		}
	})

	t.Run("a 2025-11-25 client's cancellation reaching the other agent cuts the ask off", func(t *testing.T) {
		lb := newBalancer(t, agentA.URL, agentB.URL)
		cs := connect(t, lb.URL+"/mcp", agentTok, "split-cancel", "2025-11-25")
		cctx, cancel := context.WithCancel(ctx)
		got := callAsync(cctx, cs, "ask_user_question", questionArgs("Which region?"))
		people := client.New(inboxA.URL, humanTok)
		id := pendingIn(t, people, "split-cancel", 1)[0]
		cancel()
		if r := <-got; r.err == nil {
			t.Fatalf("the cancelled call returned %v", r.res)
		}
		// A cut-off, not a withdrawal (SPEC §2.1): the ask stays pending, to
		// be told, and the person's answer reaches the same call made again.
		testserver.Eventually(t, "the cancelled call's ask cut off", func() bool {
			d, err := people.Show(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			cut := slices.ContainsFunc(d.History, func(e *askd.Event) bool { return e.Action == askd.ActionCutOff })
			return cut && d.Ask.Status == askd.StatusPending && d.Ask.ToBeTold
		})
		if _, err := people.Answer(ctx, id, &askd.Answer{Answers: map[string]askd.Choice{"Which region?": {Values: []string{"eu-west"}}}}); err != nil {
			t.Fatalf("answer after the cut-off: %v", err)
		}
		again := <-callAsync(ctx, cs, "ask_user_question", questionArgs("Which region?"))
		if again.err != nil {
			t.Fatalf("the same call again: %v", again.err)
		}
		if got := text(t, again.res); !strings.Contains(got, "eu-west") {
			t.Fatalf("the same call again: %s, want the answer given meanwhile", got)
		}
		call, cancelled := lb.backendOf("tools/call"), lb.backendOf("notifications/cancelled")
		if call == "" || cancelled == "" || call == cancelled {
			t.Fatalf("the call went to %q and its cancellation to %q: want two different agent processes", call, cancelled)
		}
	})
}

// balancer is a round-robin reverse proxy over agent processes, as a load
// balancer without sticky sessions: each request goes to the next backend.
// It notes where each JSON-RPC method went, for the test to check.
type balancer struct {
	*httptest.Server
	mu   sync.Mutex
	next int
	got  map[string]string // JSON-RPC method → the backend its last request went to
}

type targetKey struct{}

func newBalancer(t *testing.T, backends ...string) *balancer {
	t.Helper()
	lb := &balancer{got: map[string]string{}}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			u := r.In.Context().Value(targetKey{}).(*url.URL)
			r.SetURL(u)
		},
		FlushInterval: -1, // pass streamed responses on as they come
		// A cancelled client call ends its proxied request: not worth a log line.
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) { w.WriteHeader(http.StatusBadGateway) },
	}
	lb.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
		}
		json.Unmarshal(body, &msg)
		lb.mu.Lock()
		backend := backends[lb.next%len(backends)]
		lb.next++
		if msg.Method != "" {
			lb.got[msg.Method] = backend
		}
		lb.mu.Unlock()
		u, _ := url.Parse(backend)
		proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, u)))
	}))
	t.Cleanup(lb.Close)
	return lb
}

// backendOf is the backend the last request with the JSON-RPC method went to.
func (lb *balancer) backendOf(method string) string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	return lb.got[method]
}
