package storetest

import (
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// Channels and the outbox (SPEC §5).

func testChannels(t *testing.T, s askd.Store) {
	ctx := t.Context()
	err := s.View(ctx, func(tx askd.Tx) error {
		_, err := tx.Channels.Channel(ctx, "agent-1", "s1")
		return err
	})
	wantCode(t, err, askd.ENOTFOUND)

	hook := &askd.Channel{Type: askd.ChannelHook}
	web := &askd.Channel{Type: askd.ChannelWebhook, URL: "https://example.test/tell?x=1", Secret: "s3cret"}
	cmd := &askd.Channel{Type: askd.ChannelCommand, Argv: []string{"tmux", "send-keys", "-t", "{session}", "{prompt}", "Enter"}}
	for _, want := range []*askd.Channel{hook, web, cmd} {
		update(t, s, func(tx askd.Tx) error { return tx.Channels.SetChannel(ctx, "agent-1", "s1", want) })
		view(t, s, func(tx askd.Tx) error {
			got, err := tx.Channels.Channel(ctx, "agent-1", "s1")
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("channel = %+v, want %+v", got, want)
			}
			return nil
		})
	}
	view(t, s, func(tx askd.Tx) error {
		if _, err := tx.Channels.Channel(ctx, "agent-1", "s2"); askd.ErrorCode(err) != askd.ENOTFOUND {
			t.Errorf("another session's channel: %v, want ENOTFOUND", err)
		}
		// The same name under another token is another session (SPEC §1).
		if _, err := tx.Channels.Channel(ctx, "agent-2", "s1"); askd.ErrorCode(err) != askd.ENOTFOUND {
			t.Errorf("another token's session s1: %v, want ENOTFOUND", err)
		}
		return nil
	})
	update(t, s, func(tx askd.Tx) error { return tx.Channels.SetChannel(ctx, "agent-2", "s1", hook) })
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Channels.Channel(ctx, "agent-1", "s1")
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, cmd) {
			t.Errorf("agent-1's s1 after agent-2 set its own s1 = %+v, want %+v", got, cmd)
		}
		return nil
	})
}

// testSessionState: SessionState reads a session's pending asks (as
// FindAsks), its token's pending asks across sessions, and whether it is
// recorded, in Update (after the transaction's own writes) and in View.
func testSessionState(t *testing.T, s askd.Store) {
	ctx := t.Context()
	p1, p2 := newAsk(askd.KindQuestion, "s1", at(0)), newAsk(askd.KindReady, "s1", at(time.Second))
	other := newAsk(askd.KindQuestion, "s2", at(0))
	theirs := byAgent(newAsk(askd.KindQuestion, "s1", at(0)), "agent-2") // another token's session of the name
	create(t, s, p1, p2, other, theirs, settled(newAsk(askd.KindQuestion, "s1", at(0)), "", at(time.Minute)))
	update(t, s, func(tx askd.Tx) error {
		_, err := tx.Sessions.AddSession(ctx, "agent-1", "s1", at(0))
		return err
	})
	check := func(tx askd.Tx, agent, session string, want askd.SessionState) {
		t.Helper()
		st, err := tx.Sessions.SessionState(ctx, agent, session)
		if err != nil {
			t.Fatalf("SessionState(%s, %s): %v", agent, session, err)
		}
		if !slices.Equal(ids(st.Pending), ids(want.Pending)) || st.TokenPending != want.TokenPending || st.Recorded != want.Recorded {
			t.Errorf("SessionState(%s, %s) = pending %v, token %d, recorded %v; want %v, %d, %v",
				agent, session, ids(st.Pending), st.TokenPending, st.Recorded, ids(want.Pending), want.TokenPending, want.Recorded)
		}
	}
	view(t, s, func(tx askd.Tx) error {
		check(tx, "agent-1", "s1", askd.SessionState{Pending: []*askd.Ask{p2, p1}, TokenPending: 3, Recorded: true})
		check(tx, "agent-1", "s2", askd.SessionState{Pending: []*askd.Ask{other}, TokenPending: 3})
		check(tx, "agent-2", "s1", askd.SessionState{Pending: []*askd.Ask{theirs}, TokenPending: 1})
		check(tx, "agent-3", "s1", askd.SessionState{})
		return nil
	})
	update(t, s, func(tx askd.Tx) error {
		p1.Settle(askd.StatusCancelled, askd.ReasonWithdrawn, nil, "agent-1", at(time.Minute))
		if err := tx.Asks.UpdateAsk(ctx, p1); err != nil {
			return err
		}
		if _, err := tx.Sessions.AddSession(ctx, "agent-1", "s2", at(time.Minute)); err != nil {
			return err
		}
		check(tx, "agent-1", "s1", askd.SessionState{Pending: []*askd.Ask{p2}, TokenPending: 2, Recorded: true})
		check(tx, "agent-1", "s2", askd.SessionState{Pending: []*askd.Ask{other}, TokenPending: 2, Recorded: true})
		return nil
	})
}

