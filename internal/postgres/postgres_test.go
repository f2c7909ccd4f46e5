package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/postgres"
	"github.com/askd-dev/askd/internal/storetest"
	"github.com/askd-dev/askd/internal/testserver"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// open opens a store on url, closed when t ends.
func open(t *testing.T, url string) *postgres.Store {
	t.Helper()
	return testserver.OpenPostgres(t, url)
}

func TestStore(t *testing.T) {
	urls := map[askd.Store]string{} // each store's database, for reopen
	storetest.Run(t, func(t *testing.T) askd.Store {
		url := pgtest.URL(t)
		s := open(t, url)
		urls[s] = url
		return s
	}, func(t *testing.T, s askd.Store) askd.Store {
		return open(t, urls[s]) // as another process would: a pool and a listener of its own
	})
}

// changes is a watcher that passes on what it hears.
func changes(s askd.Store) <-chan askd.Change {
	ch := make(chan askd.Change, 1000)
	s.Watch(func(c askd.Change) { ch <- c })
	return ch
}

// next returns the next change on ch that is not a bare question_answered
// one, failing the test after 10 s.
func next(t *testing.T, ch <-chan askd.Change) askd.Change {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case c := <-ch:
			if !c.Reset && c.EventID == 0 {
				continue
			}
			return c
		case <-timeout:
			t.Fatal("no change heard in 10 s")
			return askd.Change{}
		}
	}
}

// isEvent reports whether c announces event e of ask a, with the ask as the
// event left it (every snapshot of these tests fits in a notification).
func isEvent(c askd.Change, e *askd.Event, a *askd.Ask) bool {
	return c.EventID == e.ID && c.AskID == a.ID && !c.Reset &&
		c.Ask != nil && c.Ask.ID == a.ID && c.Ask.Status == a.Status
}

func newAsk(session string) *askd.Ask {
	now := time.Now()
	return &askd.Ask{
		Kind: askd.KindDecision, Session: session, Agent: "agent-1", Status: askd.StatusPending, Revision: 1,
		Title: "Proceed?", CreatedAt: now, UpdatedAt: now,
	}
}

// addAsk stores a new ask and its created event, and returns both.
func addAsk(s askd.Store, session string) (*askd.Ask, *askd.Event, error) {
	a := newAsk(session)
	e := &askd.Event{Session: session, Action: askd.ActionCreated, Actor: "agent-1", At: a.CreatedAt}
	err := s.Update(context.Background(), func(tx askd.Tx) error {
		if err := tx.Asks.CreateAsk(context.Background(), a); err != nil {
			return err
		}
		e.AskID = a.ID
		return tx.Events.AddEvent(context.Background(), e)
	})
	return a, e, err
}

// createWithEvent is addAsk, failing the test on error.
func createWithEvent(t *testing.T, s askd.Store, session string) (*askd.Ask, *askd.Event) {
	t.Helper()
	a, e, err := addAsk(s, session)
	if err != nil {
		t.Fatalf("create ask: %v", err)
	}
	return a, e
}

// update applies change to ask id in a write transaction.
func update(t *testing.T, s askd.Store, id int64, change func(a *askd.Ask)) {
	t.Helper()
	ctx := context.Background()
	err := s.Update(ctx, func(tx askd.Tx) error {
		a, err := tx.Asks.Ask(ctx, id)
		if err != nil {
			return err
		}
		change(a)
		return tx.Asks.UpdateAsk(ctx, a)
	})
	if err != nil {
		t.Fatalf("update ask %d: %v", id, err)
	}
}

