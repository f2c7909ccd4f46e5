package askd

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// chainBuilder writes a chain in memory as a store would, in the second
// version: rows are hashed as they are added.
type chainBuilder struct {
	rows []AuditRow
	at   time.Time
}

func (c *chainBuilder) add(askID int64, action, actor, note string) *AuditRow {
	prev := ""
	if n := len(c.rows); n > 0 {
		prev = c.rows[n-1].Hash
	}
	c.at = c.at.Add(time.Minute)
	r := AuditRow{ID: int64(len(c.rows) + 1), AskID: askID, Session: "s", Action: action, Actor: actor, At: c.at, Note: note}
	if askID == 0 {
		r.Session = ""
	}
	r.Hash = r.hashAfter(prev)
	c.rows = append(c.rows, r)
	return &c.rows[len(c.rows)-1]
}

// purge purges the rows of asks as a store does: each keeps its place with
// its body, and one record per run follows, under retain at c's time.
func (c *chainBuilder) purge(retain time.Duration, asks ...int64) {
	c.add(0, ConfigRetain, "askd", fmt.Sprintf(`{"retain":%q}`, retain))
	// The history holds the rows no earlier purge purged: each row this
	// one purges follows the last of those.
	var (
		runs PurgeRuns
		prev int64
	)
	for _, r := range c.rows {
		now := r.AskID != 0 && slices.Contains(asks, r.AskID)
		if now {
			runs.Row(r.ID, prev)
		}
		if now || !r.Purged {
			prev = r.ID
		}
	}
	for _, a := range asks {
		purgeInPlace(c.rows, a)
	}
	at := c.at.Add(time.Minute)
	for _, e := range runs.Events(Purge{SettledBefore: at.Add(-retain), At: at, Retain: retain}) {
		c.add(0, e.Action, e.Actor, e.Note)
	}
}

// purgeInPlace purges the rows of ask in rows, as a forger who can write
// the database can: their hashes stay.
func purgeInPlace(rows []AuditRow, ask int64) []AuditRow {
	for i := range rows {
		if r := &rows[i]; r.AskID == ask {
			r.Body, r.Purged, r.Session, r.Actor, r.Note = AuditBody(r.Session, r.Actor, r.Note), true, "", "", ""
		}
	}
	return rows
}

// without is rows with those whose ids are given left out.
func without(rows []AuditRow, ids ...int64) []AuditRow {
	var out []AuditRow
	for _, r := range rows {
		keep := true
		for _, id := range ids {
			keep = keep && r.ID != id
		}
		if keep {
			out = append(out, r)
		}
	}
	return out
}

// appendRow chains a row with these fields after rows's last, in the
// first version's content when v1.
func appendRow(rows []AuditRow, r AuditRow, v1 bool) []AuditRow {
	last := rows[len(rows)-1]
	r.ID, r.At = last.ID+1, last.At.Add(time.Second)
	if v1 {
		r.Hash = AuditHashV1(last.Hash, r.AskID, r.Session, r.Action, r.Actor, r.At, r.Note)
	} else if r.Body != "" {
		r.Hash = hexSHA256(AuditContent(last.Hash, r.AskID, r.Action, r.At, r.Body))
	} else {
		r.Hash = r.hashAfter(last.Hash)
	}
	return append(rows, r)
}

