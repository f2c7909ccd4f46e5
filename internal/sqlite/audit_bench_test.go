package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// BenchmarkAuditVerify100k reads a chain of 100,000 history rows from a
// SQLite file and verifies it, as askd audit verify --db does.
func BenchmarkAuditVerify100k(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "askd.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const n = 100_000
	err = s.Update(ctx, func(tx askd.Tx) error {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range n / 4 {
			a := &askd.Ask{Kind: askd.KindQuestion, Session: "s", Agent: "bot", Status: askd.StatusPending, Revision: 1, Title: "Proceed?", CreatedAt: now, UpdatedAt: now}
			if err := tx.Asks.CreateAsk(ctx, a); err != nil {
				return err
			}
			for _, action := range []string{askd.ActionCreated, askd.ActionSnoozed, askd.ActionClaimed, askd.ActionAnswered} {
				at := now.Add(time.Duration(i) * time.Second)
				if err := tx.Events.AddEvent(ctx, &askd.Event{AskID: a.ID, Session: "s", Action: action, Actor: "reviewer", At: at, Note: "from the inbox", Ask: a}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		var rows []askd.AuditRow
		err := s.View(ctx, func(tx askd.Tx) (err error) {
			rows, err = tx.Audit.AuditRows(ctx, 0, time.Time{}, time.Time{}, 0)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if len(rows) != n {
			b.Fatalf("%d rows, want %d", len(rows), n)
		}
		if br := askd.VerifyAudit(rows, false); br != nil {
			b.Fatal(br)
		}
	}
}