// The asks_settled trigger notifies question_answered with the ask's id when
// its status becomes answered or cancelled, and for no other update.
func TestNotifySettled(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s := open(t, url)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LISTEN question_answered"); err != nil {
		t.Fatal(err)
	}
	// Notifications arrive in commit order: after a marker sent once an
	// update has committed, anything that update sent would have come first.
	nextPayload := func() string {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		n, err := conn.WaitForNotification(wctx)
		if err != nil {
			t.Fatalf("wait for notification: %v", err)
		}
		return n.Payload
	}
	marker := func(m string) {
		t.Helper()
		if _, err := conn.Exec(ctx, "SELECT pg_notify('question_answered', $1)", m); err != nil {
			t.Fatal(err)
		}
	}

	a, _ := createWithEvent(t, s, "s1")
	b, _ := createWithEvent(t, s, "s1")
	tests := []struct {
		name   string
		id     int64
		change func(a *askd.Ask)
		notify bool
	}{
		{"snoozed", a.ID, func(a *askd.Ask) { u := time.Now().Add(time.Hour); a.SnoozedUntil = &u }, false},
		{"replaced", a.ID, func(a *askd.Ask) { a.Revision++; a.Title = "Newer" }, false},
		{"answered", a.ID, func(a *askd.Ask) {
			a.Settle(askd.StatusAnswered, "", &askd.Answer{Answer: "yes"}, "reviewer", time.Now())
		}, true},
		{"told after the answer", a.ID, func(a *askd.Ask) { u := time.Now(); a.ToldAt = &u }, false},
		{"cancelled", b.ID, func(a *askd.Ask) {
			a.Settle(askd.StatusCancelled, askd.ReasonDismissed, nil, "reviewer", time.Now())
		}, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			update(t, s, tt.id, tt.change)
			m := fmt.Sprintf("marker-%d", i)
			marker(m)
			got := nextPayload()
			if tt.notify {
				if want := fmt.Sprint(tt.id); got != want {
					t.Fatalf("first notification %q, want %q", got, want)
				}
				got = nextPayload()
			}
			if got != m {
				t.Fatalf("notification %q, want only the marker %q", got, m)
			}
		})
	}
}