// testSessionsRecorded: AddSession records a session once, a session with a
// channel is recorded, and CountSessions counts one agent's since a time.
func testSessionsRecorded(t *testing.T, s askd.Store) {
	ctx := t.Context()
	add := func(agent, session string, when time.Time, wantNew bool) {
		t.Helper()
		update(t, s, func(tx askd.Tx) error {
			added, err := tx.Sessions.AddSession(ctx, agent, session, when)
			if err == nil && added != wantNew {
				t.Errorf("AddSession(%s, %s) = %v, want %v", agent, session, added, wantNew)
			}
			return err
		})
	}
	add("agent-1", "s1", at(0), true)
	add("agent-1", "s1", at(time.Hour), false) // recorded already: its time stays
	add("agent-1", "s2", at(time.Minute), true)
	add("agent-2", "s1", at(2*time.Minute), true)
	// A session whose channel was set keeps it when recorded again.
	ch := &askd.Channel{Type: askd.ChannelWebhook, URL: "https://example.test/x", Secret: "k"}
	update(t, s, func(tx askd.Tx) error { return tx.Channels.SetChannel(ctx, "agent-1", "s2", ch) })
	add("agent-1", "s2", at(3*time.Minute), false)
	// A rolled-back transaction records nothing.
	err := s.Update(ctx, func(tx askd.Tx) error {
		if _, err := tx.Sessions.AddSession(ctx, "agent-1", "s3", at(time.Minute)); err != nil {
			return err
		}
		return askd.Errorf(askd.ELIMIT, "refused")
	})
	wantCode(t, err, askd.ELIMIT)
	view(t, s, func(tx askd.Tx) error {
		for _, c := range []struct {
			agent string
			since time.Time
			want  int
		}{
			{"agent-1", at(0), 2},
			{"agent-1", at(time.Second), 1},
			{"agent-1", at(2 * time.Minute), 0},
			{"agent-2", at(0), 1},
			{"agent-3", at(0), 0},
		} {
			n, err := tx.Sessions.CountSessions(ctx, c.agent, c.since)
			if err != nil {
				return err
			}
			if n != c.want {
				t.Errorf("CountSessions(%s, since %v) = %d, want %d", c.agent, c.since, n, c.want)
			}
		}
		got, err := tx.Channels.Channel(ctx, "agent-1", "s2")
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(got, ch) {
			t.Errorf("channel after AddSession = %+v, want %+v", got, ch)
		}
		if _, err := tx.Channels.Channel(ctx, "agent-1", "s1"); askd.ErrorCode(err) != askd.ENOTFOUND {
			t.Errorf("channel of a session recorded without one: %v, want ENOTFOUND", err)
		}
		return nil
	})
}

// newDelivery returns a pending tell delivery of a, due at next (nil: a hook
// channel's, which no worker claims).
func newDelivery(a *askd.Ask, key string, next *time.Time) *askd.Delivery {
	ch := askd.Channel{Type: askd.ChannelHook}
	if next != nil {
		ch = askd.Channel{Type: askd.ChannelWebhook, URL: "http://127.0.0.1:9/tell", Secret: "k"}
	}
	return &askd.Delivery{
		Kind: askd.DeliveryTell, Key: key, AskID: a.ID, Session: a.Session, Channel: ch,
		Status: askd.DeliveryPending, NextAt: next, CreatedAt: at(0), UpdatedAt: at(0),
	}
}

// checkDelivery fails the test unless got is want as a store gives it back.
func checkDelivery(t *testing.T, what string, got, want *askd.Delivery) {
	t.Helper()
	checkTime(t, what+": created_at", got.CreatedAt, want.CreatedAt)
	checkTime(t, what+": updated_at", got.UpdatedAt, want.UpdatedAt)
	checkTimePtr(t, what+": next_at", got.NextAt, want.NextAt)
	checkTimePtr(t, what+": claimed_until", got.ClaimedUntil, want.ClaimedUntil)
	g, w := *got, *want
	for _, d := range []*askd.Delivery{&g, &w} {
		d.CreatedAt, d.UpdatedAt, d.NextAt, d.ClaimedUntil = time.Time{}, time.Time{}, nil, nil
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, dump(&g), dump(&w))
	}
}

