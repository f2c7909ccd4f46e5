package askd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// The audit trail (SPEC §11): every history row carries a hash, the hex
// SHA-256 of AuditContent, which takes the previous row's hash, so the rows
// form one chain per database. This file is the one definition of that
// content; the PostgreSQL store computes the same bytes in SQL (its
// migration 015_audit.sql, askd_audit_hash), and AuditHash is what the
// SQLite store writes and what verify checks both against.

// ActionPurged is the action of the row a --retain purge leaves for each run
// of history rows it removed; its note is a PurgeNote.
const ActionPurged = "purged"

// Config actions: a change of configuration is a history row with no ask
// (AskID 0), its action one of these and its note a JSON object naming what
// changed.
const (
	ConfigTokenCreated = "config.token.created"
	ConfigTokenRevoked = "config.token.revoked"
	ConfigTokenRole    = "config.token.role"
	ConfigTokenOwner   = "config.token.owner"
	ConfigTeamCreated  = "config.team.created"
	ConfigTeamMembers  = "config.team.members"
	ConfigTeamEscalate = "config.team.escalation"
	ConfigTeamDeleted  = "config.team.deleted"
	ConfigRuleCreated  = "config.rule.created"
	ConfigRuleChanged  = "config.rule.changed"
	ConfigRuleRevoked  = "config.rule.revoked"
	ConfigPolicy       = "config.policy" // prefix: config.policy.created, ...
)

// AuditRow is one history row as the audit trail sees it: an ask's event or,
// with AskID 0, a change of configuration or a purge. Prev is set only in an
// export (the hash the row was chained to), so that a partial export can be
// checked from its first line.
type AuditRow struct {
	ID      int64     `json:"id"`
	AskID   int64     `json:"ask_id"`
	Session string    `json:"session"`
	Action  string    `json:"action"`
	Actor   string    `json:"actor"`
	At      time.Time `json:"at"`
	Note    string    `json:"note"`
	Prev    string    `json:"prev,omitempty"`
	Hash    string    `json:"hash"`
}

// AuditContent is the bytes a row's hash covers: a version tag, then the
// previous row's hash ("" for the first row), ask id (0 for none), session,
// action, actor, time (microseconds since the Unix epoch, as both stores
// keep it) and note, each as its length in bytes, ':', itself and '\n'. The
// row's id is not in it: the chain fixes each row's place after the one
// before, and the PostgreSQL trigger need not know an id to compute it.
func AuditContent(prev string, askID int64, session, action, actor string, at time.Time, note string) []byte {
	b := make([]byte, 0, 64+len(prev)+len(session)+len(action)+len(actor)+len(note))
	b = append(b, "askd-audit-1\n"...)
	for _, f := range []string{prev, strconv.FormatInt(askID, 10), session, action, actor, strconv.FormatInt(at.UnixMicro(), 10), note} {
		b = strconv.AppendInt(b, int64(len(f)), 10)
		b = append(b, ':')
		b = append(b, f...)
		b = append(b, '\n')
	}
	return b
}

// AuditHash is the hash of a row with these fields chained after prev.
func AuditHash(prev string, askID int64, session, action, actor string, at time.Time, note string) string {
	sum := sha256.Sum256(AuditContent(prev, askID, session, action, actor, at, note))
	return hex.EncodeToString(sum[:])
}

// hashAfter is r's hash chained after prev.
func (r *AuditRow) hashAfter(prev string) string {
	return AuditHash(prev, r.AskID, r.Session, r.Action, r.Actor, r.At, r.Note)
}

// PurgeNote is the note of a purged row: rows After (the last row kept
// before them, 0 for none) through Through were removed, Rows of them, the
// last with hash LastHash, so the next row kept after After is chained to
// LastHash.
type PurgeNote struct {
	After    int64  `json:"after"`
	Through  int64  `json:"through"`
	Rows     int    `json:"rows"`
	LastHash string `json:"last_hash"`
}

// AuditBreak is the first row of a chain that does not fit.
type AuditBreak struct {
	ID     int64  // the history row's id
	Line   int    // its line in an export, 0 for a database
	Reason string // why it does not fit
}

func (b *AuditBreak) Error() string {
	if b.Line > 0 {
		return fmt.Sprintf("line %d: history row %d: %s", b.Line, b.ID, b.Reason)
	}
	return fmt.Sprintf("history row %d: %s", b.ID, b.Reason)
}

// auditWalk follows a chain oldest first: what each next row is chained
// to, given the rows before it and the purged rows' records.
type auditWalk struct {
	purges   map[int64][]PurgeNote // by After
	prevID   int64
	prevHash string
}

