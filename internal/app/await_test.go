package app_test

import (
	"context"
	"errors"
	"fmt"
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
			got, err := svc.AwaitOutcome(context.Background(), agentCaller, app.Wait{Ask: a.ID, Mode: app.AwaitAnswer}, nil)
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
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // the client gave up
			if _, err := svc.AwaitOutcome(ctx, agentCaller, app.Wait{Ask: a.ID, Mode: app.AwaitAnswer}, nil); !errors.Is(err, context.Canceled) {
				t.Fatalf("AwaitOutcome after the caller left = %v", err)
			}
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
	// Its grace has run out.
	a, err := svc.AwaitOutcome(ctx, agentCaller, app.Wait{Ask: appr.ID, Mode: app.AwaitGrace, Until: clk.Now().Add(-time.Second)}, nil)
	if err != nil || !a.Pending() || !a.ToBeTold {
		t.Fatalf("past the grace: %+v, %v; want pending, to be told", a, err)
	}

	q, err := svc.Create(ctx, agentCaller, decision("Checked?"), app.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := svc.AwaitOutcome(gone, agentCaller, app.Wait{Ask: q.ID, Mode: app.AwaitCheck, Until: clk.Now().Add(-time.Second)}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("check wait with its caller gone: %v", err)
	}
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
	e := svc.Expect(ctx, agentCaller, app.Wait{Ask: a.ID, Mode: app.AwaitAnswer, Call: &app.CallRef{MCPSession: "mcp-1", Request: "7"}},
		app.Handlers{Done: func(*askd.Ask, error) { t.Error("Done called for an expectation over at once") }})
	if _, err, over := e.Now(); !over || !errors.Is(err, app.ErrCallCancelled) {
		t.Fatalf("Now = over %v, %v; want ErrCallCancelled", over, err)
	}
	if got := stored(t, svc, a.ID); !got.Pending() || !got.ToBeTold {
		t.Fatalf("the cancelled call's ask: %s/%s, tell %v; want pending, to be told", got.Status, got.CancelReason, got.ToBeTold)
	}
}

// readCounting is a SQLite store that counts its reads: read transactions,
// and ReadAsk (one of them).
type readCounting struct {
	*sqlite.Store
	views atomic.Int64
}

func (r *readCounting) View(ctx context.Context, fn func(askd.Tx) error) error {
	r.views.Add(1)
	return r.Store.View(ctx, fn)
}

func (r *readCounting) ReadAsk(ctx context.Context, id int64) (*askd.Ask, error) {
	r.views.Add(1)
	return r.Store.ReadAsk(ctx, id)
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
	type outcome struct {
		a     *askd.Ask
		err   error
		reads int64 // the store reads made from the answer to Done
	}
	var before atomic.Int64
	done := make(chan outcome, 1)
	e := agent.Expect(t.Context(), agentCaller, app.Wait{Ask: a.ID, Mode: app.AwaitAnswer},
		app.Handlers{Done: func(a *askd.Ask, err error) { done <- outcome{a, err, reads() - before.Load()} }})
	before.Store(reads())
	if _, err, over := e.Now(); over || err != nil {
		t.Fatalf("first look: over %v, err %v; want the ask pending", over, err)
	}
	if reads() == before.Load() {
		t.Fatal("the look at a pending ask read nothing")
	}
	// Answered and heard before the expectation starts: its one look then
	// is the one after the wake-up.
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
	before.Store(reads())
	e.Start()
	got := <-done
	if got.err != nil {
		t.Fatalf("outcome after the answer: %v", got.err)
	}
	if got.a.Status != askd.StatusAnswered || got.a.Answer.Answers["Ship it?"].Values[0] != "a" || got.a.SettledBy != humanCaller.Name {
		t.Fatalf("outcome after the answer: %+v", got.a)
	}
	if got.reads != 0 {
		t.Fatalf("the look after the answer read the store %d times, want 0", got.reads)
	}
}

// A service whose clock is set apart from the machine's (a test's, a day
// behind or ahead) still waits until Until on its own clock, looking at the
// ask once at the start and once when Until passes, on both faces of the
// outcome: it neither looks again at once, every time (behind), nor sleeps
// a day (ahead). Time is the subject here: Until is 50 ms away.
func TestWaitCountsOnTheServiceClock(t *testing.T) {
	for _, apart := range []time.Duration{-24 * time.Hour, 24 * time.Hour} {
		for _, face := range []string{"AwaitOutcome", "Expect"} {
			t.Run(fmt.Sprintf("%s/clock %s", face, apart), func(t *testing.T) {
				st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "askd.db"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				rc := &readCounting{Store: st}
				now := func() time.Time { return time.Now().Add(apart) }
				svc := app.New(rc, app.Config{Now: now})
				a, err := svc.Create(t.Context(), agentCaller, decision("Ship it?"), app.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
				// A minute bounds a wait that sleeps on the wrong clock.
				ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
				defer cancel()
				w := app.Wait{Ask: a.ID, Mode: app.AwaitCheck, Until: now().Add(50 * time.Millisecond)}
				before := rc.views.Load()
				var got *askd.Ask
				if face == "AwaitOutcome" {
					got, err = svc.AwaitOutcome(ctx, agentCaller, w, nil)
				} else {
					done := make(chan struct{})
					e := svc.Expect(ctx, agentCaller, w, app.Handlers{Done: func(a *askd.Ask, e error) { got, err = a, e; close(done) }})
					if _, _, over := e.Now(); over {
						t.Fatal("the first look ended the wait")
					}
					e.Start()
					select {
					case <-done:
					case <-ctx.Done():
						t.Fatal("the expectation did not end in a minute, its Until 50 ms away")
					}
				}
				if err != nil || !got.Pending() {
					t.Fatalf("wait until Until: %+v, %v; want the ask, pending", got, err)
				}
				if n := rc.views.Load() - before; n > 3 {
					t.Errorf("the wait read the store %d times in 50 ms; want 2 (its first look, and the one at Until), 3 at most", n)
				}
			})
		}
	}
}