// history is a chain of asks and changes of configuration: asks 1 and 2
// old and settled, a policy made and revoked, ask 3 made and answered
// after them.
func history() *chainBuilder {
	c := &chainBuilder{at: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c.add(1, ActionCreated, "bot", "")               // 1
	c.add(2, ActionCreated, "bot", "")               // 2
	c.add(1, ActionAnswered, "alice", "ship it")     // 3
	c.add(0, ConfigPolicy+".created", "alice", "{}") // 4
	c.add(2, ActionAnswered, "bob", "")              // 5
	c.add(0, ConfigPolicy+".revoked", "alice", "{}") // 6
	c.add(3, ActionCreated, "bot", "")               // 7
	c.add(3, ActionAnswered, "mallory", "approve")   // 8
	return c
}

func TestVerifyAuditPurged(t *testing.T) {
	c := history()
	c.purge(2*time.Minute, 1, 2)
	if b := VerifyAudit(c.rows, false); b != nil {
		t.Fatalf("a real purge from the middle: %v", b)
	}
	ChainAudit(c.rows)
	if b := VerifyAudit(c.rows[2:], true); b != nil {
		t.Errorf("an export of it from row 3: %v", b)
	}
	purgedRow := c.rows[0]
	if !purgedRow.Purged || purgedRow.Body == "" || purgedRow.Actor != "" {
		t.Fatalf("row 1 after the purge = %+v, want it purged", purgedRow)
	}

	forged := func(after, through int64, lastHash string) AuditRow {
		return AuditRow{Action: ActionPurged, Actor: "askd", Note: fmt.Sprintf(`{"after":%d,"through":%d,"rows":1,"last_hash":%q}`, after, through, lastHash)}
	}
	tests := []struct {
		name   string
		rows   func() []AuditRow
		id     int64 // the row verify must name
		reason string
		// inDB: only a database's chain shows it; an export may end
		// before the record of a purge, or start after a retention.
		inDB bool
	}{
		{"a config row deleted, bridged by a record of the first version's form", func() []AuditRow {
			rows := history().rows
			return appendRow(without(rows, 6), forged(5, 6, rows[5].Hash), false)
		}, 7, "does not fit", false},
		{"the same record hashed in the first version", func() []AuditRow {
			rows := history().rows
			return appendRow(without(rows, 6), forged(5, 6, rows[5].Hash), true)
		}, 7, "does not fit", false},
		{"an approval deleted and bridged", func() []AuditRow {
			rows := history().rows
			return appendRow(without(rows, 3), forged(2, 3, rows[2].Hash), false)
		}, 4, "does not fit", false},
		{"a record of the first version's form bridging nothing", func() []AuditRow {
			rows := history().rows
			return appendRow(rows, forged(8, 9, rows[7].Hash), false)
		}, 9, "first version among rows of its second", false},
		{"a row purged but not the rest of its ask", func() []AuditRow {
			rows := history().rows
			r := &rows[7]
			r.Body, r.Purged, r.Session, r.Actor, r.Note = AuditBody(r.Session, r.Actor, r.Note), true, "", "", ""
			return rows
		}, 8, "every row of an ask", false},
		{"an ask purged with no record of a purge", func() []AuditRow {
			return purgeInPlace(history().rows, 3)
		}, 7, "no purge's record", true},
		{"an ask created after the cut-off purged", func() []AuditRow {
			// Ask 3's last row, mallory's approval, is hidden behind a
			// purge whose cut-off (00:06) is before ask 3 (00:07).
			rows := purgeInPlace(history().rows, 3)
			rows = appendRow(rows, AuditRow{Action: ConfigRetain, Actor: "askd", Note: `{"retain":"1m0s"}`}, false)
			rec := `{"after":6,"through":8,"rows":2,"settled_before":"2026-01-01T00:06:00Z","retain":"1m0s"}`
			return appendRow(rows, AuditRow{Action: ActionPurged, Actor: "askd", Note: rec}, false)
		}, 7, "before ask 3 was created", false},
		{"a purge under a retention nobody recorded", func() []AuditRow {
			rows := purgeInPlace(history().rows, 1)
			rec := fmt.Sprintf(`{"after":0,"through":3,"rows":2,"settled_before":"2026-01-01T00:05:00Z","retain":%q}`, time.Minute)
			return appendRow(rows, AuditRow{Action: ActionPurged, Actor: "askd", Note: rec}, false)
		}, 9, "retention last recorded", true},
		{"a purge's cut-off later than its retention allows", func() []AuditRow {
			c := history()
			c.purge(2*time.Minute, 1)
			rows := c.rows[:len(c.rows)-1]
			rec := c.rows[len(c.rows)-1]
			var p PurgeNote
			if err := json.Unmarshal([]byte(rec.Note), &p); err != nil {
				panic(err)
			}
			p.SettledBefore = p.SettledBefore.Add(time.Minute)
			b, _ := json.Marshal(p)
			rec.Note = string(b)
			return appendRow(rows, rec, false)
		}, 11, "later than its time less its retention", false},
		{"a purged row of no ask", func() []AuditRow {
			rows := history().rows
			r := AuditRow{Action: ConfigPolicy + ".created", Body: AuditBody("", "alice", "{}"), Purged: true}
			return appendRow(rows, r, false)
		}, 9, "of no ask", false},
		{"a row of the first version after the second's", func() []AuditRow {
			return appendRow(history().rows, AuditRow{AskID: 3, Session: "s", Action: ActionTold, Actor: "askd"}, true)
		}, 9, "first version after", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows := tt.rows()
			b := VerifyAudit(rows, false)
			if b == nil || b.ID != tt.id || !strings.Contains(b.Reason, tt.reason) {
				t.Errorf("break %v, want at row %d: %s", b, tt.id, tt.reason)
			}
			ChainAudit(rows)
			if b := VerifyAudit(rows, true); tt.inDB && b != nil || !tt.inDB && (b == nil || b.ID != tt.id) {
				t.Errorf("as an export: break %v, want at row %d (none: %t)", b, tt.id, tt.inDB)
			}
		})
	}
}