func newAuditWalk(rows []AuditRow) *auditWalk {
	w := &auditWalk{purges: map[int64][]PurgeNote{}}
	for _, r := range rows {
		if r.Action != ActionPurged || r.AskID != 0 {
			continue
		}
		var p PurgeNote
		if json.Unmarshal([]byte(r.Note), &p) == nil {
			w.purges[p.After] = append(w.purges[p.After], p)
		}
	}
	return w
}

// want is the hash the row id, next after the rows walked, is chained to:
// the previous row's, or the last removed row's when a purge removed the
// rows between (the latest such run: rows after the previous row, before
// id).
func (w *auditWalk) want(id int64) string {
	want, through := w.prevHash, w.prevID
	for _, p := range w.purges[w.prevID] {
		if p.Through > through && p.Through < id {
			want, through = p.LastHash, p.Through
		}
	}
	return want
}

// step moves past r.
func (w *auditWalk) step(r *AuditRow) { w.prevID, w.prevHash = r.ID, r.Hash }

// ChainAudit sets each row's Prev to the hash it is chained to, for an
// export: rows are a whole chain, oldest first, as a database holds it.
func ChainAudit(rows []AuditRow) {
	w := newAuditWalk(rows)
	for i := range rows {
		rows[i].Prev = w.want(rows[i].ID)
		w.step(&rows[i])
	}
}

// VerifyAudit checks rows, oldest first, as one chain: each row's hash must
// be its content chained after the row before it, or, when a purge removed
// the rows between, after the last removed row's hash as the purged row
// records it. With fromExport, the first row is chained to its own Prev (an
// export may start anywhere), and every Prev must be what the row was
// chained to. It returns the first row that does not fit, nil when all do.
func VerifyAudit(rows []AuditRow, fromExport bool) *AuditBreak {
	w := newAuditWalk(rows)
	for i := range rows {
		r := &rows[i]
		line := 0
		if fromExport {
			line = i + 1
		}
		fail := func(reason string) *AuditBreak { return &AuditBreak{ID: r.ID, Line: line, Reason: reason} }
		if r.Hash == "" {
			return fail("no hash (written without the chain)")
		}
		if i > 0 && r.ID <= w.prevID {
			return fail(fmt.Sprintf("out of order after row %d", w.prevID))
		}
		want := w.want(r.ID)
		if i == 0 && fromExport {
			want = r.Prev
		}
		if fromExport && r.Prev != want {
			return fail("its prev is not the hash of the row before it")
		}
		if r.hashAfter(want) != r.Hash {
			return fail("its hash does not fit its content and the row before it")
		}
		w.step(r)
	}
	return nil
}

// AuditTx is what a transaction may do with the audit trail.
type AuditTx interface {
	// AddConfigEvent appends a change of configuration (e.AskID 0) to the
	// chain and sets e.ID. It is not an ask's event: neither histories nor
	// streams show it.
	AddConfigEvent(ctx context.Context, e *Event) error
	// AuditRows returns the history rows with from <= at < until (a zero
	// time leaves that end open), oldest first, after afterID and at most
	// limit when limit is above 0, with their hashes.
	AuditRows(ctx context.Context, afterID int64, from, until time.Time, limit int) ([]AuditRow, error)
	// CountAudit counts the history rows with from <= at < until.
	CountAudit(ctx context.Context, from, until time.Time) (int, error)
}

// ConfigNote is the JSON note of a config row: fields names what changed.
func ConfigNote(fields map[string]any) string {
	b, err := json.Marshal(fields)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// PurgeRuns gathers the runs of rows a purge removes, from every row of the
// chain, oldest first: Row(id, hash, removed) for each, then Notes.
type PurgeRuns struct {
	runs []PurgeNote
	in   bool
	kept int64
}

// Row notes the next row of the chain and whether the purge removes it.
func (p *PurgeRuns) Row(id int64, hash string, removed bool) {
	if !removed {
		p.kept, p.in = id, false
		return
	}
	if !p.in {
		p.runs = append(p.runs, PurgeNote{After: p.kept})
		p.in = true
	}
	r := &p.runs[len(p.runs)-1]
	r.Through, r.LastHash = id, hash
	r.Rows++
}

// Events are the purged rows to add, one per run, at time at.
func (p *PurgeRuns) Events(at time.Time) []*Event {
	events := make([]*Event, 0, len(p.runs))
	for _, r := range p.runs {
		note, _ := json.Marshal(r)
		events = append(events, &Event{Action: ActionPurged, Actor: "askd", At: at, Note: string(note)})
	}
	return events
}
