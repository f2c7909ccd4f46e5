package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/groupcommit"
	"github.com/askd-dev/askd/internal/pgtest"
)

// A write batch's held writes (UpdateAsk, AddEvent) are sent with a later
// statement, maybe a later update's, or the COMMIT, and a statement that
// fails makes the server skip the rest of its round trip. Each batch here is built to order, so that
// every place a write can fail is met in a batch of one and a shared one:
// the failing update alone is undone, and its error is its own.
func TestPipelinedBatches(t *testing.T) {
	const missing = 1_000_000
	boom := errors.New("boom")
	type step struct {
		name string
		fn   func(ctx context.Context, tx askd.Tx, a *askd.Ask) error
		want string // "" for success, else a part of the error
	}
	var (
		change = step{"change", func(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
			got, err := tx.Asks.Ask(ctx, a.ID)
			if err != nil {
				return err
			}
			got.Title, got.UpdatedAt = "changed", got.UpdatedAt.Add(time.Second)
			if err := tx.Asks.UpdateAsk(ctx, got); err != nil {
				return err
			}
			return tx.Events.AddEvent(ctx, &askd.Event{AskID: got.ID, Session: got.Session, Action: askd.ActionReplaced, At: got.UpdatedAt, Ask: got})
		}, ""}
		// held writes the database refuses when they are sent
		updateMissing = step{"update a missing ask", func(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
			a.Title = "lost"
			b := *a
			b.ID = missing
			if err := tx.Asks.UpdateAsk(ctx, a); err != nil { // held, and would succeed
				return err
			}
			return tx.Asks.UpdateAsk(ctx, &b)
		}, "ask 1000000 not found"}
		eventMissing = step{"event of a missing ask", func(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
			a.Title = "lost"
			if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
				return err
			}
			return tx.Events.AddEvent(ctx, &askd.Event{AskID: missing, Session: a.Session, Action: askd.ActionCreated, At: a.CreatedAt, Ask: a})
		}, "ask 1000000 not found"}
		// held writes followed by a read that is refused
		refusedRead = step{"a refused statement", func(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
			a.Title = "lost"
			if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
				return err
			}
			return tx.Tokens.CreateToken(ctx, &askd.Token{Name: "taken", Role: askd.RoleAgent, Hash: "ab12", CreatedAt: a.CreatedAt})
		}, "is taken"}
		// an error of fn's own after held writes, which are then never sent
		fnError = step{"fn's own error", func(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
			a.Title = "lost"
			if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
				return err
			}
			return boom
		}, "boom"}
		panics = step{"a panic", func(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
			a.Title = "lost"
			if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
				return err
			}
			panic("boom")
		}, "panic: boom"}
		// a refused statement whose error fn does not return: the
		// transaction is aborted, and the COMMIT rolls it back
		swallowed = step{"a refused statement ignored", func(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
			_ = tx.Tokens.CreateToken(ctx, &askd.Token{Name: "taken", Role: askd.RoleAgent, Hash: "ab12", CreatedAt: a.CreatedAt})
			return nil
		}, "rollback"}
		nothing = step{"no statement", func(context.Context, askd.Tx, *askd.Ask) error { return nil }, ""}
		// a statement this connection has never run, right after a failure
		fresh = step{"a first statement", func(ctx context.Context, tx askd.Tx, a *askd.Ask) error {
			if _, err := tx.Tokens.Tokens(ctx); err != nil {
				return err
			}
			return change.fn(ctx, tx, a)
		}, ""}
	)
	for _, steps := range [][]step{
		{updateMissing},
		{eventMissing},
		{refusedRead},
		{fnError},
		{swallowed},
		{nothing},
		{change, updateMissing, change},
		{change, change, updateMissing},
		{change, change, eventMissing},
		{eventMissing, change},
		{refusedRead, fresh},
		{change, refusedRead, fresh},
		{fnError, change, fnError},
		{change, panics, change},
		{nothing, change, nothing},
		{updateMissing, eventMissing},
		{refusedRead, fnError, updateMissing},
		// an update's held write refused with a later update's statement
		// or the COMMIT, after later updates that ran or failed
		{change, eventMissing, change},
		{eventMissing, fresh},
		{eventMissing, nothing},
		{eventMissing, eventMissing, change},
		{eventMissing, fnError, change},
		{eventMissing, panics, nothing, change},
		{change, eventMissing, nothing, eventMissing},
	} {
		var names []string
		for _, st := range steps {
			names = append(names, st.name)
		}
		t.Run(strings.Join(names, ", "), func(t *testing.T) {
			ctx := t.Context()
			// One connection, so that "a first statement" is one.
			u, err := url.Parse(pgtest.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("pool_max_conns", "1")
			u.RawQuery = q.Encode()
			s, err := Open(ctx, u.String())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()

			asks := make([]*askd.Ask, len(steps))
			at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			err = s.Update(ctx, func(tx askd.Tx) error {
				if err := tx.Tokens.CreateToken(ctx, &askd.Token{Name: "taken", Role: askd.RoleAgent, Hash: "0000", CreatedAt: at}); err != nil {
					return err
				}
				for i := range asks {
					asks[i] = &askd.Ask{Kind: askd.KindDecision, Session: fmt.Sprintf("s%d", i), Agent: "agent-1", Status: askd.StatusPending,
						Revision: 1, Title: "first", Options: []askd.Option{{Label: "yes"}, {Label: "no"}}, CreatedAt: at, UpdatedAt: at}
					if err := tx.Asks.CreateAsk(ctx, asks[i]); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}

			batch := make([]*groupcommit.Update, len(steps))
			for i, st := range steps {
				a := *asks[i]
				batch[i] = groupcommit.NewUpdate(ctx, func(tx askd.Tx) error { return st.fn(ctx, tx, &a) })
			}
			var results []groupcommit.Result
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Fatalf("runBatch panicked: %v", v)
					}
				}()
				s.runBatch(batch)
			}()
			for _, u := range batch {
				results = append(results, u.Wait())
			}

			// Each update's outcome is its own, and exactly the successful
			// ones' writes are kept.
			err = s.View(ctx, func(tx askd.Tx) error {
				events, err := tx.Events.EventsAfter(ctx, 0, 0)
				if err != nil {
					return err
				}
				evented := map[int64]bool{}
				for _, e := range events {
					evented[e.AskID] = true
				}
				for i, st := range steps {
					r := results[i]
					switch {
					case st.name == "a panic":
						if r.OK() {
							t.Errorf("update %d (%s): no panic passed on", i, st.name)
						}
					case st.want == "" && r.Err != nil:
						t.Errorf("update %d (%s): %v, want success", i, st.name, r.Err)
					case st.want != "" && (r.Err == nil || !strings.Contains(r.Err.Error(), st.want)):
						t.Errorf("update %d (%s): %v, want an error with %q", i, st.name, r.Err, st.want)
					}
					got, err := tx.Asks.Ask(ctx, asks[i].ID)
					if err != nil {
						return err
					}
					wantTitle := "first"
					if st.name == "change" || st.name == "a first statement" {
						wantTitle = "changed"
					}
					if got.Title != wantTitle || evented[got.ID] != (wantTitle == "changed") {
						t.Errorf("update %d (%s): ask %d title %q, has an event %v; want %q", i, st.name, got.ID, got.Title, evented[got.ID], wantTitle)
					}
				}
				if len(events) > len(steps) {
					t.Errorf("%d events, more than the %d updates", len(events), len(steps))
				}
				toks, err := tx.Tokens.Tokens(ctx)
				if err != nil {
					return err
				}
				if len(toks) != 1 {
					t.Errorf("%d tokens, want the one made first", len(toks))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}

			// The connection went back to the pool clean: the next update runs.
			if err := s.Update(ctx, func(tx askd.Tx) error { return change.fn(ctx, tx, asks[0]) }); err != nil {
				t.Errorf("an update after the batch: %v", err)
			}
		})
	}
}
