package storetest

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// compareUrgency orders urgency keys as PendingAsks must: a deadline before
// none, soonest first, the lower id first on a tie; without one, the higher
// id first.
func compareUrgency(a, b askd.UrgencyKey) int {
	switch {
	case a.Deadline != nil && b.Deadline == nil:
		return -1
	case a.Deadline == nil && b.Deadline != nil:
		return 1
	case a.Deadline != nil:
		if c := a.Deadline.Compare(*b.Deadline); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	}
	return cmp.Compare(b.ID, a.ID)
}

// withDeadline is a with deadline d.
func withDeadline(a *askd.Ask, d time.Time) *askd.Ask {
	a.Deadline = &d
	return a
}

// pending reads the pending asks q selects.
func pending(t *testing.T, s askd.Store, q askd.PendingQuery) []*askd.Ask {
	t.Helper()
	var got []*askd.Ask
	view(t, s, func(tx askd.Tx) (err error) {
		got, err = tx.Asks.PendingAsks(t.Context(), q)
		return err
	})
	return got
}

// testUrgencyOrder: PendingAsks lists asks with a deadline first, soonest
// first, then the others newest first; snoozed asks keep their place (the
// inbox shows them apart, as it always has); settled asks are not listed.
func testUrgencyOrder(t *testing.T, s askd.Store) {
	undatedOld := newAsk(askd.KindDecision, "s1", at(0))
	late := withDeadline(newAsk(askd.KindQuestion, "s1", at(time.Second)), at(30*time.Minute))
	soon := withDeadline(newAsk(askd.KindApproval, "s2", at(2*time.Second)), at(5*time.Minute))
	undatedNew := newAsk(askd.KindReady, "s2", at(3*time.Second))
	soonTie := withDeadline(newAsk(askd.KindQuestion, "s1", at(4*time.Second)), at(5*time.Minute))
	snoozed := withDeadline(newAsk(askd.KindQuestion, "s3", at(5*time.Second)), at(time.Minute))
	snoozed.SnoozedUntil = ptr(at(time.Hour))
	gone := settled(withDeadline(newAsk(askd.KindQuestion, "s1", at(6*time.Second)), at(time.Second)), "", at(time.Minute))
	other := byAgent(withDeadline(newAsk(askd.KindQuestion, "s1", at(7*time.Second)), at(10*time.Minute)), "agent-2")
	create(t, s, undatedOld, late, soon, undatedNew, soonTie, snoozed, gone, other)
	names := map[int64]string{}
	for name, a := range map[string]*askd.Ask{"undatedOld": undatedOld, "late": late, "soon": soon, "undatedNew": undatedNew,
		"soonTie": soonTie, "snoozed": snoozed, "gone": gone, "other": other} {
		names[a.ID] = name
	}

	tests := []struct {
		name  string
		query askd.PendingQuery
		want  []string
	}{
		{"all", askd.PendingQuery{}, []string{"snoozed", "soon", "soonTie", "other", "late", "undatedNew", "undatedOld"}},
		{"limit inside the dated", askd.PendingQuery{Limit: 2}, []string{"snoozed", "soon"}},
		{"limit across both parts", askd.PendingQuery{Limit: 6}, []string{"snoozed", "soon", "soonTie", "other", "late", "undatedNew"}},
		{"after a dated ask, past its tie", askd.PendingQuery{After: ptrKey(soon)}, []string{"soonTie", "other", "late", "undatedNew", "undatedOld"}},
		{"after the last dated ask", askd.PendingQuery{After: ptrKey(late)}, []string{"undatedNew", "undatedOld"}},
		{"after an undated ask", askd.PendingQuery{After: ptrKey(undatedNew)}, []string{"undatedOld"}},
		{"after the last", askd.PendingQuery{After: ptrKey(undatedOld)}, nil},
		{"agent", askd.PendingQuery{Agent: "agent-2"}, []string{"other"}},
		{"session name, any agent", askd.PendingQuery{Session: "s1"}, []string{"soonTie", "other", "late", "undatedOld"}},
		{"agent and session", askd.PendingQuery{Agent: "agent-1", Session: "s1"}, []string{"soonTie", "late", "undatedOld"}},
		{"kind", askd.PendingQuery{Kind: askd.KindQuestion}, []string{"snoozed", "soonTie", "other", "late"}},
		{"kind, after, limit", askd.PendingQuery{Kind: askd.KindQuestion, After: ptrKey(soonTie), Limit: 1}, []string{"other"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, a := range pending(t, s, tt.query) {
				got = append(got, names[a.ID])
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("PendingAsks(%+v) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
	t.Run("asks as stored", func(t *testing.T) {
		for _, a := range pending(t, s, askd.PendingQuery{Session: "s3"}) {
			checkAsk(t, "snoozed", a, snoozed)
		}
	})
}

// ptrKey is a pointer to a's urgency key.
func ptrKey(a *askd.Ask) *askd.UrgencyKey {
	k := askd.UrgencyKeyOf(a)
	return &k
}

// testPagingPending pages through 250 pending asks while asks are created
// and settled between pages: an ask pending throughout is listed exactly
// once, none twice, and the pages together stay in urgency order.
func testPagingPending(t *testing.T, s askd.Store) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(6, 250))
	var made []*askd.Ask
	newOne := func(i int, created time.Time) *askd.Ask {
		a := newAsk(askd.Kinds[i%len(askd.Kinds)], fmt.Sprintf("s%d", i%7), created)
		if i%3 != 0 {
			// Deadlines on a coarse grid, so that many tie.
			a.Deadline = ptr(at(time.Duration(rng.IntN(40)) * time.Minute))
		}
		return a
	}
	for i := range 250 {
		made = append(made, newOne(i, at(time.Duration(i)*time.Second)))
	}
	create(t, s, made...)
	var total int
	view(t, s, func(tx askd.Tx) (err error) {
		total, err = tx.Asks.CountAsks(ctx, askd.AskFilter{Status: askd.StatusPending})
		return err
	})
	if total != 250 {
		t.Fatalf("CountAsks(pending) = %d, want 250", total)
	}

	settledIDs := map[int64]bool{}
	seen := map[int64]int{}
	var listed []*askd.Ask
	var after *askd.UrgencyKey
	for page := 0; ; page++ {
		if page > 100 {
			t.Fatal("paging does not end")
		}
		got := pending(t, s, askd.PendingQuery{After: after, Limit: 40})
		for _, a := range got {
			seen[a.ID]++
			listed = append(listed, a)
		}
		if len(got) < 40 {
			break
		}
		after = ptrKey(got[len(got)-1])
		// Between pages: new asks, some more urgent than the cursor and some
		// less, and asks settled, some listed already and some not yet.
		var fresh []*askd.Ask
		for j := range 5 {
			fresh = append(fresh, newOne(rng.IntN(1000), at(time.Hour+time.Duration(page*10+j)*time.Second)))
		}
		create(t, s, fresh...)
		made = append(made, fresh...)
		update(t, s, func(tx askd.Tx) error {
			for range 4 {
				a := made[rng.IntN(len(made))]
				if settledIDs[a.ID] {
					continue
				}
				settledIDs[a.ID] = true
				if err := tx.Asks.UpdateAsk(ctx, settled(a, askd.ReasonDismissed, at(2*time.Hour))); err != nil {
					return err
				}
			}
			return nil
		})
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("ask %d listed %d times", id, n)
		}
	}
	for _, a := range made[:250] {
		if !settledIDs[a.ID] && seen[a.ID] != 1 {
			t.Errorf("ask %d, pending throughout, listed %d times", a.ID, seen[a.ID])
		}
	}
	if !slices.IsSortedFunc(listed, func(a, b *askd.Ask) int { return compareUrgency(askd.UrgencyKeyOf(a), askd.UrgencyKeyOf(b)) }) {
		t.Error("the pages together are not in urgency order")
	}
}

// testSessionsPaged: Sessions pages by agent then name, and
// CountSessionsWithAsks counts what the whole list holds.
func testSessionsPaged(t *testing.T, s askd.Store) {
	ctx := t.Context()
	// Names that sort differently by bytes and by a locale: upper case, "_".
	for i, k := range [][2]string{{"agent-1", "b"}, {"agent-1", "B"}, {"agent-1", "a_1"}, {"agent-1", "a1"},
		{"agent-2", "a"}, {"agent-1", "c"}, {"agent-2", "Z"}} {
		create(t, s, byAgent(newAsk(askd.KindQuestion, k[1], at(time.Duration(i)*time.Second)), k[0]))
	}
	create(t, s, settled(newAsk(askd.KindReady, "b", at(time.Minute)), "", at(2*time.Minute)))

	var all []*askd.SessionInfo
	var n int
	view(t, s, func(tx askd.Tx) (err error) {
		if all, err = tx.Sessions.Sessions(ctx, askd.SessionQuery{}); err != nil {
			return err
		}
		n, err = tx.Sessions.CountSessionsWithAsks(ctx, nil)
		return err
	})
	want := []string{"agent-1/B", "agent-1/a1", "agent-1/a_1", "agent-1/b", "agent-1/c", "agent-2/Z", "agent-2/a"}
	if got := sessionNames(all); !slices.Equal(got, want) {
		t.Fatalf("Sessions = %v, want %v (by bytes)", got, want)
	}
	if n != len(want) {
		t.Errorf("CountSessionsWithAsks = %d, want %d", n, len(want))
	}

	var paged []*askd.SessionInfo
	var after *askd.SessionKey
	for page := 0; ; page++ {
		var got []*askd.SessionInfo
		view(t, s, func(tx askd.Tx) (err error) {
			got, err = tx.Sessions.Sessions(ctx, askd.SessionQuery{After: after, Limit: 2})
			return err
		})
		paged = append(paged, got...)
		if len(got) < 2 {
			break
		}
		last := got[len(got)-1]
		after = &askd.SessionKey{Agent: last.Agent, Name: last.Name}
		if page == 0 {
			// A session before the cursor is not listed; one after it is.
			create(t, s, newAsk(askd.KindQuestion, "A", at(time.Hour)), byAgent(newAsk(askd.KindQuestion, "b", at(time.Hour)), "agent-2"))
		}
	}
	want = []string{"agent-1/B", "agent-1/a1", "agent-1/a_1", "agent-1/b", "agent-1/c", "agent-2/Z", "agent-2/a", "agent-2/b"}
	if got := sessionNames(paged); !slices.Equal(got, want) {
		t.Errorf("Sessions paged by 2 = %v, want %v", got, want)
	}
	for _, si := range paged {
		if si.Agent == "agent-1" && si.Name == "b" && (si.Pending != 1 || si.Total != 2) {
			t.Errorf("agent-1/b on a page: %d pending of %d, want 1 of 2", si.Pending, si.Total)
		}
	}
}

// sessionNames are the sessions as agent/name.
func sessionNames(ss []*askd.SessionInfo) []string {
	out := make([]string, len(ss))
	for i, si := range ss {
		out[i] = si.Agent + "/" + si.Name
	}
	return out
}
