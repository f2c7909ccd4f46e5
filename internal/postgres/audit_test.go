package postgres_test

import (
	"context"
	"fmt"
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
// 001–014 applied) is chained by the migration, from its first row, in the
// chain's first version (askd.AuditHashV1); rows written since are of the
// second (askd.AuditHash).
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
	if want := askd.AuditHashV1("", rows[0].AskID, "s", "created", "ci", at, "é"); rows[0].Hash != want {
		t.Errorf("first row's hash = %s, want %s", rows[0].Hash, want)
	}
	r := rows[2]
	if want := askd.AuditHash(rows[1].Hash, r.AskID, r.Session, r.Action, r.Actor, r.At, r.Note); r.Hash != want {
		t.Errorf("new row's hash = %s, want %s", r.Hash, want)
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

// verifyStore reads the whole chain of s and returns verify's verdict.
func verifyStore(t *testing.T, s askd.Store) ([]askd.AuditRow, *askd.AuditBreak) {
	t.Helper()
	var rows []askd.AuditRow
	err := s.View(t.Context(), func(tx askd.Tx) (err error) {
		rows, err = tx.Audit.AuditRows(t.Context(), 0, time.Time{}, time.Time{}, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, askd.VerifyAudit(rows, false)
}

// TestAuditForgedPurge: the attack of a forger who can write the database
// but not recompute the chain. A change of configuration in the middle of
// the chain is deleted and a purge's record of the chain's first form is
// appended (chained by the trigger, or with its hash computed in either
// version of the content) to bridge the gap: verify names the row after
// the deleted one.
func TestAuditForgedPurge(t *testing.T) {
	for _, forge := range []string{"trigger", "second version", "first version"} {
		t.Run(forge, func(t *testing.T) {
			ctx := t.Context()
			url := pgtest.URL(t)
			s := open(t, url)
			createWithEvent(t, s, "s1")
			for _, action := range []string{askd.ConfigPolicy + ".created", askd.ConfigPolicy + ".revoked", askd.ConfigTokenCreated} {
				err := s.Update(ctx, func(tx askd.Tx) error {
					return tx.Audit.AddConfigEvent(ctx, &askd.Event{Action: action, Actor: "alice", At: time.Now(), Note: "{}"})
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			createWithEvent(t, s, "s2")
			rows := chainOf(t, s)
			gone, next, head := rows[2], rows[3], rows[len(rows)-1]
			note := fmt.Sprintf(`{"after":%d,"through":%d,"rows":1,"last_hash":%q}`, rows[1].ID, gone.ID, gone.Hash)
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(ctx, `DELETE FROM events WHERE id = $1`, gone.ID); err != nil {
				t.Fatal(err)
			}
			if forge == "trigger" {
				_, err = conn.Exec(ctx, `INSERT INTO events (ask_id, session, action, actor, at, note) VALUES (NULL, '', 'purged', 'askd', now(), $1)`, note)
			} else {
				at := time.Now().UTC().Truncate(time.Microsecond)
				hash := askd.AuditHash(head.Hash, 0, "", askd.ActionPurged, "askd", at, note)
				if forge == "first version" {
					hash = askd.AuditHashV1(head.Hash, 0, "", askd.ActionPurged, "askd", at, note)
				}
				_, err = conn.Exec(ctx, `
					ALTER TABLE events DISABLE TRIGGER events_chained;
					INSERT INTO events (ask_id, session, action, actor, at, note, hash) VALUES (NULL, '', 'purged', 'askd', '`+at.Format(time.RFC3339Nano)+`', '`+note+`', '`+hash+`');
					UPDATE audit_head SET hash = '`+hash+`';
					ALTER TABLE events ENABLE TRIGGER events_chained`)
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, b := verifyStore(t, s); b == nil || b.ID != next.ID {
				t.Errorf("break %v, want at row %d (after the deleted row %d)", b, next.ID, gone.ID)
			}
		})
	}
}

// TestAuditAcrossVersions: a database whose history was written in the
// chain's first version, with a purge of that time that removed rows and
// bridged them, is upgraded; new rows are of the second version, and a
// purge now keeps the rows of either version in the chain (the first
// version's whole, its hash covering them): the whole chain verifies.
func TestAuditAcrossVersions(t *testing.T) {
	ctx := t.Context()
	old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ask := func(status string) string {
		return `INSERT INTO asks (kind, session, agent, status, title, created_at, updated_at, settled_at) VALUES ('ready', 's', 'ci', '` + status + `', 'Review', '2026-01-01', '2026-01-01', ` +
			map[string]string{"pending": "NULL", "answered": "'2026-01-01'"}[status] + `)`
	}
	event := func(action string) string {
		return `INSERT INTO events (ask_id, session, action, actor, at, note) SELECT max(id), 's', '` + action + `', 'ci', '2026-01-01', '' FROM asks`
	}
	url := oldDatabase(t, "018",
		ask("answered"), event("created"), event("answered"), // 1, 2: purged by the old purge below
		ask("pending"), event("created"), // 3
		ask("answered"), event("created"), event("answered"), // 4, 5: purged after the upgrade
		// The first version's purge: the rows of ask 1 go, and a record
		// bridges them.
		`INSERT INTO events (ask_id, session, action, actor, at, note)
			SELECT NULL, '', 'purged', 'askd', '2026-01-02', json_build_object('after', 0, 'through', 2, 'rows', 2, 'last_hash', hash)::text FROM events WHERE id = 2`,
		`DELETE FROM asks WHERE id = 1`)
	s := open(t, url)
	a, _ := createWithEvent(t, s, "s")
	rows := chainOf(t, s)
	if len(rows) != 5 || rows[0].ID != 3 {
		t.Fatalf("rows = %+v, want rows 3-6 and the new one", rows)
	}
	purge := askd.Purge{SettledBefore: old.Add(time.Hour), At: time.Now().UTC().Truncate(time.Microsecond), Retain: time.Since(old) - time.Hour}
	purge.Retain = purge.At.Sub(purge.SettledBefore)
	err := s.Update(ctx, func(tx askd.Tx) error {
		if err := tx.Audit.AddConfigEvent(ctx, &askd.Event{Action: askd.ConfigRetain, Actor: "askd", At: purge.At, Note: askd.ConfigNote(map[string]any{"retain": purge.Retain.String()})}); err != nil {
			return err
		}
		n, err := tx.Asks.DeleteAsks(ctx, purge, 1000)
		if err == nil && n != 1 {
			t.Errorf("DeleteAsks = %d, want 1", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	update(t, s, a.ID, func(a *askd.Ask) { a.Title = "still here" })
	createWithEvent(t, s, "s")
	rows = chainOf(t, s)
	if r := rows[1]; r.ID != 4 || !r.Purged || r.Session != "s" || r.Actor != "ci" || r.Body != "" {
		t.Errorf("the first version's purged row = %+v, want it whole, purged", r)
	}
}
