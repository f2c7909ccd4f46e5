package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// auditRows reads the whole chain.
func auditRows(t *testing.T, s askd.Store) []askd.AuditRow {
	t.Helper()
	var rows []askd.AuditRow
	view(t, s, func(tx askd.Tx) error {
		var err error
		rows, err = tx.Audit.AuditRows(t.Context(), 0, time.Time{}, time.Time{}, 0)
		return err
	})
	return rows
}

// mustVerify fails the test unless the store's chain verifies.
func mustVerify(t *testing.T, s askd.Store) []askd.AuditRow {
	t.Helper()
	rows := auditRows(t, s)
	if b := askd.VerifyAudit(rows, false); b != nil {
		t.Fatalf("chain of %d rows does not verify: %v", len(rows), b)
	}
	return rows
}

func testAuditChain(t *testing.T, s askd.Store) {
	ctx := t.Context()
	a, _, _, _ := eventFixture(t, s)
	rec := watch(s)
	cfg := &askd.Event{Action: askd.ConfigTokenCreated, Actor: "cli:operator", At: at(2 * time.Minute),
		Note: askd.ConfigNote(map[string]any{"name": "bot", "role": "agent"})}
	update(t, s, func(tx askd.Tx) error { return tx.Audit.AddConfigEvent(ctx, cfg) })
	if cfg.ID == 0 {
		t.Fatal("AddConfigEvent left the id 0")
	}
	rows := mustVerify(t, s)
	if len(rows) != 4 {
		t.Fatalf("chain has %d rows, want 4 (three events and a config row)", len(rows))
	}
	last := rows[3]
	if last.ID != cfg.ID || last.AskID != 0 || last.Action != askd.ConfigTokenCreated || last.Actor != "cli:operator" || last.Note != cfg.Note {
		t.Errorf("config row = %+v, want %+v", last, cfg)
	}
	if want := askd.AuditHash(rows[2].Hash, 0, "", cfg.Action, cfg.Actor, cfg.At, cfg.Note); last.Hash != want {
		t.Errorf("config row hash = %s, want %s", last.Hash, want)
	}
	t.Run("watchers hear no config row", func(t *testing.T) {
		var e *askd.Event
		update(t, s, func(tx askd.Tx) (err error) {
			e, err = addEvent(t, tx, a, askd.ActionSnoozed)
			return err
		})
		// Once the event after the config row is heard, the config row
		// would have been: it was never told. (A store may still be
		// telling of the fixture's events.)
		for n := 1; ; n++ {
			got := rec.wait(t, n)
			if got[n-1].EventID == cfg.ID {
				t.Errorf("watchers heard the config row %d", cfg.ID)
			}
			if got[n-1].EventID == e.ID {
				break
			}
		}
	})
	t.Run("config rows are no ask's events", func(t *testing.T) {
		view(t, s, func(tx askd.Tx) error {
			events, err := tx.Events.EventsAfter(ctx, 0, 0)
			if err != nil {
				return err
			}
			for _, e := range events {
				if e.ID == cfg.ID {
					t.Errorf("EventsAfter gives the config row %d", e.ID)
				}
			}
			return nil
		})
	})
	t.Run("time window", func(t *testing.T) {
		var got []askd.AuditRow
		view(t, s, func(tx askd.Tx) error {
			var err error
			got, err = tx.Audit.AuditRows(ctx, 0, at(time.Second), at(2*time.Minute), 0)
			return err
		})
		if len(got) != 3 {
			t.Errorf("rows from 1s to 2m = %d, want 3 (b created, a answered, a snoozed)", len(got))
		}
	})
	t.Run("tampered", func(t *testing.T) {
		edited := append([]askd.AuditRow(nil), rows...)
		edited[1].Note = "edited"
		if b := askd.VerifyAudit(edited, false); b == nil || b.ID != rows[1].ID {
			t.Errorf("an edited row: break %v, want at row %d", b, rows[1].ID)
		}
		deleted := append(append([]askd.AuditRow(nil), rows[:1]...), rows[2:]...)
		if b := askd.VerifyAudit(deleted, false); b == nil || b.ID != rows[2].ID {
			t.Errorf("a deleted row: break %v, want at row %d", b, rows[2].ID)
		}
	})
}

