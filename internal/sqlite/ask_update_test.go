package sqlite

import (
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// namedColumns has SQLite say which of asks' columns each UPDATE names: an
// AFTER UPDATE OF trigger per column fires only when its column is in the SET
// list, changed or not, as an index is rewritten. It returns a function that
// reads and clears what they logged.
func namedColumns(t *testing.T, s *Store) func() []string {
	t.Helper()
	writeSQL(t, s, "CREATE TABLE test_named (col TEXT)")
	for _, col := range askFields {
		writeSQL(t, s, "CREATE TRIGGER test_named_"+col+" AFTER UPDATE OF "+col+
			" ON asks BEGIN INSERT INTO test_named VALUES ('"+col+"'); END")
	}
	return func() []string {
		t.Helper()
		var cols []string
		err := s.View(t.Context(), func(tx askd.Tx) error {
			rows, err := txOf(tx).tx.QueryContext(t.Context(), "SELECT col FROM test_named ORDER BY rowid")
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var c string
				if err := rows.Scan(&c); err != nil {
					return err
				}
				cols = append(cols, c)
			}
			return rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		writeSQL(t, s, "DELETE FROM test_named")
		return cols
	}
}

func TestUpdateAskNamesOnlyChangedColumns(t *testing.T) {
	ctx := t.Context()
	s := openTest(t)
	named := namedColumns(t, s)
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	a := &askd.Ask{Kind: askd.KindApproval, Session: "s1", Agent: "a", Status: askd.StatusPending, Revision: 1,
		Title: "Deploy?", Payload: []byte(`{"env":"prod"}`), ToolName: "Bash", CreatedAt: now, UpdatedAt: now}
	if err := s.Update(ctx, func(tx askd.Tx) error { return tx.Asks.CreateAsk(ctx, a) }); err != nil {
		t.Fatal(err)
	}
	update := func(change func(a *askd.Ask)) *askd.Ask {
		t.Helper()
		var out *askd.Ask
		err := s.Update(ctx, func(tx askd.Tx) error {
			got, err := tx.Asks.Ask(ctx, a.ID)
			if err != nil {
				return err
			}
			change(got)
			out = got
			return tx.Asks.UpdateAsk(ctx, got)
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	check := func(what string, want *askd.Ask, cols ...string) {
		t.Helper()
		names := named()
		slices.Sort(names) // SQLite fires the triggers in an order of its own
		cols = slices.Sorted(slices.Values(cols))
		if !slices.Equal(names, cols) {
			t.Errorf("%s: the UPDATE named %v, want %v", what, names, cols)
		}
		got, err := s.ReadAsk(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, got, want) {
			t.Errorf("%s: stored %+v, want %+v", what, got, want)
		}
	}

	// An answer names what it changes, and leaves out the indexed columns it
	// does not (tool_use_id, gate_key, owner, ...).
	settled := now.Add(time.Minute)
	want := update(func(a *askd.Ask) {
		a.Settle(askd.StatusAnswered, "", &askd.Answer{Decision: askd.DecisionApproved, Comment: "ok"}, "pat", settled)
		a.UpdatedAt = settled
	})
	check("answer", want, "status", "updated_at", "settled_at", "settled_by", "answer")

	// A told mark names two columns, none of them indexed for a settled ask.
	want = update(func(a *askd.Ask) { a.ToldAt, a.UpdatedAt = &settled, settled.Add(time.Millisecond) })
	check("told", want, "updated_at", "told_at")

	// A change deep inside a value read (the answer's comment, in place) is a
	// change of its column.
	want = update(func(a *askd.Ask) { a.Answer.Comment = "ok, go" })
	check("answer edited in place", want, "answer")

	// Nothing changed: no UPDATE at all.
	want = update(func(*askd.Ask) {})
	check("no change", want)

	// Two updates of the one ask in a transaction: the second is compared with
	// what the first wrote.
	err := s.Update(ctx, func(tx askd.Tx) error {
		got, err := tx.Asks.Ask(ctx, a.ID)
		if err != nil {
			return err
		}
		got.Title = "Deploy now?"
		if err := tx.Asks.UpdateAsk(ctx, got); err != nil {
			return err
		}
		got.Details = "to prod"
		want = got
		return tx.Asks.UpdateAsk(ctx, got)
	})
	if err != nil {
		t.Fatal(err)
	}
	check("two updates", want, "title", "details")

	// An ask written without being read in the transaction: every column.
	err = s.Update(ctx, func(tx askd.Tx) error {
		cp := *want
		cp.Details = "to staging"
		want = &cp
		return tx.Asks.UpdateAsk(ctx, &cp)
	})
	if err != nil {
		t.Fatal(err)
	}
	check("not read first", want, askFields...)
}

// sameJSON reports whether a and b marshal to the same JSON: every field of
// an ask, times compared as stored.
func sameJSON(t *testing.T, a, b *askd.Ask) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

func TestWriterTakesAFreshConnectionAfterLosingOne(t *testing.T) {
	// What the writer does when database/sql reports its connection gone
	// (driver.ErrBadConn, sql.ErrConnDone) in the middle of a transaction:
	// it rolls back, lets the connection go, and the next write takes one
	// from the pool again.
	ctx := t.Context()
	s := openTest(t)
	lost := &askd.Ask{Kind: askd.KindReady, Session: "s1", Agent: "a", Status: askd.StatusPending, Revision: 1, Title: "lost"}
	err := s.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Asks.CreateAsk(ctx, lost); err != nil {
			return err
		}
		s.writer.check(driver.ErrBadConn)
		// The rest of the transaction has no connection: a read fails,
		// rather than read outside the transaction, and so does a write.
		if _, err := tx.Asks.Ask(ctx, lost.ID); !errors.Is(err, sql.ErrConnDone) {
			t.Errorf("a read after the connection went: %v, want %v", err, sql.ErrConnDone)
		}
		return tx.Asks.UpdateAsk(ctx, lost)
	})
	if !errors.Is(err, errWriterGone) {
		t.Fatalf("a write after the connection went: %v, want %v", err, errWriterGone)
	}
	kept := &askd.Ask{Kind: askd.KindReady, Session: "s1", Agent: "a", Status: askd.StatusPending, Revision: 1, Title: "kept"}
	if err := s.Update(ctx, func(tx askd.Tx) error { return tx.Asks.CreateAsk(ctx, kept) }); err != nil {
		t.Fatalf("the next write: %v", err)
	}
	var titles []string
	err = s.View(ctx, func(tx askd.Tx) error {
		asks, err := tx.Asks.FindAsks(ctx, askd.AskFilter{Agent: "a"})
		for _, a := range asks {
			titles = append(titles, a.Title)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(titles, []string{"kept"}) {
		t.Errorf("stored asks %q, want only the one written after (the other rolled back)", titles)
	}
}
