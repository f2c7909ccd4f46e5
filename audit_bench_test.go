package askd

import (
	"testing"
	"time"
)

// BenchmarkVerifyAudit100k verifies a chain of 100,000 rows in memory: the
// hashing alone, without reading them.
func BenchmarkVerifyAudit100k(b *testing.B) {
	rows := make([]AuditRow, 100_000)
	prev := ""
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		r := &rows[i]
		*r = AuditRow{ID: int64(i + 1), AskID: int64(i/4 + 1), Session: "s", Action: ActionAnswered, Actor: "reviewer", At: at.Add(time.Duration(i) * time.Second), Note: "from the inbox"}
		r.Hash = r.hashAfter(prev)
		prev = r.Hash
	}
	for b.Loop() {
		if br := VerifyAudit(rows, false); br != nil {
			b.Fatal(br)
		}
	}
}
