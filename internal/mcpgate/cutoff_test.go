package mcpgate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCutOff: a call the client gives up on leaves its approval pending
// (cut off, never withdrawn); the same call again gets the decision made
// meanwhile, at once and once: the call after that asks anew.
func TestCutOff(t *testing.T) {
	f := newFixture(t)
	const session = "cutoff"
	w := f.watch(t, session)
	g := startGate(t, f.env(), append([]string{"--name", "scripted", "--session", session, "--"}, scripted(t, "")...)...)
	cs := g.connect(t, "", nil)
	args := map[string]any{"text": "cut off"}

	ctx, cancel := context.WithCancel(context.Background())
	out := callAsync(cs, ctx, "echo", args)
	a := w.asked(t)
	waiting(t, f, 1)
	cancel() // the go-sdk client sends notifications/cancelled
	if o := <-out; o.err == nil {
		t.Fatalf("the cancelled call returned %q", text(o.res))
	}
	cut := w.next(t, askd.ActionCutOff)
	if cut.ID != a.ID || !cut.Pending() {
		t.Fatalf("cut off: ask %d %s, want #%d pending", cut.ID, cut.Status, a.ID)
	}
	f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})

	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil || res.IsError || text(res) != "cut off" {
		t.Fatalf("the same call again: %v, %+v", err, res)
	}
	if n := len(f.asks(t, session)); n != 1 {
		t.Fatalf("%d asks after the same call again, want the one it picked up", n)
	}
	told := w.next(t, askd.ActionTold)
	if told.ID != a.ID {
		t.Fatalf("told ask %d, want %d", told.ID, a.ID)
	}

	out = callAsync(cs, context.Background(), "echo", args)
	again := w.asked(t)
	if again.ID == a.ID {
		t.Fatalf("a third identical call re-used approval #%d", a.ID)
	}
	f.answer(t, again.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "once was enough"})
	if res := (<-out).must(t); !res.IsError || !strings.Contains(text(res), "once was enough") {
		t.Fatalf("the third call: isError %v, %q", res.IsError, text(res))
	}

	// Given up at once, perhaps before askd began to wait on it: the
	// approval stays pending all the same, marked as waited on no more.
	ctx, cancel = context.WithCancel(context.Background())
	out = callAsync(cs, ctx, "echo", map[string]any{"text": "given up at once"})
	quick := w.asked(t)
	cancel()
	<-out
	testserver.Eventually(t, "the approval marked as waited on no more", func() bool {
		d, err := f.person.Show(context.Background(), quick.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Pending() {
			t.Fatalf("a call given up at once: its approval is %s", d.Status)
		}
		return d.ToBeTold
	})
}

// TestStillPending: with no decision within --wait, the call's error result
// says the approval is still pending and that the same call picks it up;
// it does, once decided. While it waits, a call with a progress token
// hears that it waits.
func TestStillPending(t *testing.T) {
	f := newFixture(t)
	const session = "pending"
	w := f.watch(t, session)
	g := startGate(t, f.env(), append([]string{"--name", "scripted", "--session", session, "--wait", "0s", "--"}, scripted(t, "")...)...)
	cs := g.connect(t, "", nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "later"}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "still pending") || !strings.Contains(text(res), "same call") {
		t.Fatalf("no decision within --wait: %v, %q", err, text(res))
	}
	a := w.asked(t)
	if !strings.Contains(text(res), "#"+itoa(a.ID)) {
		t.Fatalf("the result does not name approval #%d: %q", a.ID, text(res))
	}
	f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "later"}})
	if err != nil || res.IsError || text(res) != "later" {
		t.Fatalf("the same call once decided: %v, %+v", err, res)
	}

	progress := make(chan *mcp.ProgressNotificationParams, 16)
	g2 := startGate(t, f.env(), append([]string{"--name", "scripted", "--session", session, "--"}, scripted(t, "")...)...)
	cs2 := g2.connect(t, "", &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		select {
		case progress <- r.Params:
		default:
		}
	}})
	p := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "progress"}}
	p.SetProgressToken("tok-1")
	out := make(chan callOutcome, 1)
	go func() { r, err := cs2.CallTool(context.Background(), p); out <- callOutcome{r, err} }()
	b := w.asked(t)
	for got := range progress {
		if got.ProgressToken != "tok-1" {
			t.Fatalf("progress %+v, want token tok-1", got)
		}
		if strings.Contains(got.Message, "#"+itoa(b.ID)) {
			break // it waits, and says on what
		}
	}
	f.answer(t, b.ID, &askd.Answer{Decision: askd.DecisionApproved})
	if res := (<-out).must(t); res.IsError {
		t.Fatalf("approved: %q", text(res))
	}
}