func testAuditPurge(t *testing.T, s askd.Store) {
	ctx := t.Context()
	// Old settled asks around one that stays pending: the purge removes
	// rows from the middle of the chain.
	var asks []*askd.Ask
	for i := range 5 {
		a := newAsk(askd.KindQuestion, "s1", at(time.Duration(i)*time.Second))
		update(t, s, func(tx askd.Tx) error {
			if err := tx.Asks.CreateAsk(ctx, a); err != nil {
				return err
			}
			_, err := addEvent(t, tx, a, askd.ActionCreated)
			return err
		})
		asks = append(asks, a)
	}
	for i, a := range asks {
		if i == 2 {
			continue
		}
		update(t, s, func(tx askd.Tx) error {
			a.Settle(askd.StatusAnswered, "", &askd.Answer{}, "reviewer", at(time.Minute))
			if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
				return err
			}
			_, err := addEvent(t, tx, a, askd.ActionAnswered)
			return err
		})
	}
	before := mustVerify(t, s)
	var n int
	update(t, s, func(tx askd.Tx) error {
		if err := recordRetain(t, tx, purgeBefore(at(2*time.Minute))); err != nil {
			return err
		}
		var err error
		n, err = tx.Asks.DeleteAsks(ctx, purgeBefore(at(2*time.Minute)), 1000)
		return err
	})
	if n != 4 {
		t.Fatalf("DeleteAsks = %d, want 4", n)
	}
	after := mustVerify(t, s)
	// Every row is still in the chain, in its place: the purged asks' rows
	// without their content, with its body; then the retention and the
	// purge's records.
	if len(after) != len(before)+3 {
		t.Fatalf("after the purge: %d rows, want the %d before, a retention and two records", len(after), len(before))
	}
	for i, r := range before {
		got := after[i]
		if r.AskID == asks[2].ID {
			if got != r {
				t.Errorf("row %d of the pending ask = %+v, want it whole: %+v", r.ID, got, r)
			}
			continue
		}
		want := askd.AuditRow{ID: r.ID, AskID: r.AskID, Action: r.Action, At: r.At, Hash: r.Hash, Purged: true,
			Body: askd.AuditBody(r.Session, r.Actor, r.Note)}
		if got != want {
			t.Errorf("purged row %d = %+v, want %+v", r.ID, got, want)
		}
	}
	var purged []askd.PurgeNote
	for _, r := range after[len(before):] {
		if r.Action == askd.ActionPurged {
			var p askd.PurgeNote
			if err := json.Unmarshal([]byte(r.Note), &p); err != nil {
				t.Fatalf("purged row %d: note %q: %v", r.ID, r.Note, err)
			}
			purged = append(purged, p)
		}
	}
	// Left whole: ask 3's created (the third row); purged: rows 1-2 and
	// 4-9.
	cut := purgeBefore(at(2 * time.Minute))
	if len(purged) != 2 || purged[0].After != 0 || purged[0].Rows != 2 || purged[1].After != before[2].ID || purged[1].Rows != len(before)-3 ||
		!purged[0].SettledBefore.Equal(stored(cut.SettledBefore)) || purged[0].Retain != cut.Retain.String() {
		t.Errorf("purge records = %+v, want two runs: 2 rows from the start, %d after row %d, before %s under %s",
			purged, len(before)-3, before[2].ID, cut.SettledBefore, cut.Retain)
	}
	// A second purge with nothing to remove leaves nothing, and new rows
	// still chain.
	update(t, s, func(tx askd.Tx) error {
		_, err := tx.Asks.DeleteAsks(ctx, purgeBefore(at(2*time.Minute)), 1000)
		return err
	})
	update(t, s, func(tx askd.Tx) error {
		_, err := addEvent(t, tx, asks[2], askd.ActionSnoozed)
		return err
	})
	if got := mustVerify(t, s); len(got) != len(after)+1 {
		t.Errorf("after an empty purge and one event: %d rows, want %d", len(got), len(after)+1)
	}
	view(t, s, func(tx askd.Tx) error {
		n, err := tx.Audit.CountAudit(ctx, time.Time{}, time.Time{})
		if err == nil && n != len(after)+1 {
			t.Errorf("CountAudit = %d, want %d (purged rows too)", n, len(after)+1)
		}
		return err
	})
}

// recordRetain records the retention p purges with, as askd does before
// each purge (app.Service.Purge): verify holds a purge to it.
func recordRetain(t *testing.T, tx askd.Tx, p askd.Purge) error {
	t.Helper()
	return tx.Audit.AddConfigEvent(t.Context(), &askd.Event{Action: askd.ConfigRetain, Actor: "askd", At: p.At,
		Note: askd.ConfigNote(map[string]any{"retain": p.Retain.String()})})
}

func testLastConfigEvent(t *testing.T, s askd.Store) {
	ctx := t.Context()
	view(t, s, func(tx askd.Tx) error {
		_, err := tx.Audit.LastConfigEvent(ctx, askd.ConfigRetain)
		if askd.ErrorCode(err) != askd.ENOTFOUND {
			t.Errorf("LastConfigEvent with none = %v, want ENOTFOUND", err)
		}
		return nil
	})
	var last *askd.Event
	for i, d := range []string{"24h0m0s", "1h0m0s"} {
		e := &askd.Event{Action: askd.ConfigRetain, Actor: "askd", At: at(time.Duration(i) * time.Minute), Note: askd.ConfigNote(map[string]any{"retain": d})}
		update(t, s, func(tx askd.Tx) error {
			if err := tx.Audit.AddConfigEvent(ctx, e); err != nil {
				return err
			}
			return tx.Audit.AddConfigEvent(ctx, &askd.Event{Action: askd.ConfigTokenCreated, Actor: "askd", At: e.At, Note: "{}"})
		})
		last = e
	}
	view(t, s, func(tx askd.Tx) error {
		got, err := tx.Audit.LastConfigEvent(ctx, askd.ConfigRetain)
		if err != nil {
			return err
		}
		if got.ID != last.ID || got.Note != last.Note || got.AskID != 0 || !got.At.Equal(stored(last.At)) {
			t.Errorf("LastConfigEvent = %+v, want %+v", got, last)
		}
		return nil
	})
}

