package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// watchWait bounds how long the suite waits for a watcher; stores that hear
// of commits asynchronously (PostgreSQL's NOTIFY) get this long.
const watchWait = 10 * time.Second

// recorder is a watcher that keeps what it hears.
type recorder struct {
	mu      sync.Mutex
	changes []askd.Change
	seen    chan struct{} // a send per change, never blocking
}

// watch registers a new recorder on s.
func watch(s askd.Store) *recorder {
	r := &recorder{seen: make(chan struct{}, 1)}
	s.Watch(func(c askd.Change) {
		if c.Reset {
			return // a store may say it lost track; the suite only counts events
		}
		r.mu.Lock()
		r.changes = append(r.changes, c)
		r.mu.Unlock()
		select {
		case r.seen <- struct{}{}:
		default:
		}
	})
	return r
}

// wait returns the changes heard once there are n of them, failing the test
// when they do not come in time.
func (r *recorder) wait(t *testing.T, n int) []askd.Change {
	t.Helper()
	deadline := time.After(watchWait)
	for {
		r.mu.Lock()
		got := slices.Clone(r.changes)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-r.seen:
		case <-deadline:
			t.Fatalf("watcher heard %d changes in %s, want %d: %+v", len(got), watchWait, n, got)
		}
	}
}

// addEvent adds an event of a with the action, and returns it.
// sameChanges reports whether got are the changes want, whose Ask is left
// out: a store may leave a change's Ask nil (read it), and when it sets it,
// it is the ask as that commit left it (its id, its status).
func sameChanges(got, want []askd.Change) bool {
	if len(got) != len(want) {
		return false
	}
	for i, g := range got {
		if g.Ask != nil && (g.Ask.ID != g.AskID || g.Ask.Status == "") {
			return false
		}
		g.Ask = nil
		if g != want[i] {
			return false
		}
	}
	return true
}

func addEvent(t *testing.T, tx askd.Tx, a *askd.Ask, action string) (*askd.Event, error) {
	t.Helper()
	e := &askd.Event{AskID: a.ID, Session: a.Session, Action: action, Actor: a.Agent, At: a.UpdatedAt, Ask: a}
	return e, tx.Events.AddEvent(t.Context(), e)
}

func testRolledBackUpdate(t *testing.T, s askd.Store) {
	ctx := t.Context()
	r := watch(s)
	boom := errors.New("boom")
	a := newAsk(askd.KindQuestion, "s1", at(0))
	err := s.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Asks.CreateAsk(ctx, a); err != nil {
			return err
		}
		if _, err := addEvent(t, tx, a, askd.ActionCreated); err != nil {
			return err
		}
		if err := tx.Tokens.CreateToken(ctx, &askd.Token{Name: "t", Role: askd.RoleAgent, Hash: hash("t"), CreatedAt: at(0)}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want fn's error", err)
	}

	view(t, s, func(tx askd.Tx) error {
		_, err := tx.Asks.Ask(ctx, a.ID)
		wantCode(t, err, askd.ENOTFOUND)
		n, err := tx.Asks.CountAsks(ctx, askd.AskFilter{})
		if err != nil {
			return err
		}
		last, err := tx.Events.LastEventID(ctx)
		if err != nil {
			return err
		}
		tokens, err := tx.Tokens.Tokens(ctx)
		if err != nil {
			return err
		}
		if n != 0 || last != 0 || len(tokens) != 0 {
			t.Errorf("after a rolled-back update: %d asks, last event %d, %d tokens; want nothing", n, last, len(tokens))
		}
		return nil
	})

	// Changes arrive in order, so once this commit's change is heard, any
	// change of the rolled-back transaction would have been heard before it.
	b := newAsk(askd.KindQuestion, "s1", at(time.Second))
	var e *askd.Event
	update(t, s, func(tx askd.Tx) error {
		if err := tx.Asks.CreateAsk(ctx, b); err != nil {
			return err
		}
		var err error
		e, err = addEvent(t, tx, b, askd.ActionCreated)
		return err
	})
	got := r.wait(t, 1)
	if want := []askd.Change{{EventID: e.ID, AskID: b.ID}}; !sameChanges(got, want) {
		t.Errorf("watcher heard %+v, want only the committed %+v", got, want)
	}
}

func testPanicInUpdate(t *testing.T, s askd.Store) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a panic in fn did not reach Update's caller")
			}
		}()
		s.Update(ctx, func(tx askd.Tx) error {
			if err := tx.Asks.CreateAsk(ctx, newAsk(askd.KindQuestion, "s1", at(0))); err != nil {
				return err
			}
			panic("fn panics")
		})
	}()

	// The write transaction must be over: the next one runs, and sees nothing
	// of the first.
	err := s.Update(ctx, func(tx askd.Tx) error {
		n, err := tx.Asks.CountAsks(ctx, askd.AskFilter{})
		if err != nil {
			return err
		}
		if n != 0 {
			t.Errorf("after a panic in Update: %d asks, want 0", n)
		}
		return tx.Asks.CreateAsk(ctx, newAsk(askd.KindQuestion, "s1", at(time.Second)))
	})
	if err != nil {
		t.Fatalf("Update after a panic: %v", err)
	}
}

func testWatchAfterCommit(t *testing.T, s askd.Store) {
	ctx := t.Context()
	first := watch(s)
	second := watch(s)
	// visible records, for each change, whether a reader could already see
	// the event: watchers run after the commit, not before. (No t.Errorf in
	// the watcher: it may run on a store's own goroutine.)
	var (
		mu      sync.Mutex
		visible []bool
		viewErr error
	)
	s.Watch(func(c askd.Change) {
		if c.Reset {
			return
		}
		err := s.View(ctx, func(tx askd.Tx) error {
			last, err := tx.Events.LastEventID(ctx)
			mu.Lock()
			visible = append(visible, err == nil && last >= c.EventID)
			mu.Unlock()
			return err
		})
		if err != nil {
			mu.Lock()
			viewErr = errors.Join(viewErr, err)
			mu.Unlock()
		}
	})

	a := newAsk(askd.KindDecision, "s1", at(0))
	b := newAsk(askd.KindQuestion, "s2", at(time.Second))
	// Event ids are read once the update is over: a store may send an
	// event's insert with the commit (askd.EventTx.AddEvent).
	var added []*askd.Event
	update(t, s, func(tx askd.Tx) error {
		for _, step := range []struct {
			ask    *askd.Ask
			action string
		}{{a, askd.ActionCreated}, {b, askd.ActionCreated}, {a, askd.ActionReplaced}} {
			if step.ask.ID == 0 {
				if err := tx.Asks.CreateAsk(ctx, step.ask); err != nil {
					return err
				}
			}
			e, err := addEvent(t, tx, step.ask, step.action)
			if err != nil {
				return err
			}
			added = append(added, e)
		}
		return nil
	})
	var want []askd.Change
	for _, e := range added {
		want = append(want, askd.Change{EventID: e.ID, AskID: e.AskID})
	}
	for name, r := range map[string]*recorder{"first": first, "second": second} {
		if got := r.wait(t, len(want)); !sameChanges(got, want) {
			t.Errorf("%s watcher heard %+v, want %+v", name, got, want)
		}
	}

	// A commit without events says nothing; the next one with an event says
	// exactly that event.
	update(t, s, func(tx askd.Tx) error {
		return tx.Asks.CreateAsk(ctx, newAsk(askd.KindQuestion, "s3", at(2*time.Second)))
	})
	var snoozed *askd.Event
	update(t, s, func(tx askd.Tx) error {
		e, err := addEvent(t, tx, b, askd.ActionSnoozed)
		snoozed = e
		return err
	})
	want = append(want, askd.Change{EventID: snoozed.ID, AskID: b.ID})
	if got := first.wait(t, len(want)); !sameChanges(got, want) {
		t.Errorf("watcher heard %+v, want %+v", got, want)
	}

	// The reading watcher may still be on the last change.
	for deadline := time.Now().Add(watchWait); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(visible)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if viewErr != nil {
		t.Errorf("View in a watcher: %v", viewErr)
	}
	if len(visible) < len(want) {
		t.Errorf("the watcher that reads ran %d times, want %d", len(visible), len(want))
	}
	for i, v := range visible {
		if !v {
			t.Errorf("change %d: the watcher ran before its event was visible to readers", i)
		}
	}
}

func testViewSeesOnlyCommitted(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a := newAsk(askd.KindQuestion, "s1", at(0))
	update(t, s, func(tx askd.Tx) error {
		if err := tx.Asks.CreateAsk(ctx, a); err != nil {
			return err
		}
		if _, err := addEvent(t, tx, a, askd.ActionCreated); err != nil {
			return err
		}
		// A reader running now must see none of this transaction.
		return s.View(ctx, func(v askd.Tx) error {
			_, err := v.Asks.Ask(ctx, a.ID)
			wantCode(t, err, askd.ENOTFOUND)
			n, err := v.Asks.CountAsks(ctx, askd.AskFilter{})
			if err != nil {
				return err
			}
			last, err := v.Events.LastEventID(ctx)
			if err != nil {
				return err
			}
			if n != 0 || last != 0 {
				t.Errorf("a reader saw uncommitted data: %d asks, last event %d", n, last)
			}
			return nil
		})
	})
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Asks.Ask(ctx, a.ID)
		if err != nil {
			return err
		}
		checkAsk(t, "after commit", got, a)
		return nil
	})
}

func testViewRefusesWrites(t *testing.T, s askd.Store) {
	ctx := t.Context()
	writes := []struct {
		name string
		do   func(tx askd.Tx) error
	}{
		{"CreateAsk", func(tx askd.Tx) error { return tx.Asks.CreateAsk(ctx, newAsk(askd.KindQuestion, "s1", at(0))) }},
		{"CreateToken", func(tx askd.Tx) error {
			return tx.Tokens.CreateToken(ctx, &askd.Token{Name: "t", Role: askd.RoleHuman, Hash: hash("t"), CreatedAt: at(0)})
		}},
		{"CreateRule", func(tx askd.Tx) error {
			return tx.Rules.CreateRule(ctx, newRule("agent-1", "s1", askd.MatchTool, time.Hour))
		}},
		{"UpdateRule", func(tx askd.Tx) error {
			r := newRule("agent-1", "s1", askd.MatchTool, time.Hour)
			r.ID = 1
			return tx.Rules.UpdateRule(ctx, r)
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			if err := s.View(ctx, w.do); err == nil {
				t.Errorf("%s in View succeeded, want an error", w.name)
			}
		})
	}
	view(t, s, func(tx askd.Tx) error {
		n, err := tx.Asks.CountAsks(ctx, askd.AskFilter{})
		if err != nil {
			return err
		}
		tokens, err := tx.Tokens.Tokens(ctx)
		if err != nil {
			return err
		}
		if n != 0 || len(tokens) != 0 {
			t.Errorf("after writes in View: %d asks, %d tokens; want none", n, len(tokens))
		}
		return nil
	})
}

