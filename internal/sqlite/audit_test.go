package sqlite

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// The writer's hint of the audit chain's head (see chain) is never trusted:
// the chain verifies after updates rolled back whole, updates undone inside
// a shared batch, and another store on the same file (another process)
// writing rows in between.
func TestAuditHeadHint(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "askd.db")
	s, other := openAt(t, path), openAt(t, path)
	errUndo := errors.New("undone")
	add := func(s *Store, action string, fail bool) error {
		return s.Update(ctx, func(tx askd.Tx) error {
			e := &askd.Event{Action: action, Actor: "test", At: time.Now()}
			if err := tx.Audit.AddConfigEvent(ctx, e); err != nil {
				return err
			}
			if fail {
				return errUndo
			}
			return nil
		})
	}
	if err := add(s, "first", false); err != nil {
		t.Fatal(err)
	}
	if err := add(s, "rolled back", true); !errors.Is(err, errUndo) {
		t.Fatalf("failing update: %v", err)
	}
	if err := add(s, "after a rollback", false); err != nil {
		t.Fatal(err)
	}
	if err := add(other, "by another store", false); err != nil {
		t.Fatal(err)
	}
	if err := add(s, "after another store", false); err != nil {
		t.Fatal(err)
	}
	// Concurrent updates share batches, in which the failing ones are
	// rolled back to their savepoints.
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			if err := add(s, "batched", i%3 == 0); err != nil && !errors.Is(err, errUndo) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if err := add(s, "last", false); err != nil {
		t.Fatal(err)
	}
	var rows []askd.AuditRow
	err := s.View(ctx, func(tx askd.Tx) (err error) {
		rows, err = tx.Audit.AuditRows(ctx, 0, time.Time{}, time.Time{}, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := 4 + 26 + 1; len(rows) != want { // i%3 == 0 fails 14 of the 40
		t.Errorf("%d rows, want %d", len(rows), want)
	}
	if b := askd.VerifyAudit(rows, false); b != nil {
		t.Errorf("chain does not verify: %v", b)
	}
}