// TestRestart: the gate killed (SIGKILL) and started again loses no
// approval: a pending one is picked up by the same call through the new
// gate, and so is one decided while no gate ran.
func TestRestart(t *testing.T) {
	f := newFixture(t)
	const session = "restart"
	w := f.watch(t, session)
	args := []string{"--name", "scripted", "--session", session, "--"}
	args = append(args, scripted(t, "")...)

	for _, decideWhile := range []string{"down", "up"} {
		call := map[string]any{"text": "decided while the gate was " + decideWhile}
		first := startGateProcess(t, f, args)
		go first.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: call})
		a := w.asked(t)
		// Killed while its wait is in askd (between asking and waiting,
		// a gate killed leaves the approval pending unmarked).
		waiting(t, f, 1)
		first.kill(t)
		if cut := w.next(t, askd.ActionCutOff); cut.ID != a.ID {
			t.Fatalf("cut off ask %d, want %d", cut.ID, a.ID)
		}
		if decideWhile == "down" {
			f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		}
		second := startGateProcess(t, f, args)
		out := callAsync(second.cs, context.Background(), "echo", call)
		if decideWhile == "up" {
			// Re-attaching records nothing: the new gate's wait is seen
			// in askd's count of waiting calls.
			waiting(t, f, 1)
			f.answer(t, a.ID, &askd.Answer{Decision: askd.DecisionApproved})
		}
		if res := (<-out).must(t); res.IsError || text(res) != call["text"] {
			t.Fatalf("after the restart: isError %v, %q", res.IsError, text(res))
		}
		for _, x := range f.asks(t, session) {
			if x.ID > a.ID {
				t.Fatalf("the restarted gate asked anew: #%d %q", x.ID, x.Title)
			}
		}
	}

	// A decision that reached its call answers no other, after a restart
	// too: the same call through a new gate asks anew, however soon.
	call := map[string]any{"text": "approved while it waited"}
	first := startGateProcess(t, f, args)
	out := callAsync(first.cs, context.Background(), "echo", call)
	used := w.asked(t)
	f.answer(t, used.ID, &askd.Answer{Decision: askd.DecisionApproved})
	if res := (<-out).must(t); res.IsError {
		t.Fatalf("approved while it waited: %q", text(res))
	}
	first.kill(t)
	second := startGateProcess(t, f, args)
	out = callAsync(second.cs, context.Background(), "echo", call)
	if anew := w.asked(t); anew.ID == used.ID {
		t.Fatalf("the same call through a new gate re-used approval #%d", used.ID)
	} else {
		f.answer(t, anew.ID, &askd.Answer{Decision: askd.DecisionRejected, Comment: "not twice"})
	}
	if res := (<-out).must(t); !res.IsError || !strings.Contains(text(res), "not twice") {
		t.Fatalf("the same call again: %q", text(res))
	}
}

// waiting waits until n calls wait in askd (its askd_waiters gauge): a
// wait that re-attaches to an approval records nothing else.
func waiting(t testing.TB, f *fixture, n int) {
	t.Helper()
	testserver.Eventually(t, fmt.Sprintf("%d calls waiting in askd", n), func() bool {
		return testserver.Metric(t, f.askd.URL, "askd_waiters") == strconv.Itoa(n)
	})
}

// gateProcess is the gate as a process of its own, with a client.
type gateProcess struct {
	cmd *exec.Cmd
	cs  *mcp.ClientSession
}

func startGateProcess(t testing.TB, f *fixture, args []string) *gateProcess {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argJSON, _ := json.Marshal(args)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), roleEnv+"=gate", "MCPGATE_TEST_ARGS="+string(argJSON), "ASKD_URL="+f.askd.URL, "ASKD_TOKEN="+f.askd.AgentToken)
	c := mcp.NewClient(&mcp.Implementation{Name: "mcpgate-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &gateProcess{cmd: cmd, cs: cs}
}

// kill kills the gate outright: no cleanup of its own runs.
func (p *gateProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }
