package askd

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// The audit trail (SPEC §11): every history row carries a hash, the hex
// SHA-256 of AuditContent, which takes the previous row's hash, so the rows
// form one chain per database. This file is the one definition of that
// content; the PostgreSQL store computes the same bytes in SQL (its
// migrations 015_audit.sql and 018_audit_purged.sql), and AuditHash is what
// the SQLite store writes and what verify checks both against.
//
// A --retain purge never takes a row out of the chain: it removes what the
// rows of the asks it purges say (session, actor, note, the snapshot) and
// keeps each row's place, ask, action, time and hash, with the hash of what
// it removed (the row's body). Verify so still sees every row ever written:
// a row deleted from the middle breaks the chain whatever else a forger
// appends. Rows are hashed in the chain's second version; the first version
// (before body hashes, when purges removed rows and left a record bridging
// each gap) is still verified for the rows written in it.

// ActionPurged is the action of the record a --retain purge leaves for each
// run of history rows it purged; its note is a PurgeNote.
const ActionPurged = "purged"

// Config actions: a change of configuration is a history row with no ask
// (AskID 0), its action one of these and its note a JSON object naming what
// changed.
const (
	ConfigTokenCreated = "config.token.created"
	ConfigTokenRevoked = "config.token.revoked"
	ConfigTokenRole    = "config.token.role"
	ConfigTokenOwner   = "config.token.owner"
	ConfigTokenRotated = "config.token.rotated"
	// ConfigIdentityLinked: an identity at a provider linked to a person
	// (askd token link, or a sign-in that linked or made the person).
	ConfigIdentityLinked = "config.identity.linked"
	ConfigTeamCreated    = "config.team.created"
	ConfigTeamMembers    = "config.team.members"
	ConfigTeamEscalate   = "config.team.escalation"
	ConfigTeamDeleted    = "config.team.deleted"
	ConfigRuleCreated    = "config.rule.created"
	ConfigRuleChanged    = "config.rule.changed"
	ConfigRuleRevoked    = "config.rule.revoked"
	ConfigPolicy         = "config.policy" // prefix: config.policy.created, ...
	// ConfigRetain records the retention a server purges with (--retain),
	// before its first purge and whenever it changes; its note is a
	// RetainNote. Verify holds each purge to the retention last recorded.
	ConfigRetain = "config.retain"
)

// AuditRow is one history row as the audit trail sees it: an ask's event or,
// with AskID 0, a change of configuration or a purge's record. A purged row
// (Purged) has no Session, Actor or Note: Body is the hash of what they were.
// (A row of the chain's first version keeps them when purged: its hash
// covers them, not a body.) Prev is set only in an export (the hash the row
// was chained to), so that a partial export can be checked from its first
// line.
type AuditRow struct {
	ID      int64     `json:"id"`
	AskID   int64     `json:"ask_id"`
	Session string    `json:"session"`
	Action  string    `json:"action"`
	Actor   string    `json:"actor"`
	At      time.Time `json:"at"`
	Note    string    `json:"note"`
	Body    string    `json:"body,omitempty"`
	Purged  bool      `json:"purged,omitempty"`
	Prev    string    `json:"prev,omitempty"`
	Hash    string    `json:"hash"`
}