// testAddDelivery: AddDelivery adds a delivery as CreateDelivery does, a
// taken key is no error and leaves the first as it was, and one of a
// missing ask fails its update (ENOTFOUND).
func testAddDelivery(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a := settled(newAsk(askd.KindDecision, "s1", at(0)), "", at(time.Second))
	create(t, s, a)
	d := newDelivery(a, askd.TellKey(a), ptr(at(time.Second)))
	update(t, s, func(tx askd.Tx) error {
		if err := tx.Deliveries.AddDelivery(ctx, d); err != nil {
			return err
		}
		return tx.Deliveries.AddDelivery(ctx, newDelivery(a, d.Key, nil))
	})
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Deliveries.Delivery(ctx, d.Key)
		if err != nil {
			return err
		}
		d.ID = got.ID
		checkDelivery(t, "added", got, d)
		return nil
	})
	err := s.Update(ctx, func(tx askd.Tx) error {
		return tx.Deliveries.AddDelivery(ctx, newDelivery(&askd.Ask{ID: a.ID + 1000, Session: "s1"}, "orphan", nil))
	})
	wantCode(t, err, askd.ENOTFOUND)
	err = s.View(ctx, func(tx askd.Tx) error {
		_, err := tx.Deliveries.Delivery(ctx, "orphan")
		return err
	})
	wantCode(t, err, askd.ENOTFOUND)
}

func testDeliveryRoundTrip(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a := settled(newAsk(askd.KindDecision, "s1", at(0)), "", at(time.Second))
	create(t, s, a)
	d := newDelivery(a, askd.TellKey(a), ptr(at(time.Second)))
	d.Attempts, d.LastError = 2, "connection refused"
	update(t, s, func(tx askd.Tx) error {
		if err := tx.Deliveries.CreateDelivery(ctx, d); err != nil {
			return err
		}
		if d.ID == 0 {
			t.Error("CreateDelivery did not set the id")
		}
		// The same key again: ECONFLICT, and the transaction goes on.
		again := newDelivery(a, d.Key, nil)
		wantCode(t, tx.Deliveries.CreateDelivery(ctx, again), askd.ECONFLICT)
		got, err := tx.Deliveries.Delivery(ctx, d.Key)
		if err != nil {
			return err
		}
		checkDelivery(t, "in the transaction", got, d)
		return nil
	})
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Deliveries.Delivery(ctx, d.Key)
		if err != nil {
			return err
		}
		checkDelivery(t, "after commit", got, d)
		return nil
	})

	d.Status, d.Attempts, d.NextAt, d.ClaimedUntil = askd.DeliverySent, 3, nil, nil
	d.LastError, d.UpdatedAt = "", at(time.Minute)
	update(t, s, func(tx askd.Tx) error { return tx.Deliveries.UpdateDelivery(ctx, d) })
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Deliveries.Delivery(ctx, d.Key)
		if err != nil {
			return err
		}
		checkDelivery(t, "updated", got, d)
		return nil
	})

	err := s.View(ctx, func(tx askd.Tx) error {
		_, err := tx.Deliveries.Delivery(ctx, "ask:999@none")
		return err
	})
	wantCode(t, err, askd.ENOTFOUND)
	err = s.Update(ctx, func(tx askd.Tx) error {
		ghost := *d
		ghost.ID = d.ID + 1000
		return tx.Deliveries.UpdateDelivery(ctx, &ghost)
	})
	wantCode(t, err, askd.ENOTFOUND)
	err = s.Update(ctx, func(tx askd.Tx) error {
		orphan := newDelivery(&askd.Ask{ID: a.ID + 1000, Session: "s1"}, "orphan", nil)
		return tx.Deliveries.CreateDelivery(ctx, orphan)
	})
	wantCode(t, err, askd.ENOTFOUND)

	// Deliveries go with their ask when it is purged.
	update(t, s, func(tx askd.Tx) error {
		_, err := tx.Asks.DeleteAsks(ctx, purgeBefore(at(time.Hour)), 1000)
		return err
	})
	err = s.View(ctx, func(tx askd.Tx) error {
		_, err := tx.Deliveries.Delivery(ctx, d.Key)
		return err
	})
	wantCode(t, err, askd.ENOTFOUND)
}

