package sqlite

import (
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// TestMigrateAudit: a database from before the audit trail (migrations
// 001–013 applied) with history, some of it purged at the end, has its rows
// chained once opened, keeps its ids' high-water mark, and goes on chaining.
func TestMigrateAudit(t *testing.T) {
	path := oldDatabase(t, "014",
		`INSERT INTO asks (kind, session, agent, status, title, created_at, updated_at) VALUES ('ready', 's', 'ci', 'pending', 'Review', 30, 30)`,
		`INSERT INTO events (ask_id, session, action, actor, at, note) VALUES (1, 's', 'created', 'ci', 30, ''), (1, 's', 'snoozed', 'alice', 40, 'later'), (1, 's', 'snoozed', 'alice', 50, '')`,
		`DELETE FROM events WHERE id = 3`)

	ctx := t.Context()
	s := openAt(t, path)
	var rows []askd.AuditRow
	err := s.Update(ctx, func(tx askd.Tx) error {
		e := &askd.Event{AskID: 1, Session: "s", Action: askd.ActionSnoozed, Actor: "alice", At: time.UnixMicro(60)}
		if err := tx.Events.AddEvent(ctx, e); err != nil {
			return err
		}
		if e.ID != 4 {
			t.Errorf("the first event after the migration has id %d, want 4 (3 was used)", e.ID)
		}
		var err error
		rows, err = tx.Audit.AuditRows(ctx, 0, time.Time{}, time.Time{}, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	if want := askd.AuditHash("", 1, "s", "created", "ci", time.UnixMicro(30), ""); rows[0].Hash != want {
		t.Errorf("first row's hash = %q, want %q (chained from the start)", rows[0].Hash, want)
	}
	if b := askd.VerifyAudit(rows, false); b != nil {
		t.Errorf("migrated chain: %v", b)
	}
}
