package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/sqlite"
)

// testClock is a clock the test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

// history returns the actions of ask id's history, in order.
func history(t *testing.T, svc *app.Service, id int64) []string {
	t.Helper()
	evs, err := svc.History(context.Background(), humanCaller, id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Action)
	}
	return out
}

func stored(t *testing.T, svc *app.Service, id int64) *askd.Ask {
	t.Helper()
	a, err := svc.Get(context.Background(), humanCaller, id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A question whose caller goes away is cut off, not withdrawn (SPEC §2.1):
// it stays pending and is marked to be told; the answer then reaches the
// session once, whether the agent asks again or its Stop hook runs.
func TestCutOffQuestionIsToldOnce(t *testing.T) {
	tests := []struct {
		name string
		// learn is how the agent learns the answer after the cut-off.
		learn func(t *testing.T, svc *app.Service, in *askd.AskInput) string
	}{
		{"asking again", func(t *testing.T, svc *app.Service, in *askd.AskInput) string {
			a, err := svc.Create(context.Background(), agentCaller, in, app.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w := svc.Await(agentCaller, a.ID, time.Time{}, app.AwaitAnswer, nil)
			defer w.Stop()
			got, done, err := w.Wait(context.Background(), time.Time{})
			if !done {
				t.Fatal("the wait on a settled ask did not end")
			}
			got, err = w.Finish(context.Background(), got, err)
			if err != nil {
				t.Fatal(err)
			}
			return got.Answer.Answers[in.Questions[0].Question].Values[0]
		}},
		{"the Stop hook", func(t *testing.T, svc *app.Service, _ *askd.AskInput) string {
			text, err := svc.StopHook(context.Background(), []askd.Caller{agentCaller}, 0)
			if err != nil {
				t.Fatal(err)
			}
			return text
		}},
		{"check_ask {}", func(t *testing.T, svc *app.Service, _ *askd.AskInput) string {
			asks, err := svc.CheckAll(context.Background(), agentCaller)
			if err != nil || len(asks) != 1 {
				t.Fatalf("CheckAll = %d asks, %v; want the answered one", len(asks), err)
			}
			return app.ToldText(asks[0])
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &testClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
			svc := newService(t, app.Config{Now: clk.Now})
			in := decision("Which way?")
			a, err := svc.Create(context.Background(), agentCaller, in, app.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			w := svc.Await(agentCaller, a.ID, time.Time{}, app.AwaitAnswer, nil)
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the client gave up
			if _, done, err := w.Wait(ctx, time.Time{}); !done || !errors.Is(err, context.Canceled) {
				t.Fatalf("Wait after the caller left = done %v, %v", done, err)
			}
			w.Stop()
			if got := stored(t, svc, a.ID); !got.Pending() || !got.ToBeTold {
				t.Fatalf("after the cut-off: %s/%s, tell %v; want pending, to be told", got.Status, got.CancelReason, got.ToBeTold)
			}
			if h := history(t, svc, a.ID); len(h) != 2 || h[1] != askd.ActionCutOff {
				t.Fatalf("history %v, want created, cut_off", h)
			}
			if _, err := svc.Answer(context.Background(), humanCaller, a.ID, answerA("Which way?")); err != nil {
				t.Fatalf("answer after the cut-off: %v", err)
			}
			if got := tt.learn(t, svc, in); got != "a" && !strings.Contains(got, `"a"`) {
				t.Fatalf("learnt %q, want the answer a", got)
			}
			if got := stored(t, svc, a.ID); got.ToldAt == nil {
				t.Fatal("not marked told")
			}
			// Once: nothing is told again.
			text, err := svc.StopHook(context.Background(), []askd.Caller{agentCaller}, 0)
			if err != nil || text != "" {
				t.Fatalf("Stop hook after the agent learnt it: %q, %v; want nothing", text, err)
			}
			if asks, err := svc.CheckAll(context.Background(), agentCaller); err != nil || len(asks) != 0 {
				t.Fatalf("CheckAll after: %d asks, %v; want none", len(asks), err)
			}
		})
	}
}

// A grace window that ends without a decision returns the approval pending,
// marked to be told once decided; a check's wait ending changes nothing, nor
// does its caller leaving.
func TestAwaitModes(t *testing.T) {
	clk := &testClock{now: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	svc := newService(t, app.Config{Now: clk.Now})
	ctx := context.Background()
	appr, err := svc.Create(ctx, agentCaller, &askd.AskInput{Kind: askd.KindApproval, Title: "Deploy"}, app.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	grace := svc.Await(agentCaller, appr.ID, clk.Now().Add(-time.Second), app.AwaitGrace, nil) // its grace has run out
	a, done, err := grace.Wait(ctx, time.Time{})
	if !done || err != nil || !a.Pending() {
		t.Fatalf("grace over: %v, done %v, %v", a, done, err)
	}
	if a, err = grace.Finish(ctx, a, err); err != nil || !a.Pending() || !a.ToBeTold {
		t.Fatalf("Finish past the grace: %+v, %v; want pending, to be told", a, err)
	}
	grace.Stop()

	q, err := svc.Create(ctx, agentCaller, decision("Checked?"), app.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check := svc.Await(agentCaller, q.ID, clk.Now().Add(-time.Second), app.AwaitCheck, nil)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := check.Wait(gone, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("check wait with its caller gone: %v", err)
	}
	check.Stop()
	if got := stored(t, svc, q.ID); got.ToBeTold || len(history(t, svc, q.ID)) != 1 {
		t.Fatalf("a check's caller leaving changed the ask: tell %v, history %v", got.ToBeTold, history(t, svc, q.ID))
	}
}

// notifications/cancelled may reach any process, even before the call it
// names recorded its ask: the call, once tracked, ends with
// ErrCallCancelled (no response), and its ask is cut off, not withdrawn.
func TestCancellationOvertakingItsCall(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := context.Background()
	a, err := svc.Create(ctx, agentCaller, decision("Overtaken?"), app.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if id, err := svc.CallCancelled(ctx, agentCaller, "mcp-1", "7"); err != nil || id != 0 {
		t.Fatalf("CallCancelled before the call = %d, %v; want 0 (kept for the call)", id, err)
	}
	w := svc.Await(agentCaller, a.ID, time.Time{}, app.AwaitAnswer, func() {})
	defer w.Stop()
	if err := w.Track(ctx, "mcp-1", "7"); err != nil {
		t.Fatal(err)
	}
	if _, _, done, err := w.Look(ctx); !done || !errors.Is(err, app.ErrCallCancelled) {
		t.Fatalf("Look = done %v, %v; want ErrCallCancelled", done, err)
	}
	if got := stored(t, svc, a.ID); !got.Pending() || !got.ToBeTold {
		t.Fatalf("the cancelled call's ask: %s/%s, tell %v; want pending, to be told", got.Status, got.CancelReason, got.ToBeTold)
	}
}

// readCounting is a SQLite store that counts its read transactions.
type readCounting struct {
	*sqlite.Store
	views atomic.Int64
}

func (r *readCounting) View(ctx context.Context, fn func(askd.Tx) error) error {
	r.views.Add(1)
	return r.Store.View(ctx, fn)
}

// An answer committed in this process reaches its waiting call as the commit
// left it (askd.Change.Ask): the look after the wake-up reads nothing, while
// one that finds the ask still pending reads it.
func TestAnsweredWaitReadsNothing(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "askd.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	rc := &readCounting{Store: st}
	svc := app.New(rc, app.Config{})
	// SQLite tells its watchers before Update returns: once answered, heard.
	answeredWaitReadsNothing(t, svc, svc, rc.views.Load, nil)
}

// answeredWaitReadsNothing checks that agent's waiting call, once inbox
// has answered its ask, returns the answer without reading the store, where
// reads counts agent's store reads, and that a look at the pending ask
// reads. heard, when not nil, gives a channel closed once agent's watchers
// have heard of the answer to the ask.
func answeredWaitReadsNothing(t *testing.T, agent, inbox *app.Service, reads func() int64, heard func(id int64) <-chan struct{}) {
	t.Helper()
	a, err := agent.Create(t.Context(), agentCaller, decision("Ship it?"), app.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kicked := make(chan struct{}, 1)
	w := agent.Await(agentCaller, a.ID, time.Time{}, app.AwaitAnswer, func() {
		select {
		case kicked <- struct{}{}:
		default:
		}
	})
	defer w.Stop()
	before := reads()
	if _, _, done, err := w.Look(t.Context()); done || err != nil {
		t.Fatalf("first look: done %v, err %v; want the ask pending", done, err)
	}
	if reads() == before {
		t.Fatal("the look at a pending ask read nothing")
	}
	var answered <-chan struct{}
	if heard != nil {
		answered = heard(a.ID)
	}
	if _, err := inbox.Answer(t.Context(), humanCaller, a.ID, &askd.Answer{Answers: map[string]askd.Choice{"Ship it?": {Values: []string{"a"}}}}); err != nil {
		t.Fatal(err)
	}
	if answered != nil {
		select {
		case <-answered:
		case <-time.After(10 * time.Second):
			t.Fatal("the agent side did not hear the answer in 10 s")
		}
	}
	<-kicked
	before = reads()
	got, _, done, err := w.Look(t.Context())
	if err != nil || !done {
		t.Fatalf("look after the answer: done %v, err %v", done, err)
	}
	if got.Status != askd.StatusAnswered || got.Answer.Answers["Ship it?"].Values[0] != "a" || got.SettledBy != humanCaller.Name {
		t.Fatalf("look after the answer gave %+v", got)
	}
	if n := reads() - before; n != 0 {
		t.Fatalf("the look after the answer read the store %d times, want 0", n)
	}
}
