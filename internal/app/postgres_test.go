package app_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/postgres"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// openPostgres opens a store on url, closed when t ends.
func openPostgres(t *testing.T, url string) *postgres.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	st, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// pgReadCounting is a PostgreSQL store that counts its reads: ReadAsk, the
// one statement a wait reads its ask with, and read transactions.
type pgReadCounting struct {
	*postgres.Store
	reads atomic.Int64
}

func (r *pgReadCounting) ReadAsk(ctx context.Context, id int64) (*askd.Ask, error) {
	r.reads.Add(1)
	return r.Store.ReadAsk(ctx, id)
}

func (r *pgReadCounting) View(ctx context.Context, fn func(askd.Tx) error) error {
	r.reads.Add(1)
	return r.Store.View(ctx, fn)
}

// heardAsk returns a channel that is closed once st's watchers, those
// registered before this one, have been told of an event of ask id that
// left it as settled says (a nil Ask never is).
func heardAsk(st askd.Store, id int64, settled bool) <-chan struct{} {
	heard := make(chan struct{})
	var once atomic.Bool
	st.Watch(func(c askd.Change) {
		if c.EventID != 0 && c.AskID == id && c.Ask != nil && c.Ask.Pending() != settled && once.CompareAndSwap(false, true) {
			close(heard)
		}
	})
	return heard
}

// Split roles on PostgreSQL: an answer committed by the inbox side's
// process reaches the agent side's waiting call as the commit left it,
// carried by the notification (askd.Change.Ask), so the look after the
// wake-up reads nothing; a look that finds the ask pending reads it.
func TestSplitAnsweredWaitReadsNothing(t *testing.T) {
	url := pgtest.URL(t)
	agentStore := &pgReadCounting{Store: openPostgres(t, url)}
	agent := app.New(agentStore, app.Config{})
	inbox := app.New(openPostgres(t, url), app.Config{})

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
	before := agentStore.reads.Load()
	if _, _, done, err := w.Look(t.Context()); done || err != nil {
		t.Fatalf("first look: done %v, err %v; want the ask pending", done, err)
	}
	if agentStore.reads.Load() == before {
		t.Fatal("the look at a pending ask read nothing")
	}

	// Registered after the agent's service, this watcher is told after it:
	// once it has heard the answer, so has the waiting call.
	answered := heardAsk(agentStore, a.ID, true)
	if _, err := inbox.Answer(t.Context(), humanCaller, a.ID, &askd.Answer{Answers: map[string]askd.Choice{"Ship it?": {Values: []string{"a"}}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-answered:
	case <-time.After(10 * time.Second):
		t.Fatal("the agent side did not hear the answer in 10 s")
	}
	<-kicked
	before = agentStore.reads.Load()
	got, _, done, err := w.Look(t.Context())
	if err != nil || !done {
		t.Fatalf("look after the answer: done %v, err %v", done, err)
	}
	if got.Status != askd.StatusAnswered || got.Answer.Answers["Ship it?"].Values[0] != "a" || got.SettledBy != humanCaller.Name {
		t.Fatalf("look after the answer gave %+v", got)
	}
	if n := agentStore.reads.Load() - before; n != 0 {
		t.Fatalf("the look after the answer read the store %d times, want 0", n)
	}
}
