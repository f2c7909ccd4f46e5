package storetest

import (
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// eventFixture stores two asks and three events, each event carrying the ask
// as it was right after it, and returns the asks, the events and copies of
// the asks as each event left them.
//
//	e1: ask a created    e2: ask b created    e3: ask a answered
func eventFixture(t *testing.T, s askd.Store) (a, b *askd.Ask, events []*askd.Event, snapshots []*askd.Ask) {
	t.Helper()
	ctx := t.Context()
	a = newAsk(askd.KindQuestion, "s1", at(0))
	b = newAsk(askd.KindApproval, "s2", at(time.Second))
	// Routed, claimed and escalated: a snapshot keeps those times as the
	// store does, to the microsecond.
	b.Owner, b.ClaimedBy, b.ClaimedAt = "team:platform", "alice", ptr(at(2*time.Second))
	b.EscalatedTo, b.EscalatedAt = "carol", ptr(at(3*time.Second))
	update(t, s, func(tx askd.Tx) error {
		for _, x := range []*askd.Ask{a, b} {
			if err := tx.Asks.CreateAsk(ctx, x); err != nil {
				return err
			}
			snap := *x
			e := &askd.Event{AskID: x.ID, Session: x.Session, Action: askd.ActionCreated, Actor: x.Agent, At: x.CreatedAt, Ask: &snap}
			if err := tx.Events.AddEvent(ctx, e); err != nil {
				return err
			}
			events, snapshots = append(events, e), append(snapshots, &snap)
		}
		return nil
	})
	update(t, s, func(tx askd.Tx) error {
		a.Settle(askd.StatusAnswered, "", &askd.Answer{Answers: map[string]askd.Choice{"Proceed?": {Values: []string{"yes"}}}}, "reviewer", at(time.Minute))
		if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
			return err
		}
		snap := *a
		e := &askd.Event{AskID: a.ID, Session: a.Session, Action: askd.ActionAnswered, Actor: "reviewer", At: at(time.Minute), Note: "from the inbox", Ask: &snap}
		if err := tx.Events.AddEvent(ctx, e); err != nil {
			return err
		}
		events, snapshots = append(events, e), append(snapshots, &snap)
		return nil
	})
	for i := 1; i < len(events); i++ {
		if events[i].ID <= events[i-1].ID {
			t.Fatalf("event ids %d then %d, want increasing", events[i-1].ID, events[i].ID)
		}
	}
	return a, b, events, snapshots
}

// checkEvent fails the test unless got is want as stored. The snapshot is
// checked by the caller.
func checkEvent(t *testing.T, got, want *askd.Event) {
	t.Helper()
	if got.ID != want.ID || got.AskID != want.AskID || got.Session != want.Session ||
		got.Action != want.Action || got.Actor != want.Actor || got.Note != want.Note {
		t.Errorf("event = %+v, want %+v", got, want)
	}
	checkTime(t, "event at", got.At, want.At)
}

func testAskHistory(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a, b, events, _ := eventFixture(t, s)
	tests := []struct {
		name  string
		askID int64
		want  []*askd.Event
	}{
		{"all of ask a", a.ID, []*askd.Event{events[0], events[2]}},
		{"all of ask b", b.ID, []*askd.Event{events[1]}},
		{"ask without events", b.ID + 100, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			view(t, s, func(tx askd.Tx) error {
				got, err := tx.Events.AskHistory(ctx, tt.askID)
				if err != nil {
					return err
				}
				if len(got) != len(tt.want) {
					t.Fatalf("AskHistory(%d) = %d events, want %d", tt.askID, len(got), len(tt.want))
				}
				for i, e := range got {
					checkEvent(t, e, tt.want[i])
					if e.Ask != nil {
						t.Errorf("event %d of one ask carries a snapshot; histories leave it out", e.ID)
					}
				}
				return nil
			})
		})
	}
}

func testEventsAfter(t *testing.T, s askd.Store) {
	ctx := t.Context()
	_, _, events, snapshots := eventFixture(t, s)
	tests := []struct {
		name    string
		afterID int64
		limit   int
		want    []int // indexes into events
	}{
		{"from the start", 0, 0, []int{0, 1, 2}},
		{"after the first", events[0].ID, 0, []int{1, 2}},
		{"after the last", events[2].ID, 0, nil},
		{"limit", 0, 2, []int{0, 1}},
		{"after and limit", events[0].ID, 1, []int{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			view(t, s, func(tx askd.Tx) error {
				got, err := tx.Events.EventsAfter(ctx, tt.afterID, tt.limit)
				if err != nil {
					return err
				}
				if len(got) != len(tt.want) {
					t.Fatalf("EventsAfter(%d, %d) = %d events, want %d", tt.afterID, tt.limit, len(got), len(tt.want))
				}
				for i, e := range got {
					w := tt.want[i]
					checkEvent(t, e, events[w])
					if e.Ask == nil {
						t.Errorf("event %d after an id has no snapshot", e.ID)
						continue
					}
					checkAsk(t, "snapshot", e.Ask, snapshots[w])
				}
				return nil
			})
		})
	}
}

func testEventSnapshotFromStore(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a := newAsk(askd.KindDecision, "s1", at(0))
	a.Options = []askd.Option{{Label: "a"}, {Label: "b"}}
	create(t, s, a)
	var e askd.Event
	update(t, s, func(tx askd.Tx) error {
		a.Settle(askd.StatusAnswered, "", &askd.Answer{Answer: "b"}, "reviewer", at(time.Minute))
		if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
			return err
		}
		// No Ask: the store snapshots the ask as this transaction left it.
		e = askd.Event{AskID: a.ID, Session: a.Session, Action: askd.ActionAnswered, Actor: "reviewer", At: at(time.Minute)}
		return tx.Events.AddEvent(ctx, &e)
	})
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Events.EventsAfter(ctx, 0, 0)
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0].Ask == nil {
			t.Fatalf("EventsAfter = %s, want one event with a snapshot", dump(got))
		}
		checkEvent(t, got[0], &e)
		checkAsk(t, "snapshot", got[0].Ask, a)
		return nil
	})
}

func testLastEventID(t *testing.T, s askd.Store) {
	ctx := t.Context()
	last := func() int64 {
		t.Helper()
		var id int64
		view(t, s, func(tx askd.Tx) error {
			var err error
			id, err = tx.Events.LastEventID(ctx)
			return err
		})
		return id
	}
	if got := last(); got != 0 {
		t.Errorf("LastEventID of an empty store = %d, want 0", got)
	}
	_, _, events, _ := eventFixture(t, s)
	if got, want := last(), events[len(events)-1].ID; got != want {
		t.Errorf("LastEventID = %d, want %d", got, want)
	}
	update(t, s, func(tx askd.Tx) error {
		got, err := tx.Events.LastEventID(ctx)
		if err != nil {
			return err
		}
		if want := events[len(events)-1].ID; got != want {
			t.Errorf("LastEventID in a write transaction = %d, want %d", got, want)
		}
		return nil
	})
}
