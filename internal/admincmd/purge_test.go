package admincmd

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/openstore"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
)

// TestAuditVerifyAfterBatchedPurge: a --retain purge of more asks than one
// of its transactions takes, while an agent asks and a person answers,
// removes every old settled ask and nothing else, loses no answer, and
// leaves a chain that askd audit verify (the binary) passes, on the
// database and on its export, on both stores: every row still in it, the
// old asks' purged, each counted by a purge's record.
func TestAuditVerifyAfterBatchedPurge(t *testing.T) {
	for _, tc := range []struct {
		name string
		db   func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return filepath.Join(t.TempDir(), "askd.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.URL(t) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.db(t)
			purged, live := batchedPurge(t, db)
			out, errOut, code := testserver.Run(t, "audit", "verify", "--db", db)
			if code != 0 {
				t.Fatalf("verify after a batched purge: exit %d, %q %q", code, out, errOut)
			}
			// The old asks' rows (created, answered), the pending one's,
			// the live cycles', the retention and the purge's records.
			rows := auditRowsOf(t, db)
			if want := fmt.Sprintf("%d rows verified", len(rows)); !strings.Contains(out, want) {
				t.Errorf("verify: %q, want %q", out, want)
			}
			var purgedRows, recorded, records int
			for _, r := range rows {
				if r.Purged {
					purgedRows++
				}
				var p askd.PurgeNote
				if r.Action == askd.ActionPurged && json.Unmarshal([]byte(r.Note), &p) == nil {
					recorded += p.Rows
					records++
				}
			}
			if purgedRows != 2*purged || recorded != purgedRows || records < 3 {
				t.Errorf("%d rows purged, %d counted by %d records; want %d, all counted, by a record or more a batch",
					purgedRows, recorded, records, 2*purged)
			}
			if len(rows) < 2*purged+2+2*live {
				t.Errorf("%d rows in the chain, want at least %d", len(rows), 2*purged+2+2*live)
			}
			export := filepath.Join(t.TempDir(), "audit.jsonl")
			if _, errOut, code := testserver.Run(t, "audit", "export", "--out", export, "--db", db); code != 0 {
				t.Fatalf("export: exit %d: %s", code, errOut)
			}
			if out, errOut, code := testserver.Run(t, "audit", "verify", export); code != 0 || !strings.Contains(out, fmt.Sprintf("%d rows verified", len(rows))) {
				t.Fatalf("verify the export: exit %d, %q %q", code, out, errOut)
			}
		})
	}
}

// batchedPurge fills db with 250 settled asks and one pending, two days
// old, and purges them under a retention of a day while an agent asks and
// a person answers, until the purge is over: it returns how many asks the
// purge removed and how many the agent made meanwhile.
func batchedPurge(t *testing.T, db string) (purged, live int) {
	ctx := t.Context()
	st, err := openstore.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	svc := app.New(st, app.Config{Retain: 24 * time.Hour, Now: clock})
	agent := askd.Caller{Name: "agent", Role: askd.RoleAgent, Session: "old"}
	person := askd.Caller{Name: "alice", Role: askd.RoleHuman, Access: askd.AccessAdmin}
	cycle := func(c askd.Caller, i int) (*askd.Ask, error) {
		a, err := svc.Create(ctx, c, &askd.AskInput{Kind: askd.KindReady, Title: fmt.Sprint("ask ", i)}, app.CreateOptions{})
		if err != nil {
			return nil, err
		}
		return svc.Answer(ctx, person, a.ID, &askd.Answer{Answer: "ok"})
	}
	const old = 250 // five batches
	for i := range old {
		if _, err := cycle(agent, i); err != nil {
			t.Fatal(err)
		}
		if i == old/2 {
			if _, err := svc.Create(ctx, askd.Caller{Name: "agent", Role: askd.RoleAgent, Session: "waiting"},
				&askd.AskInput{Kind: askd.KindReady, Title: "still open"}, app.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mu.Lock()
	now = now.Add(48 * time.Hour)
	mu.Unlock()
	done := make(chan struct{})
	var over atomic.Bool // the purge has returned
	var (
		answered []*askd.Ask
		liveErr  error
	)
	go func() {
		defer close(done)
		// At least a few cycles, whenever the purge ends.
		for i := 0; ; i++ {
			a, err := cycle(askd.Caller{Name: "agent", Role: askd.RoleAgent, Session: "live"}, i)
			if err != nil {
				liveErr = err
				return
			}
			answered = append(answered, a)
			if i >= 5 && over.Load() {
				return
			}
		}
	}()
	n, err := svc.Purge(ctx)
	over.Store(true)
	<-done
	if err != nil || n != old {
		t.Fatalf("purge: %d asks, %v; want %d", n, err, old)
	}
	if liveErr != nil {
		t.Fatalf("an agent's ask during the purge: %v", liveErr)
	}
	// Nothing lost: every answer given during the purge is kept, as is the
	// pending ask.
	for _, a := range answered {
		got, err := svc.Get(ctx, person, a.ID)
		if err != nil || got.Status != askd.StatusAnswered {
			t.Errorf("ask %d answered during the purge: %v, %v", a.ID, got, err)
		}
	}
	open, err := svc.List(ctx, person, askd.AskFilter{Status: askd.StatusPending}, false)
	if err != nil || len(open) != 1 {
		t.Errorf("pending asks after the purge: %d (%v), want the one", len(open), err)
	}
	return n, len(answered)
}

// auditRowsOf reads db's whole chain.
func auditRowsOf(t *testing.T, db string) []askd.AuditRow {
	t.Helper()
	st, err := openstore.Existing(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rows []askd.AuditRow
	err = st.View(t.Context(), func(tx askd.Tx) (err error) {
		rows, err = tx.Audit.AuditRows(t.Context(), 0, time.Time{}, time.Time{}, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
