package mcpgate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOneApprovalAcrossGates: two gate processes of one session in front
// of one server, against one askd. The same call made through both at
// once waits on one approval; approved, it answers exactly one of them
// (the server gets one call), and the other asks anew. A decision made
// while no gate ran (the first killed) is picked up by exactly one of two
// gates started since, at once. Each approval is read back from askd:
// told once, "handed on".
func TestOneApprovalAcrossGates(t *testing.T) {
	f := newFixture(t)
	up := startRecordingServer(t, false)
	const session = "two-gates"
	w := f.watch(t, session)
	args := []string{"--name", "remote", "--session", session, "--upstream", up.URL}

	one, two := startGateProcess(t, f, args), startGateProcess(t, f, args)
	call := map[string]any{"text": "once"}
	outs := []<-chan callOutcome{callAsync(one.cs, context.Background(), "echo", call), callAsync(two.cs, context.Background(), "echo", call)}
	shared := w.asked(t)
	waiting(t, f, 2) // both wait, on the one approval
	f.answer(t, shared.ID, &askd.Answer{Decision: askd.DecisionApproved})
	res, other := firstOf(t, outs)
	if res.IsError || text(res) != "once" {
		t.Fatalf("the call the approval answered: isError %v, %q", res.IsError, text(res))
	}
	anew := w.asked(t)
	if anew.ID == shared.ID {
		t.Fatalf("the other call re-used approval #%d", shared.ID)
	}
	f.answer(t, anew.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "one each"})
	if res := (<-other).must(t); !res.IsError || !strings.Contains(text(res), "one each") {
		t.Fatalf("the other call: isError %v, %q", res.IsError, text(res))
	}
	if n := len(up.calls()); n != 1 {
		t.Fatalf("the server got %d calls for one approval, want 1", n)
	}
	toldOnce(t, f, shared.ID, anew.ID)

	// Decided while no gate ran: two gates started since, the same call
	// through each at once.
	call = map[string]any{"text": "decided while down"}
	first := startGateProcess(t, f, args)
	go first.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: call})
	cut := w.asked(t)
	waiting(t, f, 1)
	first.kill(t)
	if c := w.next(t, askd.ActionCutOff); c.ID != cut.ID {
		t.Fatalf("cut off ask %d, want %d", c.ID, cut.ID)
	}
	f.answer(t, cut.ID, &askd.Answer{Decision: askd.DecisionApproved})
	three, four := startGateProcess(t, f, args), startGateProcess(t, f, args)
	outs = []<-chan callOutcome{callAsync(three.cs, context.Background(), "echo", call), callAsync(four.cs, context.Background(), "echo", call)}
	res, other = firstOf(t, outs)
	if res.IsError || text(res) != "decided while down" {
		t.Fatalf("the call that picked up the decision: isError %v, %q", res.IsError, text(res))
	}
	later := w.asked(t)
	if later.ID == cut.ID {
		t.Fatalf("the other call re-used approval #%d", cut.ID)
	}
	if _, err := f.person.Dismiss(context.Background(), later.ID, ""); err != nil {
		t.Fatal(err)
	}
	if res := (<-other).must(t); !res.IsError || !strings.Contains(text(res), "dismissed") {
		t.Fatalf("the other call: isError %v, %q", res.IsError, text(res))
	}
	if n := len(up.calls()); n != 2 {
		t.Fatalf("the server got %d calls for two approvals, want 2", n)
	}
	toldOnce(t, f, cut.ID, later.ID)
	if n := len(f.asks(t, session)); n != 4 {
		t.Fatalf("%d asks in the session, want 4", n)
	}
}

// firstOf waits for the first of two calls to return: its result, and the
// other's channel.
func firstOf(t testing.TB, outs []<-chan callOutcome) (*mcp.CallToolResult, <-chan callOutcome) {
	t.Helper()
	select {
	case o := <-outs[0]:
		return o.must(t), outs[1]
	case o := <-outs[1]:
		return o.must(t), outs[0]
	}
}

// toldOnce reads each ask back from askd: decided, told, with one told
// row, the gate's "handed on".
func toldOnce(t testing.TB, f *fixture, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		d, err := f.person.Show(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		var told []*askd.Event
		for _, ev := range d.History {
			if ev.Action == askd.ActionTold {
				told = append(told, ev)
			}
		}
		if d.Pending() || d.ToldAt == nil || !d.OneCall || len(told) != 1 || told[0].Note != "handed on" {
			t.Fatalf("approval #%d: %s, told at %v, one_call %v, told rows %+v; want decided, told once, handed on", id, d.Status, d.ToldAt, d.OneCall, told)
		}
	}
}

// TestMarkFails: a gate fails closed when askd cannot mark the decision
// used. The call is refused with a result saying so and naming the
// approval; the server does not get it; the approval stays decided and
// untold in askd, and the same call again, askd answering, picks it up.
func TestMarkFails(t *testing.T) {
	f := newFixture(t)
	up := startRecordingServer(t, false)
	target, err := url.Parse(f.askd.URL)
	if err != nil {
		t.Fatal(err)
	}
	var refuse atomic.Bool
	refuse.Store(true)
	proxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuse.Load() && strings.HasSuffix(r.URL.Path, "/told") {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"askd is restarting","code":"unavailable"}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	const session = "mark-fails"
	w := f.watch(t, session)
	g := startGate(t, f.env("ASKD_URL", front.URL), "--name", "remote", "--session", session, "--upstream", up.URL)
	cs := g.connect(t, "", nil)
	call := map[string]any{"text": "marked"}
	out := callAsync(cs, context.Background(), "echo", call)
	a := w.asked(t)
	f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
	res := (<-out).must(t)
	if !res.IsError || !strings.Contains(text(res), "could not mark it used (askd is restarting)") || !strings.Contains(text(res), "did not get the call") || !strings.Contains(text(res), "#"+itoa(a.ID)) {
		t.Fatalf("the mark refused: isError %v, %q", res.IsError, text(res))
	}
	if d, err := f.person.Show(context.Background(), a.ID); err != nil || d.ToldAt != nil || d.Status != askd.StatusAnswered {
		t.Fatalf("approval #%d after the refused mark: %+v, %v; want decided, untold", a.ID, d, err)
	}
	if n := len(up.calls()); n != 0 {
		t.Fatalf("the server got %d calls with no decision marked used", n)
	}
	refuse.Store(false)
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: call})
	if err != nil || res.IsError || text(res) != "marked" {
		t.Fatalf("the same call again: %v, %+v", err, res)
	}
	toldOnce(t, f, a.ID)
	if n := len(f.asks(t, session)); n != 1 {
		t.Fatalf("%d asks, want the one picked up", n)
	}
}
