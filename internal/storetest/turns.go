package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// testWritersTakeTurns checks the guarantee every "exactly once" of askd
// rests on (askd.Store.Update): write transactions take turns, across
// sessions and across store handles on one database. Updates that each read
// how many asks there are and add one numbered after them must leave the
// asks numbered 1 to n, once each, and see no other write commit while they
// run. A store that kept apart only the updates of one session, or of one
// handle (one process), lets two of them overlap, as two approvals counted
// at once would.
func testWritersTakeTurns(t *testing.T, s askd.Store, reopen func(*testing.T, askd.Store) askd.Store) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for _, tt := range []struct {
		name   string
		agent  string // whose asks are counted: each case its own
		stores []askd.Store
	}{
		{"TwoSessions", "agent-sessions", []askd.Store{s}},
		{"TwoHandles", "agent-handles", []askd.Store{s, reopen(t, s)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const n = 64
			got, err := countAndAdd(ctx, tt.stores, tt.agent, n)
			if err != nil {
				t.Fatal(err)
			}
			if want := numbered(n); !slices.Equal(got, want) {
				t.Errorf("revisions %v, want 1 to %d once each: write transactions overlapped", got, n)
			}
		})
	}
}

// errOverlap is countAndAdd's error when an update saw another write commit
// while it ran.
var errOverlap = errors.New("another write committed while an update ran")

// countAndAdd runs n (an even number) updates of agent's asks, each of
// which reads how many there are, reads it again (no other write may commit
// meanwhile: else errOverlap), and adds one whose revision is the count + 1.
// It returns the revisions stored, sorted, as the last of stores (handles on
// one database) reads them: 1 to n once each when writers take turns.
//
// The updates go in pairs, the two of a pair in two sessions and, given two
// stores, through both: the second is called once the first has read, and
// the first reads again, a round trip at a time, only once the second has
// been called. So where writers take turns the second waits for the first
// to end, and where they do not (a lock per session, or per handle) the
// second reads while the first is still open, not only when the scheduler
// happens to start them together.
func countAndAdd(ctx context.Context, stores []askd.Store, agent string, n int) ([]int, error) {
	sessions := []string{"s0", "s1"}
	for i := 0; i < n; i += 2 {
		pair := i / 2 // which goes first alternates
		first := countingUpdate{stores[pair%len(stores)], sessions[pair%2], i}
		second := countingUpdate{stores[(pair+1)%len(stores)], sessions[(pair+1)%2], i + 1}
		hasRead, called := make(chan struct{}), make(chan struct{})
		firstRead := sync.OnceFunc(func() { close(hasRead) })
		var errFirst, errSecond error
		var wg sync.WaitGroup
		wg.Go(func() {
			defer firstRead() // should it fail before reading
			errFirst = first.countAndAdd(ctx, agent, func() {
				firstRead()
				select {
				case <-called:
				case <-ctx.Done():
				}
			})
		})
		wg.Go(func() {
			<-hasRead
			close(called)
			errSecond = second.countAndAdd(ctx, agent, func() {})
		})
		wg.Wait()
		if err := errors.Join(errFirst, errSecond); err != nil {
			return nil, err
		}
	}
	var revisions []int
	err := stores[len(stores)-1].View(ctx, func(tx askd.Tx) error {
		asks, err := tx.Asks.FindAsks(ctx, askd.AskFilter{Agent: agent})
		revisions = revisions[:0]
		for _, a := range asks {
			revisions = append(revisions, a.Revision)
		}
		return err
	})
	slices.Sort(revisions)
	return revisions, err
}

// countingUpdate is one of countAndAdd's updates: the ith, through store s, in
// session session.
type countingUpdate struct {
	s       askd.Store
	session string
	i       int
}

// countAndAdd runs u: in one Update, it counts agent's asks, calls read,
// counts them again a few times, and adds an ask numbered after them.
func (u countingUpdate) countAndAdd(ctx context.Context, agent string, read func()) error {
	err := u.s.Update(ctx, func(tx askd.Tx) error {
		// As the app does before reading a session's asks.
		if err := tx.Sessions.LockSession(ctx, agent, u.session); err != nil {
			return err
		}
		count, err := tx.Asks.CountAsks(ctx, askd.AskFilter{Agent: agent})
		if err != nil {
			return err
		}
		read()
		// A round trip each, on a server: time for the other update's read
		// to come in, where writers do not take turns.
		for range 8 {
			again, err := tx.Asks.CountAsks(ctx, askd.AskFilter{Agent: agent})
			if err != nil {
				return err
			}
			if again != count {
				return fmt.Errorf("%w: %d asks, then %d", errOverlap, count, again)
			}
		}
		a := newAsk(askd.KindQuestion, u.session, at(time.Duration(u.i)*time.Millisecond))
		a.Agent, a.Revision = agent, count+1
		return tx.Asks.CreateAsk(ctx, a)
	})
	if err != nil {
		return fmt.Errorf("update %d (session %s): %w", u.i, u.session, err)
	}
	return nil
}

// numbered returns 1 to n.
func numbered(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}
