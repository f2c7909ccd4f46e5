package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// testKeysHeld: an agent token's approvals that hold a key (Ask.HoldsKey)
// are one per key, whatever their status: a second is ECONFLICT, in a
// transaction of its own. A one-call approval holds its key until it is
// told; then the key's next approval may be stored, and FindAsks by key
// finds them all, the one holding it first. Another token's key is
// another's; a key asked without one_call is held for good.
func testKeysHeld(t *testing.T, s askd.Store) {
	ctx := t.Context()
	keyed := func(key string, oneCall bool, created time.Time) *askd.Ask {
		a := newAsk(askd.KindApproval, "s1", created)
		a.Key, a.OneCall = key, oneCall
		return a
	}
	refused := func(a *askd.Ask) {
		t.Helper()
		err := s.Update(ctx, func(tx askd.Tx) error { return tx.Asks.CreateAsk(ctx, a) })
		wantCode(t, err, askd.ECONFLICT)
	}
	told := func(a *askd.Ask, when time.Time) {
		t.Helper()
		a.ToldAt, a.UpdatedAt = ptr(when), when
		update(t, s, func(tx askd.Tx) error { return tx.Asks.UpdateAsk(ctx, a) })
	}
	byKey := func(key string) []int64 {
		t.Helper()
		var got []*askd.Ask
		view(t, s, func(tx askd.Tx) (err error) {
			got, err = tx.Asks.FindAsks(ctx, askd.AskFilter{Agent: "agent-1", Key: key, Kind: askd.KindApproval})
			return err
		})
		return ids(got)
	}

	first := keyed("call 1", true, at(0))
	theirs := byAgent(keyed("call 1", true, at(0)), "agent-2")
	create(t, s, first, theirs)
	refused(keyed("call 1", true, at(time.Second))) // pending: it holds the key
	settled(first, "", at(time.Minute))
	update(t, s, func(tx askd.Tx) error { return tx.Asks.UpdateAsk(ctx, first) })
	refused(keyed("call 1", true, at(time.Second))) // decided, untold: still
	refused(keyed("call 1", false, at(time.Second)))
	told(first, at(2*time.Minute))
	second := keyed("call 1", true, at(3*time.Minute))
	create(t, s, second)
	refused(keyed("call 1", true, at(4*time.Minute)))
	if got, want := byKey("call 1"), []int64{second.ID, first.ID}; !slices.Equal(got, want) {
		t.Fatalf("FindAsks by key = ids %v, want %v: the one holding it, then the told one", got, want)
	}
	settled(second, askd.ReasonDismissed, at(5*time.Minute))
	update(t, s, func(tx askd.Tx) error { return tx.Asks.UpdateAsk(ctx, second) })
	told(second, at(6*time.Minute))
	third := keyed("call 1", true, at(7*time.Minute))
	settled(third, "", at(7*time.Minute)) // a rule's: decided as it is made
	create(t, s, third)
	if got, want := byKey("call 1"), []int64{third.ID, second.ID, first.ID}; !slices.Equal(got, want) {
		t.Fatalf("FindAsks by key = ids %v, want %v, newest first", got, want)
	}

	// Without one_call, told or not, the key is held for good.
	kept := keyed("deploy 1", false, at(0))
	create(t, s, kept)
	told(settled(kept, "", at(time.Minute)), at(time.Minute))
	refused(keyed("deploy 1", false, at(2*time.Minute)))
	refused(keyed("deploy 1", true, at(2*time.Minute)))
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Asks.Ask(ctx, first.ID)
		if err != nil {
			return err
		}
		checkAsk(t, "told one-call approval", got, first)
		return nil
	})
}