func testConcurrentUpdates(t *testing.T, s askd.Store) {
	const writers, perWriter, readers = 8, 50, 2
	sessions := []string{"s0", "s1"}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	var (
		wg      sync.WaitGroup
		readWG  sync.WaitGroup
		errs    = make(chan error, writers+readers)
		stop    = make(chan struct{})
		perSess = writers / len(sessions) * perWriter
	)
	for r := range readers {
		readWG.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := s.View(ctx, func(tx askd.Tx) error {
					if _, err := tx.Asks.FindAsks(ctx, askd.AskFilter{Status: askd.StatusPending, Limit: 20}); err != nil {
						return err
					}
					_, err := tx.Sessions.Sessions(ctx, askd.SessionQuery{})
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("reader %d: %w", r, err)
					return
				}
			}
		})
	}
	for w := range writers {
		wg.Go(func() {
			session := sessions[w%len(sessions)]
			for i := range perWriter {
				// Read, then write what depends on the read: each new ask's
				// revision is one more than the session's pending count.
				err := s.Update(ctx, func(tx askd.Tx) error {
					if err := tx.Sessions.LockSession(ctx, "agent-1", session); err != nil {
						return err
					}
					n, err := tx.Asks.CountAsks(ctx, askd.AskFilter{Session: session, Status: askd.StatusPending})
					if err != nil {
						return err
					}
					a := newAsk(askd.KindQuestion, session, at(time.Duration(w*perWriter+i)*time.Millisecond))
					a.Revision = n + 1
					if err := tx.Asks.CreateAsk(ctx, a); err != nil {
						return err
					}
					_, err = addEvent(t, tx, a, askd.ActionCreated)
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("writer %d, transaction %d: %w", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	readWG.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	view(t, s, func(tx askd.Tx) error {
		for _, session := range sessions {
			asks, err := tx.Asks.FindAsks(ctx, askd.AskFilter{Session: session})
			if err != nil {
				return err
			}
			revisions := make([]int, len(asks))
			for i, a := range asks {
				revisions[i] = a.Revision
			}
			slices.Sort(revisions)
			for i, r := range revisions {
				if r != i+1 {
					t.Errorf("session %s: revisions %v, want 1 to %d once each: transactions overlapped", session, revisions, perSess)
					break
				}
			}
			if len(asks) != perSess {
				t.Errorf("session %s: %d asks, want %d", session, len(asks), perSess)
			}
		}
		events, err := tx.Events.EventsAfter(ctx, 0, 0)
		if err != nil {
			return err
		}
		if len(events) != writers*perWriter {
			t.Errorf("%d events, want %d", len(events), writers*perWriter)
		}
		return nil
	})
}

// Updates running at once, some of which fail after writing (by returning an
// error, by a statement the database refuses, by panicking), keep exactly the
// writes of those that succeed. A store that runs concurrent updates in one
// shared transaction (group commit) must undo only the failing ones.
func testConcurrentUpdatesSomeFail(t *testing.T, s askd.Store) {
	const n = 48
	ctx := t.Context()
	errBoom := errors.New("boom")
	start := make(chan struct{})
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					results[i] = fmt.Errorf("panic: %v", v)
				}
			}()
			<-start
			results[i] = s.Update(ctx, func(tx askd.Tx) error {
				a := newAsk(askd.KindQuestion, fmt.Sprintf("u%02d", i), at(time.Duration(i)*time.Second))
				if err := tx.Asks.CreateAsk(ctx, a); err != nil {
					return err
				}
				switch i % 4 {
				case 1:
					return errBoom
				case 2: // refused by the database: an event of an ask that does not exist
					return tx.Events.AddEvent(ctx, &askd.Event{AskID: a.ID + 1_000_000, Session: a.Session, Action: askd.ActionCreated, At: a.CreatedAt, Ask: a})
				case 3:
					panic("boom")
				}
				return tx.Events.AddEvent(ctx, &askd.Event{AskID: a.ID, Session: a.Session, Action: askd.ActionCreated, At: a.CreatedAt, Ask: a})
			})
		})
	}
	close(start)
	wg.Wait()
	for i, err := range results {
		want := map[int]string{0: "", 1: "boom", 2: "not found", 3: "panic: boom"}[i%4]
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("update %d: %v, want %q", i, err, want)
		}
	}
	var asks []*askd.Ask
	var events []*askd.Event
	err := s.View(ctx, func(tx askd.Tx) (err error) {
		if asks, err = tx.Asks.FindAsks(ctx, askd.AskFilter{}); err != nil {
			return err
		}
		events, err = tx.Events.EventsAfter(ctx, 0, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, a := range asks {
		kept = append(kept, a.Session)
	}
	sort.Strings(kept)
	var want []string
	for i := 0; i < n; i += 4 {
		want = append(want, fmt.Sprintf("u%02d", i))
	}
	if !slices.Equal(kept, want) {
		t.Errorf("asks kept %v, want %v", kept, want)
	}
	if len(events) != len(want) {
		t.Errorf("%d events kept, want %d", len(events), len(want))
	}
}
