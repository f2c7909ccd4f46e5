package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/pgtest"
)

// chainOf reads the whole chain of s and fails unless it verifies.
func chainOf(t *testing.T, s askd.Store) []askd.AuditRow {
	t.Helper()
	var rows []askd.AuditRow
	err := s.View(t.Context(), func(tx askd.Tx) (err error) {
		rows, err = tx.Audit.AuditRows(t.Context(), 0, time.Time{}, time.Time{}, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if b := askd.VerifyAudit(rows, false); b != nil {
		t.Fatalf("chain of %d rows: %v", len(rows), b)
	}
	return rows
}

// TestAuditConcurrentWriters: many goroutines on two stores (two askd
// processes) creating and answering asks at once still form one chain.
func TestAuditConcurrentWriters(t *testing.T) {
	url := pgtest.URL(t)
	stores := []askd.Store{open(t, url), open(t, url)}
	const writers, perWriter = 16, 15
	var wg sync.WaitGroup
	for w := range writers {
		s := stores[w%len(stores)]
		wg.Go(func() {
			for range perWriter {
				a, _, err := addAsk(s, "s")
				if err != nil {
					t.Error(err)
					return
				}
				err = s.Update(context.Background(), func(tx askd.Tx) error {
					a.Settle(askd.StatusAnswered, "", &askd.Answer{}, "reviewer", time.Now())
					if err := tx.Asks.UpdateAsk(context.Background(), a); err != nil {
						return err
					}
					return tx.Events.AddEvent(context.Background(), &askd.Event{AskID: a.ID, Session: "s", Action: askd.ActionAnswered, Actor: "reviewer", At: time.Now()})
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if rows := chainOf(t, stores[0]); len(rows) != 2*writers*perWriter {
		t.Errorf("%d rows, want %d", len(rows), 2*writers*perWriter)
	}
}

// TestAuditRowOfAnOlderBuild: a row inserted as an askd from before the
// audit trail would (no hash, by plain SQL) is chained by the database.
func TestAuditRowOfAnOlderBuild(t *testing.T) {
	ctx := t.Context()
	url := pgtest.URL(t)
	s := open(t, url)
	a, _ := createWithEvent(t, s, "s")
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `INSERT INTO events (ask_id, session, action, actor, at, note) VALUES ($1, 's', 'snoozed', 'alice', now(), 'old build')`, a.ID); err != nil {
		t.Fatal(err)
	}
	createWithEvent(t, s, "s")
	if rows := chainOf(t, s); len(rows) != 3 || rows[1].Note != "old build" {
		t.Errorf("rows = %+v, want three, the old build's second", rows)
	}
}

// TestMigrateAudit: history from before the audit trail (migrations
// 001–014 applied) is chained by the migration, from its first row, as
// askd.AuditHash computes it.
func TestMigrateAudit(t *testing.T) {
	url := oldDatabase(t, "015",
		`INSERT INTO asks (kind, session, agent, status, title, created_at, updated_at) VALUES ('ready', 's', 'ci', 'pending', 'Review', now(), now())`,
		`INSERT INTO events (ask_id, session, action, actor, at, note) SELECT id, 's', 'created', 'ci', '2026-01-02T03:04:05.123456Z', 'é' FROM asks`,
		`INSERT INTO events (ask_id, session, action, actor, at, note) SELECT id, 's', 'snoozed', 'alice', '1999-12-31T23:59:59.999999Z', '' FROM asks`)
	s := open(t, url)
	createWithEvent(t, s, "s")
	rows := chainOf(t, s)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
	if want := askd.AuditHash("", rows[0].AskID, "s", "created", "ci", at, "é"); rows[0].Hash != want {
		t.Errorf("first row's hash = %s, want %s", rows[0].Hash, want)
	}
}

// TestAuditTamper: an edit, a deletion and a swap of history rows, each in
// a database of its own, are named by verify at the row they break.
func TestAuditTamper(t *testing.T) {
	tests := []struct {
		name string
		sql  string
		at   int // index of the row verify must name
	}{
		{"an edited row", `UPDATE events SET note = 'edited' WHERE id = $1`, 1},
		{"a deleted row", `DELETE FROM events WHERE id = $1`, 2},
		{"two rows swapped", `UPDATE events e SET ask_id = o.ask_id, session = o.session, action = o.action, actor = o.actor, at = o.at, note = o.note, hash = o.hash
			FROM events o WHERE (e.id, o.id) IN (($1::bigint, $1::bigint + 1), ($1::bigint + 1, $1::bigint))`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			url := pgtest.URL(t)
			s := open(t, url)
			for range 2 {
				createWithEvent(t, s, "s1")
				createWithEvent(t, s, "s2")
			}
			rows := chainOf(t, s)
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(ctx, tt.sql, rows[1].ID); err != nil {
				t.Fatal(err)
			}
			var got []askd.AuditRow
			err = s.View(ctx, func(tx askd.Tx) (err error) {
				got, err = tx.Audit.AuditRows(ctx, 0, time.Time{}, time.Time{}, 0)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if b := askd.VerifyAudit(got, false); b == nil || b.ID != rows[tt.at].ID {
				t.Errorf("break %v, want at row %d", b, rows[tt.at].ID)
			}
		})
	}
}