// auditFields appends each field as its length in bytes, ':', itself and
// '\n' to b, after the version tag.
func auditFields(b []byte, tag string, fields ...string) []byte {
	b = append(b, tag...)
	b = append(b, '\n')
	for _, f := range fields {
		b = strconv.AppendInt(b, int64(len(f)), 10)
		b = append(b, ':')
		b = append(b, f...)
		b = append(b, '\n')
	}
	return b
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// AuditBody is the hash of what a purge removes from a row: its session,
// actor and note, after the tag "askd-audit-body-2", each as AuditContent
// writes a field.
func AuditBody(session, actor, note string) string {
	return hexSHA256(auditFields(make([]byte, 0, 48+len(session)+len(actor)+len(note)), "askd-audit-body-2", session, actor, note))
}

// AuditContent is the bytes a row's hash covers: the tag "askd-audit-2",
// then the previous row's hash ("" for the first row), ask id (0 for none),
// action, time (microseconds since the Unix epoch, as both stores keep it)
// and body (AuditBody), each as its length in bytes, ':', itself and '\n'.
// The row's id is not in it: the chain fixes each row's place after the one
// before, and the PostgreSQL trigger need not know an id to compute it.
func AuditContent(prev string, askID int64, action string, at time.Time, body string) []byte {
	return auditFields(make([]byte, 0, 192+len(action)), "askd-audit-2",
		prev, strconv.FormatInt(askID, 10), action, strconv.FormatInt(at.UnixMicro(), 10), body)
}

// AuditHash is the hash of a row with these fields chained after prev.
func AuditHash(prev string, askID int64, session, action, actor string, at time.Time, note string) string {
	return hexSHA256(AuditContent(prev, askID, action, at, AuditBody(session, actor, note)))
}

// AuditHashV1 is a row's hash in the chain's first version: the tag
// "askd-audit-1", then prev, ask id, session, action, actor, time and note,
// each as AuditContent writes a field.
func AuditHashV1(prev string, askID int64, session, action, actor string, at time.Time, note string) string {
	return hexSHA256(auditFields(make([]byte, 0, 64+len(prev)+len(session)+len(action)+len(actor)+len(note)), "askd-audit-1",
		prev, strconv.FormatInt(askID, 10), session, action, actor, strconv.FormatInt(at.UnixMicro(), 10), note))
}

// A Purge is what one --retain purge removes: the settled asks settled
// before SettledBefore, found At (SettledBefore is At less Retain), with
// their events' content.
type Purge struct {
	SettledBefore time.Time
	At            time.Time
	Retain        time.Duration
}

// PurgeNote is the note of a purge's record, one for each run of rows it
// purged: rows After (the last row left whole before them, 0 for none)
// through Through, Rows of them, purged as asks settled before
// SettledBefore under the retention Retain (a time.Duration's String).
// Records of the chain's first version, whose purges removed rows, have no
// cut-off or retention but LastHash: the last removed row's hash, which the
// next row kept is chained to.
type PurgeNote struct {
	After         int64     `json:"after"`
	Through       int64     `json:"through"`
	Rows          int       `json:"rows"`
	SettledBefore time.Time `json:"settled_before,omitzero"`
	Retain        string    `json:"retain,omitempty"`
	LastHash      string    `json:"last_hash,omitempty"`
}

// RetainNote is the note of a ConfigRetain row: Retain is a
// time.Duration's String.
type RetainNote struct {
	Retain string `json:"retain"`
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

// bridgeOf is r's note when r is a first-version purge record, whose run of
// removed rows verify bridges.
func bridgeOf(r *AuditRow) (PurgeNote, bool) {
	var p PurgeNote
	if r.AskID != 0 || r.Action != ActionPurged || json.Unmarshal([]byte(r.Note), &p) != nil || p.LastHash == "" {
		return PurgeNote{}, false
	}
	return p, true
}

// recordOf is r's note when r is a purge's record of the second version.
func recordOf(r *AuditRow) (PurgeNote, bool) {
	var p PurgeNote
	if r.AskID != 0 || r.Action != ActionPurged || r.Purged || json.Unmarshal([]byte(r.Note), &p) != nil || p.LastHash != "" {
		return PurgeNote{}, false
	}
	return p, true
}

// auditWalk follows a chain oldest first: what each next row is chained
// to, given the rows before it and the first version's purge records.
type auditWalk struct {
	bridges  map[int64][]PurgeNote // by After
	prevID   int64
	prevHash string
}

// newAuditWalk collects the bridges of rows's first-version purge records,
// but for those of the rows skip names.
func newAuditWalk(rows []AuditRow, skip map[int64]bool) *auditWalk {
	w := &auditWalk{bridges: map[int64][]PurgeNote{}}
	for i := range rows {
		if p, ok := bridgeOf(&rows[i]); ok && !skip[rows[i].ID] {
			w.bridges[p.After] = append(w.bridges[p.After], p)
		}
	}
	return w
}

// want is the hash the row id, next after the rows walked, is chained to:
// the previous row's, or the last removed row's when a first-version purge
// removed the rows between (the latest such run: rows after the previous
// row, before id).
func (w *auditWalk) want(id int64) string {
	want, through := w.prevHash, w.prevID
	for _, p := range w.bridges[w.prevID] {
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
	w := newAuditWalk(rows, nil)
	for i := range rows {
		rows[i].Prev = w.want(rows[i].ID)
		w.step(&rows[i])
	}
}

// VerifyAudit checks rows, oldest first, as one chain, and returns the first
// row that does not fit, nil when all do. Each row's hash must be its content
// chained after the row before it (a purged row's content is its body). A
// purged row must be an ask's, every row of its ask purged with it, and
// covered by a purge's record after it whose cut-off is after the ask was
// created and no later than the record's time less the retention last
// recorded (ConfigRetain). Rows of the chain's first version may only come
// before the second's; there, where a first-version purge removed rows, the
// next row kept may be chained to the last removed row's hash as that purge
// recorded it. With fromExport, the first row is chained to its own Prev (an
// export may start anywhere), every Prev must be what the row was chained
// to, and what the export does not hold is not required: a retention
// recorded before its first line, a record after its last.
func VerifyAudit(rows []AuditRow, fromExport bool) *AuditBreak {
	// A first-version purge record among the second version's rows was not
	// written by a purge: walk again without its bridge, so that the break
	// is named where the rows it hid are missing.
	skip := map[int64]bool{}
	for {
		b, forged := verifyWalk(rows, fromExport, skip)
		if forged == 0 || skip[forged] {
			return b
		}
		skip[forged] = true
	}
}

// askSeen is what verify knows of an ask's rows so far.
type askSeen struct {
	purged  bool
	first   int64     // its first row's id
	created time.Time // when its created row says it was created, if seen
}

// verifyWalk is one walk of VerifyAudit, the bridges of the records skip
// names left out. forged is the id of a first-version purge record that
// cannot be one, 0 for none.
func verifyWalk(rows []AuditRow, fromExport bool, skip map[int64]bool) (b *AuditBreak, forged int64) {
	w := newAuditWalk(rows, skip)
	asks := map[int64]*askSeen{}
	var (
		second    bool        // a row of the second version was walked
		retain    string      // the retention last recorded
		uncovered []*AuditRow // purged rows no record has covered yet
	)
	lineOf := func(i int) int {
		if fromExport {
			return i + 1
		}
		return 0
	}
	for i := range rows {
		r := &rows[i]
		fail := func(format string, args ...any) *AuditBreak {
			return &AuditBreak{ID: r.ID, Line: lineOf(i), Reason: fmt.Sprintf(format, args...)}
		}
		if r.Hash == "" {
			return fail("no hash (written without the chain)"), 0
		}
		if i > 0 && r.ID <= w.prevID {
			return fail("out of order after row %d", w.prevID), 0
		}
		want := w.want(r.ID)
		if i == 0 && fromExport {
			want = r.Prev
		}
		if fromExport && r.Prev != want {
			return fail("its prev is not the hash of the row before it"), 0
		}
		_, isBridge := bridgeOf(r)
		switch {
		case r.Body != "":
			if r.Session != "" || r.Actor != "" || r.Note != "" {
				return fail("a purged row with both a body and what the body hashes"), 0
			}
			if hexSHA256(AuditContent(want, r.AskID, r.Action, r.At, r.Body)) != r.Hash {
				return fail("its hash does not fit its content and the row before it"), 0
			}
			second = true
		case r.hashAfter(want) == r.Hash:
			second = true
		case AuditHashV1(want, r.AskID, r.Session, r.Action, r.Actor, r.At, r.Note) == r.Hash && !second:
		case AuditHashV1(want, r.AskID, r.Session, r.Action, r.Actor, r.At, r.Note) == r.Hash:
			b = fail("a row of the chain's first version after rows of its second")
			if isBridge {
				return b, r.ID
			}
			return b, 0
		default:
			b = fail("its hash does not fit its content and the row before it")
			if isBridge {
				return b, r.ID
			}
			return b, 0
		}
		if isBridge && second {
			return fail("a purge record of the chain's first version among rows of its second: purges no longer remove rows, so none bridges a gap"), r.ID
		}
		if r.AskID == 0 && (r.Purged || r.Body != "") {
			return fail("a purged row of no ask: a purge leaves changes of configuration and its own records whole"), 0
		}
		if r.AskID != 0 {
			purged := r.Purged || r.Body != ""
			a := asks[r.AskID]
			if a == nil {
				a = &askSeen{purged: purged, first: r.ID}
				asks[r.AskID] = a
			} else if a.purged != purged {
				return fail("ask %d's row %d is %s but this one is %s: a purge purges every row of an ask", r.AskID, a.first, purgedWord(a.purged), purgedWord(purged)), 0
			}
			if r.Action == ActionCreated && a.created.IsZero() {
				a.created = r.At
			}
			if purged {
				uncovered = append(uncovered, r)
			}
		}
		if r.AskID == 0 && r.Action == ConfigRetain {
			var n RetainNote
			if json.Unmarshal([]byte(r.Note), &n) == nil {
				retain = n.Retain
			}
		}
		if p, ok := recordOf(r); ok {
			d, err := time.ParseDuration(p.Retain)
			switch {
			case err != nil || d <= 0:
				return fail("a purge record with no retention"), 0
			case (retain != "" || !fromExport) && p.Retain != retain:
				return fail("a purge with a retention of %s, but the retention last recorded is %q", p.Retain, retain), 0
			case p.SettledBefore.After(r.At.Add(-d)):
				return fail("a purge whose cut-off %s is later than its time less its retention", p.SettledBefore.Format(time.RFC3339Nano)), 0
			}
			kept := uncovered[:0]
			for _, u := range uncovered {
				if u.ID <= p.After || u.ID > p.Through {
					kept = append(kept, u)
					continue
				}
				if c := asks[u.AskID].created; !c.IsZero() && !c.Before(p.SettledBefore) {
					j := indexOfRow(rows, u.ID)
					return &AuditBreak{ID: u.ID, Line: lineOf(j), Reason: fmt.Sprintf(
						"purged by the purge of row %d, whose cut-off %s is before ask %d was created",
						r.ID, p.SettledBefore.Format(time.RFC3339Nano), u.AskID)}, 0
				}
			}
			uncovered = kept
		}
		w.step(r)
	}
	if len(uncovered) > 0 && !fromExport {
		u := uncovered[0]
		return &AuditBreak{ID: u.ID, Reason: "purged, but no purge's record after it covers it"}, 0
	}
	return nil, 0
}

func purgedWord(purged bool) string {
	if purged {
		return "purged"
	}
	return "whole"
}

// indexOfRow is the index of the row id in rows, which are in id order.
func indexOfRow(rows []AuditRow, id int64) int {
	i, _ := slices.BinarySearchFunc(rows, id, func(r AuditRow, id int64) int { return cmp.Compare(r.ID, id) })
	return i
}

// AuditTx is what a transaction may do with the audit trail.
type AuditTx interface {
	// AddConfigEvent appends a change of configuration (e.AskID 0) to the
	// chain and sets e.ID. It is not an ask's event: neither histories nor
	// streams show it.
	AddConfigEvent(ctx context.Context, e *Event) error
	// AuditRows returns the history rows with from <= at < until (a zero
	// time leaves that end open), oldest first, after afterID and at most
	// limit when limit is above 0, with their hashes: whole rows and the
	// rows a purge purged.
	AuditRows(ctx context.Context, afterID int64, from, until time.Time, limit int) ([]AuditRow, error)
	// CountAudit counts the history rows with from <= at < until, purged
	// ones too.
	CountAudit(ctx context.Context, from, until time.Time) (int, error)
	// LastConfigEvent returns the newest change of configuration whose
	// action is action; ENOTFOUND when there is none.
	LastConfigEvent(ctx context.Context, action string) (*Event, error)
}

// ConfigNote is the JSON note of a config row: fields names what changed.
func ConfigNote(fields map[string]any) string {
	b, err := json.Marshal(fields)
	if err != nil {
		return "{}"
	}
	return string(b)
}

// PurgeRuns gathers the runs of rows one transaction of a purge purges: a
// run is rows next to each other among those the history still holds whole
// (the rows the transaction purges among them). Call Row for each row it
// purges, oldest first, then Events.
type PurgeRuns struct {
	runs []PurgeNote
}

// Row notes the next row the purge purges, id, and the row before it in
// the history, prev (0 for none): the last row left whole before a run,
// unless it is a row this purge purges, the one noted last.
func (p *PurgeRuns) Row(id, prev int64) {
	if n := len(p.runs); n == 0 || p.runs[n-1].Through != prev {
		p.runs = append(p.runs, PurgeNote{After: prev})
	}
	r := &p.runs[len(p.runs)-1]
	r.Through = id
	r.Rows++
}

// Events are the purge's records to add, one per run.
func (p *PurgeRuns) Events(pu Purge) []*Event {
	events := make([]*Event, 0, len(p.runs))
	for _, r := range p.runs {
		// To the microsecond, as the stores keep the record's time.
		r.SettledBefore, r.Retain = pu.SettledBefore.UTC().Truncate(time.Microsecond), pu.Retain.String()
		note, _ := json.Marshal(r)
		events = append(events, &Event{Action: ActionPurged, Actor: "askd", At: pu.At, Note: string(note)})
	}
	return events
}

// hashAfter is r's hash chained after prev.
func (r *AuditRow) hashAfter(prev string) string {
	return AuditHash(prev, r.AskID, r.Session, r.Action, r.Actor, r.At, r.Note)
}