func testClaimDeliveries(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a := newAsk(askd.KindDecision, "s1", at(0))
	create(t, s, a)
	now := at(time.Hour)
	lease := 30 * time.Second
	early := newDelivery(a, "early", ptr(now.Add(-time.Minute)))
	due := newDelivery(a, "due", ptr(now))
	later := newDelivery(a, "later", ptr(now.Add(time.Minute)))
	hook := newDelivery(a, "hook", nil)
	sent := newDelivery(a, "sent", ptr(now.Add(-time.Hour)))
	sent.Status = askd.DeliverySent
	failed := newDelivery(a, "failed", ptr(now.Add(-time.Hour)))
	failed.Status = askd.DeliveryFailed
	leased := newDelivery(a, "leased", ptr(now.Add(-2*time.Minute)))
	leased.ClaimedUntil = ptr(now.Add(time.Second))
	update(t, s, func(tx askd.Tx) error {
		for _, d := range []*askd.Delivery{early, due, later, hook, sent, failed, leased} {
			if err := tx.Deliveries.CreateDelivery(ctx, d); err != nil {
				return err
			}
		}
		return nil
	})

	view(t, s, func(tx askd.Tx) error {
		next, err := tx.Deliveries.NextDeliveryAt(ctx)
		if err != nil {
			return err
		}
		checkTime(t, "next delivery", next, early.NextAt.Add(0))
		return nil
	})

	claim := func(now time.Time, limit int) []*askd.Delivery {
		t.Helper()
		var got []*askd.Delivery
		update(t, s, func(tx askd.Tx) (err error) {
			got, err = tx.Deliveries.ClaimDeliveries(ctx, now, lease, limit)
			return err
		})
		return got
	}
	keys := func(ds []*askd.Delivery) []string {
		out := make([]string, len(ds))
		for i, d := range ds {
			out[i] = d.Key
		}
		return out
	}

	got := claim(now, 1)
	if !slices.Equal(keys(got), []string{"early"}) {
		t.Fatalf("claim with limit 1 = %v, want [early]", keys(got))
	}
	want := *early
	want.Attempts, want.ClaimedUntil, want.UpdatedAt = 1, ptr(now.Add(lease)), now
	checkDelivery(t, "claimed", got[0], &want)

	if got := claim(now, 10); !slices.Equal(keys(got), []string{"due"}) {
		t.Fatalf("second claim = %v, want [due]: not the claimed, leased, later, hook, sent or failed ones", keys(got))
	}
	if got := claim(now, 10); len(got) != 0 {
		t.Fatalf("third claim = %v, want none", keys(got))
	}
	view(t, s, func(tx askd.Tx) error {
		next, err := tx.Deliveries.NextDeliveryAt(ctx)
		if err != nil {
			return err
		}
		checkTime(t, "next delivery once claimed", next, now.Add(time.Second)) // the lease on "leased" ends
		return nil
	})
	// Past the leases and later's time, all three come back, as due.
	got = claim(now.Add(time.Minute), 10)
	if !slices.Equal(keys(got), []string{"leased", "early", "due", "later"}) {
		t.Fatalf("claim past the leases = %v, want [leased early due later]", keys(got))
	}
	for _, d := range got {
		wantAttempts := 2 // claimed before
		if d.Key == "later" || d.Key == "leased" {
			wantAttempts = 1
		}
		if d.Attempts != wantAttempts {
			t.Errorf("%s: attempts %d, want %d", d.Key, d.Attempts, wantAttempts)
		}
	}
}

func testConcurrentClaims(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a := newAsk(askd.KindDecision, "s1", at(0))
	create(t, s, a)
	const n, claimers = 60, 8
	update(t, s, func(tx askd.Tx) error {
		for i := range n {
			if err := tx.Deliveries.CreateDelivery(ctx, newDelivery(a, fmt.Sprintf("d%d", i), ptr(at(time.Duration(i)*time.Millisecond)))); err != nil {
				return err
			}
		}
		return nil
	})
	now := at(time.Hour)
	claimedOnce(t, s, n, claimers, func(tx askd.Tx) ([]*askd.Delivery, error) {
		return tx.Deliveries.ClaimDeliveries(ctx, now, time.Minute, 3)
	})
}

// claimedOnce runs claimers goroutines, released together, each claiming
// with claim until nothing is left, and checks that the n deliveries were
// each claimed exactly once.
func claimedOnce(t *testing.T, s askd.Store, n, claimers int, claim func(tx askd.Tx) ([]*askd.Delivery, error)) {
	t.Helper()
	ctx := t.Context()
	var (
		mu     sync.Mutex
		seen   = map[string]int{}
		wg     sync.WaitGroup
		errs   = make(chan error, claimers)
		starts = make(chan struct{})
	)
	for range claimers {
		wg.Go(func() {
			<-starts
			for {
				var got []*askd.Delivery
				err := s.Update(ctx, func(tx askd.Tx) (err error) {
					got, err = claim(tx)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, d := range got {
					seen[d.Key]++
				}
				mu.Unlock()
			}
		})
	}
	close(starts)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Errorf("%d deliveries claimed, want %d", len(seen), n)
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("delivery %s claimed %d times, want once", k, c)
		}
	}
}
