package app_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/postgres"
	"github.com/askd-dev/askd/internal/testserver"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

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
	agentStore := &pgReadCounting{Store: testserver.OpenPostgres(t, url)}
	agent := app.New(agentStore, app.Config{})
	inbox := app.New(testserver.OpenPostgres(t, url), app.Config{})
	// Registered after the agent's service, this watcher is told after it:
	// once it has heard the answer, so has the waiting call.
	heard := func(id int64) <-chan struct{} { return heardAsk(agentStore, id, true) }
	answeredWaitReadsNothing(t, agent, inbox, agentStore.reads.Load, heard)
}

// runService is a service on st with its background work running, both
// stopped when t ends.
func runService(t *testing.T, st askd.Store) *app.Service {
	t.Helper()
	svc := app.New(st, app.Config{MaxPending: 1000})
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { svc.Run(ctx); close(ran) }()
	t.Cleanup(func() { svc.Close(); cancel(); <-ran })
	return svc
}

// TestNoAnswerLostWhenAnswerRacesWaiter across processes: the inbox side
// answers each ask at the moment the agent side starts waiting on it, and
// every wait returns the answer, whether it read the ask or took it from the
// notification.
func TestNoAnswerLostAcrossProcesses(t *testing.T) {
	url := pgtest.URL(t)
	agent := runService(t, testserver.OpenPostgres(t, url))
	inbox := runService(t, testserver.OpenPostgres(t, url))
	ctx := t.Context()
	n := 300
	if testing.Short() {
		n = 50
	}
	if v, err := strconv.Atoi(os.Getenv("ASKD_RACE_N")); err == nil && v > 0 {
		n = v
	}
	lost := 0
	for i := range n {
		q := fmt.Sprintf("race %d?", i)
		a, err := agent.Create(ctx, agentCaller, decision(q), app.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var got *askd.Ask
		var werr error
		wg.Go(func() { got, werr = waitFor(ctx, agent, agentCaller, a.ID, time.Now().Add(30*time.Second)) })
		wg.Go(func() {
			if _, err := inbox.Answer(ctx, humanCaller, a.ID, answerA(q)); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		if werr != nil || got.Status != askd.StatusAnswered || got.Answer.Answers[q].Values[0] != "a" {
			lost++
		}
	}
	if lost != 0 {
		t.Fatalf("%d of %d answers lost", lost, n)
	}
}