// A watcher on one Store hears the events another Store (another process)
// commits, with their asks, and asks settled there, in order.
func TestWatchAcrossStores(t *testing.T) {
	url := pgtest.URL(t)
	writer, reader := open(t, url), open(t, url)
	heard := changes(reader)

	a, e := createWithEvent(t, writer, "s1")
	if c := next(t, heard); !isEvent(c, e, a) {
		t.Fatalf("heard %+v, want event %d of ask %d", c, e.ID, a.ID)
	}

	update(t, writer, a.ID, func(a *askd.Ask) {
		a.Settle(askd.StatusAnswered, "", &askd.Answer{Answer: "yes"}, "reviewer", time.Now())
	})
	select {
	case c := <-heard:
		if c != (askd.Change{AskID: a.ID}) {
			t.Fatalf("heard %+v, want the settled ask %d", c, a.ID)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("settling was not heard")
	}

	// Latency from before Update to the other store's watcher.
	const n = 200
	lat := make([]time.Duration, n)
	for i := range lat {
		start := time.Now()
		createWithEvent(t, writer, "s2")
		next(t, heard)
		lat[i] = time.Since(start)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("create ask + event, committed in one store, heard by another: p50 %v, p90 %v, p99 %v, max %v",
		lat[n/2], lat[n*9/10], lat[n*99/100], lat[n-1])
}

// When the listener's connection is cut, the store reconnects, tells its
// watchers to re-read (Reset), and hears later events again.
func TestListenerReconnects(t *testing.T) {
	url := pgtest.URL(t)
	s := open(t, url)
	heard := changes(s)
	pid := s.ListenerPID()
	if pid == 0 || !s.Listening() {
		t.Fatalf("after Open: listener pid %d, listening %v", pid, s.Listening())
	}

	start := time.Now()
	pgtest.Shared(t).Terminate(t, pid)
	if c := next(t, heard); !c.Reset {
		t.Fatalf("heard %+v, want a reset", c)
	}
	t.Logf("reset %v after the backend was terminated", time.Since(start))
	if got := s.ListenerPID(); got == 0 || got == pid || !s.Listening() {
		t.Errorf("after reconnecting: listener pid %d (was %d), listening %v", got, pid, s.Listening())
	}

	a, e := createWithEvent(t, s, "s1")
	if c := next(t, heard); !isEvent(c, e, a) {
		t.Fatalf("heard %+v, want event %d of ask %d", c, e.ID, a.ID)
	}
}

// A server restart: while it is down the store reports EUNAVAILABLE and not
// ready; once it is back the store works again without being reopened, and
// the listener has reconnected and reset its watchers.
func TestServerRestart(t *testing.T) {
	srv := pgtest.New(t)
	s := open(t, srv.NewDatabase(t))
	heard := changes(s)
	createWithEvent(t, s, "s1")
	next(t, heard)

	srv.Stop(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// A statement, since an update that makes none sends nothing.
	err := s.Update(ctx, func(tx askd.Tx) error { _, err := tx.Events.LastEventID(ctx); return err })
	if code := askd.ErrorCode(err); code != askd.EUNAVAILABLE {
		t.Errorf("Update with the server down: %v (code %q), want %s", err, code, askd.EUNAVAILABLE)
	}
	if code := askd.ErrorCode(s.Ready(ctx)); code != askd.EUNAVAILABLE {
		t.Errorf("Ready with the server down: code %q, want %s", code, askd.EUNAVAILABLE)
	}

	srv.Start(t)
	start := time.Now()
	if c := next(t, heard); !c.Reset {
		t.Fatalf("heard %+v, want a reset", c)
	}
	t.Logf("reset %v after the server was back", time.Since(start))
	if err := s.Ready(context.Background()); err != nil {
		t.Errorf("Ready after the restart: %v", err)
	}
	a, e := createWithEvent(t, s, "s1")
	if c := next(t, heard); !isEvent(c, e, a) {
		t.Fatalf("heard %+v, want event %d of ask %d", c, e.ID, a.ID)
	}
}

// Processes starting at once on a new database migrate it once, without error.
func TestConcurrentMigrations(t *testing.T) {
	url := pgtest.URL(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			s, err := postgres.Open(context.Background(), url)
			if err == nil {
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Open: %v", err)
		}
	}
	applied, err := postgres.Migrate(context.Background(), url)
	if err != nil || len(applied) != 0 {
		t.Errorf("Migrate after Open = %v, %v; want nothing to apply", applied, err)
	}
}

// Migrate on a new database applies every migration once.
func TestMigrate(t *testing.T) {
	url := pgtest.URL(t)
	applied, err := postgres.Migrate(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) == 0 || applied[0] != "001_asks_events_tokens" {
		t.Errorf("Migrate applied %v, want 001_asks_events_tokens first", applied)
	}
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), "INSERT INTO schema_migrations (version) VALUES ('999_from_the_future')"); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Migrate(context.Background(), url); err == nil {
		t.Error("Migrate on a database with an unknown migration succeeded")
	}
}

// Two people answering one ask at once: the second transaction waits for
// the first and sees its answer, as the app's read-then-write expects.
func TestConcurrentAnswersOneWins(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.URL(t))
	for round := range 20 {
		a, _ := createWithEvent(t, s, "s1")
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			winners []string
		)
		for _, who := range []string{"ann", "bob", "cy"} {
			wg.Go(func() {
				err := s.Update(ctx, func(tx askd.Tx) error {
					got, err := tx.Asks.Ask(ctx, a.ID)
					if err != nil {
						return err
					}
					if !got.Pending() {
						return askd.Errorf(askd.ECONFLICT, "answered by %s", got.SettledBy)
					}
					got.Settle(askd.StatusAnswered, "", &askd.Answer{Answer: who}, who, time.Now())
					if err := tx.Asks.UpdateAsk(ctx, got); err != nil {
						return err
					}
					return tx.Events.AddEvent(ctx, &askd.Event{AskID: a.ID, Session: "s1", Action: askd.ActionAnswered, Actor: who, At: time.Now()})
				})
				switch askd.ErrorCode(err) {
				case "":
					mu.Lock()
					winners = append(winners, who)
					mu.Unlock()
				case askd.ECONFLICT:
				default:
					t.Errorf("answer by %s: %v", who, err)
				}
			})
		}
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("round %d: %v all answered, want one winner", round, winners)
		}
	}
}