// testAuditPurgeInBatches: a purge removes at most the limit's asks a
// call, those settled first first, whatever order they were made in, and
// the chain verifies after each call: each records the runs of rows it
// purged among those the history still held whole. A limit below 1 is
// refused and changes nothing.
func testAuditPurgeInBatches(t *testing.T, s askd.Store) {
	ctx := t.Context()
	// Seven asks made one after another, a pending one among them; settled
	// in the reverse order, so that the oldest settled are the newest made
	// and their rows sit after the others' created rows.
	var asks []*askd.Ask
	for i := range 8 {
		a := newAsk(askd.KindQuestion, "s1", at(time.Duration(i)*time.Second))
		update(t, s, func(tx askd.Tx) error {
			if err := tx.Asks.CreateAsk(ctx, a); err != nil {
				return err
			}
			_, err := addEvent(t, tx, a, askd.ActionCreated)
			return err
		})
		asks = append(asks, a)
	}
	pending := asks[3]
	for i := len(asks) - 1; i >= 0; i-- {
		if a := asks[i]; a != pending {
			update(t, s, func(tx askd.Tx) error {
				a.Settle(askd.StatusAnswered, "", &askd.Answer{}, "reviewer", at(time.Minute+time.Duration(len(asks)-i)*time.Second))
				if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
					return err
				}
				_, err := addEvent(t, tx, a, askd.ActionAnswered)
				return err
			})
		}
	}
	cut := purgeBefore(at(time.Hour))
	before := mustVerify(t, s)
	for _, limit := range []int{0, -1} {
		err := s.Update(ctx, func(tx askd.Tx) error {
			_, err := tx.Asks.DeleteAsks(ctx, cut, limit)
			return err
		})
		if askd.ErrorCode(err) != askd.EINVALID {
			t.Errorf("DeleteAsks with limit %d: %v, want EINVALID", limit, err)
		}
	}
	if got := auditRows(t, s); len(got) != len(before) {
		t.Fatalf("a refused purge changed the chain: %d rows, want %d", len(got), len(before))
	}
	update(t, s, func(tx askd.Tx) error { return recordRetain(t, tx, cut) })
	left := []*askd.Ask{asks[7], asks[6], asks[5], asks[4], asks[2], asks[1], asks[0]} // oldest settled first
	for _, want := range []int{2, 2, 2, 1, 0} {
		seen := len(auditRows(t, s))
		var n int
		update(t, s, func(tx askd.Tx) (err error) {
			n, err = tx.Asks.DeleteAsks(ctx, cut, 2)
			return err
		})
		if n != want {
			t.Fatalf("DeleteAsks(limit 2) = %d, want %d", n, want)
		}
		gone := left[:n]
		left = left[n:]
		rows := mustVerify(t, s)
		view(t, s, func(tx askd.Tx) error {
			for _, a := range gone {
				if _, err := tx.Asks.Ask(ctx, a.ID); askd.ErrorCode(err) != askd.ENOTFOUND {
					t.Errorf("ask %d (settled %s) still there after its batch: %v", a.ID, a.SettledAt, err)
				}
			}
			for _, a := range append(left, pending) {
				if _, err := tx.Asks.Ask(ctx, a.ID); err != nil {
					t.Errorf("ask %d purged before its turn: %v", a.ID, err)
				}
			}
			return nil
		})
		// The records this batch added count its rows: two per ask.
		recorded := 0
		for _, r := range rows[seen:] {
			var p askd.PurgeNote
			if r.Action != askd.ActionPurged || json.Unmarshal([]byte(r.Note), &p) != nil {
				t.Fatalf("row %d added by a purge: %+v, want a purge's record", r.ID, r)
			}
			recorded += p.Rows
		}
		if recorded != 2*n {
			t.Errorf("a batch of %d asks recorded %d rows purged, want %d", n, recorded, 2*n)
		}
	}
	// All the rows are still in the chain, each ask's purged or whole.
	rows := mustVerify(t, s)
	for _, r := range rows[:len(before)] {
		if r.Purged != (r.AskID != pending.ID) {
			t.Errorf("row %d of ask %d: purged %v", r.ID, r.AskID, r.Purged)
		}
	}
}