// Event ids become visible in order: a reader following EventsAfter(after its
// last id) while writers commit concurrently never skips one.
func TestEventIDsInCommitOrder(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgtest.URL(t))
	const writers, perWriter = 6, 40
	stop := make(chan struct{})
	var seen []int64
	readerDone := make(chan error, 1)
	go func() {
		var last int64
		for {
			// Done once a read that began after the last commit finds nothing.
			stopped := false
			select {
			case <-stop:
				stopped = true
			default:
			}
			var evs []*askd.Event
			err := s.View(ctx, func(tx askd.Tx) (err error) {
				evs, err = tx.Events.EventsAfter(ctx, last, 0)
				return err
			})
			if err != nil {
				readerDone <- err
				return
			}
			for _, e := range evs {
				seen = append(seen, e.ID)
				last = e.ID
			}
			if stopped && len(evs) == 0 {
				readerDone <- nil
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for range perWriter {
				if _, _, err := addAsk(s, fmt.Sprintf("s%d", w)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-readerDone; err != nil {
		t.Fatal(err)
	}
	var all []*askd.Event
	err := s.View(ctx, func(tx askd.Tx) (err error) {
		all, err = tx.Events.EventsAfter(ctx, 0, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(all) || len(all) != writers*perWriter || !slices.IsSorted(seen) {
		t.Errorf("the reader saw %d events, of %d stored (%d written): it skipped some", len(seen), len(all), writers*perWriter)
	}
}

// PostgreSQL text cannot hold U+0000: storing it is refused as bad input, not
// as an internal error.
func TestNULInText(t *testing.T) {
	s := open(t, pgtest.URL(t))
	a := newAsk("s1")
	a.Title = "before\x00after"
	err := s.Update(context.Background(), func(tx askd.Tx) error { return tx.Asks.CreateAsk(context.Background(), a) })
	if code := askd.ErrorCode(err); code != askd.EINVALID {
		t.Errorf("CreateAsk with a NUL: %v (code %q), want %s", err, code, askd.EINVALID)
	}
}

// Errors keep the driver's error in their chain.
func TestNotFoundIsENOTFOUND(t *testing.T) {
	s := open(t, pgtest.URL(t))
	err := s.View(context.Background(), func(tx askd.Tx) error {
		_, err := tx.Asks.Ask(context.Background(), 42)
		return err
	})
	var e *askd.Error
	if !errors.As(err, &e) || e.Code != askd.ENOTFOUND || e.Message != "ask 42 not found" {
		t.Errorf("Ask(42) = %v, want ENOTFOUND \"ask 42 not found\"", err)
	}
}

// BenchmarkCreateAnswer runs create + answer cycles, as the app does them,
// from 8 goroutines per CPU in sessions of their own.
func BenchmarkCreateAnswer(b *testing.B) {
	ctx := context.Background()
	s, err := postgres.Open(ctx, pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var n atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		session := fmt.Sprintf("s%d", n.Add(1))
		for pb.Next() {
			a := newAsk(session)
			err := s.Update(ctx, func(tx askd.Tx) error {
				if err := tx.Sessions.LockSession(ctx, "agent-1", session); err != nil {
					return err
				}
				if _, err := tx.Asks.FindAsks(ctx, askd.AskFilter{Session: session, Status: askd.StatusPending}); err != nil {
					return err
				}
				if err := tx.Asks.CreateAsk(ctx, a); err != nil {
					return err
				}
				return tx.Events.AddEvent(ctx, &askd.Event{AskID: a.ID, Session: session, Action: askd.ActionCreated, At: a.CreatedAt, Ask: a})
			})
			if err == nil {
				err = s.Update(ctx, func(tx askd.Tx) error {
					got, err := tx.Asks.Ask(ctx, a.ID)
					if err != nil {
						return err
					}
					got.Settle(askd.StatusAnswered, "", &askd.Answer{Answer: "yes"}, "reviewer", time.Now())
					if err := tx.Asks.UpdateAsk(ctx, got); err != nil {
						return err
					}
					return tx.Events.AddEvent(ctx, &askd.Event{AskID: a.ID, Session: session, Action: askd.ActionAnswered, At: time.Now(), Ask: got})
				})
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

// BenchmarkViewOneRead is a View that reads one ask, one after the other,
// as the inbox and the CLI read.
func BenchmarkViewOneRead(b *testing.B) {
	ctx := context.Background()
	s, err := postgres.Open(ctx, pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	a := newAsk("s1")
	if err := s.Update(ctx, func(tx askd.Tx) error { return tx.Asks.CreateAsk(ctx, a) }); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		err := s.View(ctx, func(tx askd.Tx) error {
			_, err := tx.Asks.Ask(ctx, a.ID)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}
