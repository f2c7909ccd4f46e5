// Package askd is the vocabulary of askd, a self-hosted inbox where AI agents ask
// people things: asks, their kinds and states, answers, the rules every input
// must follow, and the Store interface every database implements. It does no I/O.
package askd

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// Kind is what an ask is for.
type Kind string

const (
	KindQuestion Kind = "question" // structured multiple choice; the agent blocks (SPEC §2.1)
	KindDecision Kind = "decision" // attention asks: the agent goes on, is told later (§2.2)
	KindAction   Kind = "action"
	KindReady    Kind = "ready"
	KindBlocked  Kind = "blocked"
	KindApproval Kind = "approval" // approve / approve with edits / reject (§2.3)
	KindForm     Kind = "form"     // an MCP server's elicitation: a form or a URL (§9)
)

// Kinds lists every kind, in the order the docs give them.
var Kinds = []Kind{KindQuestion, KindDecision, KindAction, KindReady, KindBlocked, KindApproval, KindForm}

// IsAttention reports whether k is an attention kind: non-blocking, one pending
// per session, its answer told to the agent later.
func (k Kind) IsAttention() bool {
	switch k {
	case KindDecision, KindAction, KindReady, KindBlocked:
		return true
	}
	return false
}

// Valid reports whether k is one of Kinds.
func (k Kind) Valid() bool {
	return k == KindQuestion || k == KindApproval || k == KindForm || k.IsAttention()
}

// Status is where an ask is in its life: pending, then answered or cancelled.
type Status string

const (
	StatusPending   Status = "pending"
	StatusAnswered  Status = "answered"
	StatusCancelled Status = "cancelled"
)

// CancelReason says why an ask was cancelled. A timeout is never a person's refusal.
type CancelReason string

const (
	ReasonTimeout   CancelReason = "timeout"   // no one answered in time
	ReasonDismissed CancelReason = "dismissed" // a person closed it
	ReasonWithdrawn CancelReason = "withdrawn" // the agent took it back
	ReasonReplaced  CancelReason = "replaced"  // superseded by another ask
)

// Role is what a token may do.
type Role string

const (
	RoleHuman Role = "human" // sees the inbox and answers
	RoleAgent Role = "agent" // creates asks and reads its own
)

// Actions on a form ask (SPEC §9): the person's answer, or their Decline.
// A dismissal, a timeout or a withdrawal is MCP's "cancel".
const (
	FormAccept  = "accept"
	FormDecline = "decline"
	FormCancel  = "cancel" // never stored: what a form ask cancelled means to its MCP server
)

// Decisions on an approval.
const (
	DecisionApproved = "approved"
	DecisionModified = "modified" // approved with an edited payload
	DecisionRejected = "rejected"
)

// Option is one choice offered to the person.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	Preview     string `json:"preview,omitempty"`
}

// Question is one question of a question ask, as in Claude's AskUserQuestion.
// Its text is its key in the answers.
type Question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []Option `json:"options"`
	MultiSelect bool     `json:"multiSelect"`
}

// Ask is one thing an agent needs from a person.
type Ask struct {
	ID       int64  `json:"id"`
	Kind     Kind   `json:"kind"`
	Session  string `json:"session"`
	Agent    string `json:"agent"` // the agent token's name
	Status   Status `json:"status"`
	Revision int    `json:"revision"` // 1, +1 each time a newer attention ask replaces it

	// Content; which fields are set depends on Kind.
	Questions   []Question      `json:"questions,omitempty"`   // question
	Title       string          `json:"title,omitempty"`       // attention, approval; form: the message
	Details     string          `json:"details,omitempty"`     // attention, approval
	Options     []Option        `json:"options,omitempty"`     // decision
	Recommended string          `json:"recommended,omitempty"` // decision
	Payload     json.RawMessage `json:"payload,omitempty"`     // approval: the object the person may edit
	ToolName    string          `json:"tool_name,omitempty"`   // approval from a permission prompt
	ToolUseID   string          `json:"tool_use_id,omitempty"` // approval: retries with it re-attach
	Source      string          `json:"source,omitempty"`      // form, approval: the MCP server that asks, or whose gate does
	Schema      json.RawMessage `json:"schema,omitempty"`      // form, form mode: the fields, as given
	URL         string          `json:"url,omitempty"`         // form, url mode: where the person goes

	// AgentTool is, for an approval a coding-agent CLI's hook asked (SPEC
	// §18), the tool's name in that CLI (run_shell_command, askd/ask),
	// where ToolName is the one name policies and rules see (Bash,
	// mcp__askd__ask).
	AgentTool string `json:"agent_tool,omitempty"`
	// NoEdit says the agent's CLI cannot run a call with edited input
	// (Copilot's, Qwen's and Gemini's hooks take only allow or deny): the
	// inbox offers no Edit, and a modified decision reaches the agent as a
	// deny naming the edit.
	NoEdit bool `json:"no_edit,omitempty"`

	CreatedAt time.Time `json:"created_at"`
	// UpdatedAt is when the ask last changed, but for an approval counted
	// toward its quorum (each Approval has its own At): a team's
	// escalation runs from it, and one approval of several does not put
	// that off.
	UpdatedAt    time.Time    `json:"updated_at"`
	Deadline     *time.Time   `json:"deadline,omitempty"`      // cancelled with reason timeout past it
	SnoozedUntil *time.Time   `json:"snoozed_until,omitempty"` // hidden from the inbox until then
	SettledAt    *time.Time   `json:"settled_at,omitempty"`
	SettledBy    string       `json:"settled_by,omitempty"` // the human, or the agent for a withdrawal
	CancelReason CancelReason `json:"cancel_reason,omitempty"`
	Answer       *Answer      `json:"answer,omitempty"`

	// Routing (SPEC §10): Owner is the agent token's owner when the ask was
	// made ("alice", "team:platform"; "" for everyone). ClaimedBy is the
	// person who said "I'm on it", until it settles. EscalatedTo is who the
	// ask was escalated to (a person or "team:NAME"), once, at EscalatedAt.
	Owner       string     `json:"owner,omitempty"`
	ClaimedBy   string     `json:"claimed_by,omitempty"`
	ClaimedAt   *time.Time `json:"claimed_at,omitempty"`
	EscalatedTo string     `json:"escalated_to,omitempty"`
	EscalatedAt *time.Time `json:"escalated_at,omitempty"`

	// Quorum (SPEC §11): an approval a policy covers needs ApprovalsNeeded
	// distinct people; Approvals are those given so far (since the last
	// edit), oldest first. ExcludeOwner: its owner, a person, may not
	// approve it. All three are set when it is made.
	ApprovalsNeeded int        `json:"approvals_needed,omitempty"`
	Approvals       []Approval `json:"approvals,omitempty"`
	ExcludeOwner    bool       `json:"exclude_owner,omitempty"`

	// ToBeTold is true when the agent is to be told of the outcome later
	// (SPEC §5): attention asks, approvals whose tool call already returned
	// pending, and asks whose blocking call was cut off. ToldAt is when it was.
	ToBeTold bool       `json:"tell"`
	ToldAt   *time.Time `json:"told_at,omitempty"`

	// Key is an attention ask's slot, SlotKey(Kind, Session), or a keyed
	// approval's key (SPEC §12), as it was asked with; "" for the rest. The
	// slot is kept in a field so that an ask is JSON without a MarshalJSON
	// of its own: encoding/json compacts what a MarshalJSON returns once
	// more, which took half of each ask's encoding (docs/benchmarks.md).
	// Whoever makes or reads an ask sets it: the app as it creates one, the
	// stores as they read one (WithKey).
	Key string `json:"key,omitempty"`
	// OneCall says a keyed approval answers one call (SPEC §14, asked with
	// one_call): once told, its key asks anew, and it holds its key no
	// more (HoldsKey).
	OneCall bool `json:"one_call,omitempty"`
}

// WithKey sets an attention ask's Key to its slot from its kind and
// session, and returns a; other asks keep the Key they have.
func (a *Ask) WithKey() *Ask {
	if k := SlotKey(a.Kind, a.Session); k != "" {
		a.Key = k
	}
	return a
}

// Keyed reports whether a is a keyed approval (SPEC §12).
func (a *Ask) Keyed() bool { return a.Kind == KindApproval && a.Key != "" }

// HoldsKey reports whether a is the approval its key names now: a keyed
// approval, but a one-call one told (its call was answered; the key's next
// approval is a new one). A token has at most one approval holding a key:
// both stores' unique index says so.
func (a *Ask) HoldsKey() bool { return a.Keyed() && !(a.OneCall && a.ToldAt != nil) }

// SlotKey is the attention slot an ask of kind k in session holds:
// "session:<name>" for attention asks, "" for the others (Ask.Key).
func SlotKey(k Kind, session string) string {
	if k.IsAttention() {
		return "session:" + session
	}
	return ""
}

// Pending reports whether the ask still waits for a person.
func (a *Ask) Pending() bool { return a.Status == StatusPending }

// Summary is a one-line description of the ask: its title (a form's
// message: its first line), or its first question.
func (a *Ask) Summary() string {
	if a.Kind == KindForm {
		first, _, _ := strings.Cut(a.Title, "\n")
		return strings.TrimSpace(first)
	}
	if a.Title != "" {
		return a.Title
	}
	if len(a.Questions) > 0 {
		return a.Questions[0].Question
	}
	return ""
}

// Through names the MCP server an approval came through, for an approval an
// MCP gate asks (SPEC §14): "through filesystem"; "" for every other ask (a
// form names its server as "asked by", SPEC §9). Notifications, the answer
// link's page and the CLI say it in these words, as the inbox does.
func (a *Ask) Through() string {
	if a.Kind != KindApproval || a.Source == "" {
		return ""
	}
	return "through " + a.Source
}

// Event actions: one per transition of an ask, kept as its history and streamed
// to inboxes.
const (
	ActionCreated   = "created"
	ActionReplaced  = "replaced"
	ActionAnswered  = "answered"
	ActionDismissed = "dismissed"
	ActionTimedOut  = "timed_out"
	ActionWithdrawn = "withdrawn"
	ActionSnoozed   = "snoozed"
	ActionTold      = "told"
	ActionTellFail  = "tell_failed"
	// ActionCutOff: the agent's blocking call gave up (its client's timeout,
	// a cancellation, a dropped connection) while the ask stays pending; its
	// outcome will be told to the session later (SPEC §2.1).
	ActionCutOff = "cut_off"
	// A team's inbox (SPEC §10): a person takes an ask ("I'm on it") or
	// lets it go; an ask waiting too long is escalated, once.
	ActionClaimed   = "claimed"
	ActionReleased  = "released"
	ActionEscalated = "escalated"
	// ActionApprovedInPart: one person's approval of an approval a policy
	// covers, short of its quorum (SPEC §11); the last one is answered.
	ActionApprovedInPart = "approved_in_part"
)

// EventType is the name of an event on the SSE stream.
func EventType(action string) string {
	switch action {
	case ActionCreated:
		return "ask.created"
	case ActionAnswered, ActionDismissed, ActionTimedOut, ActionWithdrawn:
		return "ask.settled"
	case ActionTold:
		return "ask.told"
	}
	return "ask.updated"
}

// Event is one transition of one ask: who did what, when, and the ask as it was
// right after.
type Event struct {
	ID      int64     `json:"id"`
	AskID   int64     `json:"ask_id"`
	Session string    `json:"session"`
	Action  string    `json:"action"`
	Actor   string    `json:"actor"`
	At      time.Time `json:"at"`
	Note    string    `json:"note,omitempty"`
	Ask     *Ask      `json:"ask,omitempty"` // the snapshot; omitted in histories
}

// Caller is who is making a request: the token's name and role, and for agents
// the session they ask in.
type Caller struct {
	Name    string
	Role    Role
	Access  Access // a person's access level (team.go); "" for agents
	Owner   string // an agent's owner (team.go): its asks are routed there
	Session string
	// TokenHash is the stored hash of the token the caller authenticated
	// with (for a browser, of its browser session, marked as such), so that
	// its streams and waits end when the token is revoked or the browser
	// signs out; "" for callers made without one (they are never revoked).
	TokenHash string
	// Via is how a browser signed in (BrowserSession.Via); "" for a token.
	Via string
}

// SessionInfo is a session as the inbox lists it. A session belongs to the
// agent token that names it (SPEC §1): two agents may each have a session of
// the same name, and they are two sessions.
type SessionInfo struct {
	Agent     string    `json:"agent"` // the agent token's name
	Name      string    `json:"name"`
	Pending   int       `json:"pending"`
	Total     int       `json:"total"`
	LastAskAt time.Time `json:"last_ask_at"`
}

// AskFilter selects asks. Zero fields match everything.
type AskFilter struct {
	ID     int64
	Status Status
	// Agent and Session select one agent's asks, or one session of it. Every
	// lookup made for an agent sets Agent to the caller's token name: a
	// session name alone names no session (SPEC §1).
	Agent     string
	Session   string
	Kind      Kind
	ToolUseID string
	// Key matches a keyed approval's key (SPEC §12); KeyPrefix the keyed
	// approvals whose key starts with it.
	Key       string
	KeyPrefix string
	Before    int64 // only ids below this
	Limit     int
	// SettledBefore matches settled asks settled before this time (purging).
	SettledBefore time.Time
	// DeadlineBefore matches asks with a deadline before this time (expiry).
	DeadlineBefore time.Time
	// Routes, when not nil, matches asks whose Owner is one of them ("" for
	// asks of no owner) or that were escalated to one of them: a person's
	// Mine (SPEC §10).
	Routes []string
	// EscalateDue matches asks that are pending, unclaimed, not snoozed at
	// this time, not escalated yet, owned by a team, and whose UpdatedAt is
	// at or before this time minus their team's EscalateAfter (the sweep).
	EscalateDue time.Time
}

// Change is what a store tells its process after a commit: an event was added
// (and so ask AskID changed), or, with Reset, that changes may have been missed
// (a dropped connection) and everyone should re-read.
type Change struct {
	EventID int64
	AskID   int64
	Reset   bool
	// Ask is the ask as the commit left it (the event's snapshot), when the
	// store has it at hand: on SQLite for the commits of its own process (the
	// only ones it tells of), on PostgreSQL for the commits of every process,
	// carried by the notification, unless the snapshot was too long for one.
	// Nil means read it. Shared by every watcher: read it, never change it.
	Ask *Ask
}

// Yielding marks ctx so that a Store.Update under it gives way to every
// other: the store runs it in a transaction of its own, and only when no
// other update of the process is waiting for the writer. For work nobody
// waits on, done in many small transactions (a purge): an agent's or a
// person's write then waits behind one of them at most.
func Yielding(ctx context.Context) context.Context {
	return context.WithValue(ctx, yieldingKey{}, true)
}

// IsYielding reports whether ctx was marked by Yielding.
func IsYielding(ctx context.Context) bool {
	y, _ := ctx.Value(yieldingKey{}).(bool)
	return y
}

type yieldingKey struct{}

// Store is a database holding asks, their history and tokens. Implementations
// must pass internal/storetest.
type Store interface {
	// Update runs fn in one read-write transaction, committed when fn
	// returns nil. fn's error is returned, and undoes all fn did; so does
	// its panic, raised again in the caller.
	//
	// Writers take turns: write transactions run one at a time, whole,
	// across store handles, sessions and processes sharing the database. A
	// read inside Update sees every write committed before it began, and no
	// other write commits until it ends, so what fn writes from what it read
	// is never outdated. (A store may run the updates that queue meanwhile
	// as one transaction, each in a savepoint of its own: they still take
	// turns.) fn must not call Update: it would wait for its own turn.
	//
	// Every "exactly once" of askd rests on this, not on row locks: an
	// outcome told once, a quorum approval counted once, one ask per key, an
	// escalation once, one winner of answers or claims made at once, the
	// pending caps; each site says so in a line naming this method.
	// An update under Yielding(ctx) goes after every other one waiting,
	// in a transaction of its own.
	// internal/storetest checks it (WritersTakeTurns) across two sessions
	// and across two handles on one database.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction: it sees what was committed
	// as of its first read, without waiting for writers. What it read may be
	// outdated by the time an Update runs: a write that depends on a read
	// reads it again inside Update.
	View(ctx context.Context, fn func(Tx) error) error
	// ReadAsk reads ask id as a View would (AskTx.Ask), in the fewest round
	// trips the store has: a wait's read of its ask when the notification
	// could not carry it. ENOTFOUND when there is none.
	ReadAsk(ctx context.Context, id int64) (*Ask, error)
	// Watch registers fn to be called, in order, for every event committed by any
	// process sharing the database. fn must not block.
	Watch(fn func(Change))
	// Ping reports whether the database answers.
	Ping(ctx context.Context) error
	Close() error
}

// Tx is one transaction, as Store.Update and Store.View hand it to their
// function: what it may do, area by area. Each area's interface is declared
// beside the types it keeps. A store sets every field (one value of its own
// may serve them all). Not-found lookups return an ENOTFOUND *Error.
type Tx struct {
	Sessions    SessionTx    // agents' sessions, and the lock on one
	Asks        AskTx        // asks
	Events      EventTx      // the asks' history
	Audit       AuditTx      // the history's hash chain and config rows (audit.go)
	Tokens      TokenTx      // credentials (token.go)
	SignIns     SignInTx     // sign-in codes and browser sessions (token.go)
	Identities  IdentityTx   // people's identities at providers (identity.go)
	Push        PushTx       // push subscriptions and the VAPID keys (push.go)
	Channels    ChannelTx    // sessions' delivery channels and bridges (delivery.go)
	Deliveries  DeliveryTx   // the outbox (delivery.go)
	Rules       RuleTx       // standing answers to approvals (rule.go)
	Policies    PolicyTx     // approvals that need several people (policy.go)
	Teams       TeamTx       // teams and people's notification settings (team.go)
	AnswerLinks AnswerLinkTx // signed answer links (answerlink.go)
	MCPCalls    MCPCallTx    // blocking MCP calls (mcpcall.go)
}

// SessionTx is what a transaction may do with agents' sessions.
type SessionTx interface {
	// LockSession serializes transactions touching one session's asks: the
	// session named session of the agent token agent. Under Update, whose
	// writers take turns whole, it has nothing left to do; it marks where a
	// transaction reads a session's asks.
	LockSession(ctx context.Context, agent, session string) error
	// AddSession records that agent's session session exists from at, and
	// reports whether it is new (it had no record before).
	AddSession(ctx context.Context, agent, session string, at time.Time) (bool, error)
	// CountSessions returns how many sessions of agent were first recorded at
	// or after since.
	CountSessions(ctx context.Context, agent string, since time.Time) (int, error)
	// SessionState reads what a new ask in agent's session session is
	// checked against (see SessionState). A store may read it all in one
	// round trip.
	SessionState(ctx context.Context, agent, session string) (*SessionState, error)
	// Sessions returns the sessions that have asks and match q, by agent
	// then name (see SessionKey), at most q.Limit when it is above 0.
	Sessions(ctx context.Context, q SessionQuery) ([]*SessionInfo, error)
	// CountSessionsWithAsks counts the sessions that have asks (routes not
	// nil: asks it matches, as SessionQuery.Routes): every one the
	// SessionQuery of those routes lists.
	CountSessionsWithAsks(ctx context.Context, routes []string) (int, error)
}

// SessionState is one session as a new ask in it finds it
// (SessionTx.SessionState).
type SessionState struct {
	// Pending are the session's pending asks, as AskTx.FindAsks returns
	// them, and in a write transaction locks them.
	Pending []*Ask
	// TokenPending counts the pending asks of the session's agent token,
	// across all its sessions.
	TokenPending int
	// Recorded: the session has its record (SessionTx.AddSession).
	Recorded bool
}

// AskTx is what a transaction may do with asks.
type AskTx interface {
	Ask(ctx context.Context, id int64) (*Ask, error)
	// FindAsks returns matching asks, pending ones first, then newest first.
	FindAsks(ctx context.Context, f AskFilter) ([]*Ask, error)
	CountAsks(ctx context.Context, f AskFilter) (int, error)
	// PendingAsks returns the pending asks matching q in urgency order (see
	// UrgencyKey), at most q.Limit when it is above 0. It locks nothing.
	PendingAsks(ctx context.Context, q PendingQuery) ([]*Ask, error)
	// SearchAsks returns the settled asks matching q, most recently settled
	// first (see SettledKey), at most q.Limit when it is above 0. It locks
	// nothing. Creating, replacing, settling and deleting asks keep what it
	// searches in step, in the same transaction.
	SearchAsks(ctx context.Context, q SearchQuery) ([]*Ask, error)
	// CountSearch counts the settled asks matching q; q.After and q.Limit
	// do not apply.
	CountSearch(ctx context.Context, q SearchQuery) (int, error)
	// CreateAsk inserts a and sets a.ID. ECONFLICT when a holds its key
	// (Ask.HoldsKey) and another approval of its agent token holds it.
	CreateAsk(ctx context.Context, a *Ask) error
	// UpdateAsk replaces the stored ask a.ID with a. Like AddEvent's, its
	// statement may be held back: its error (ENOTFOUND for a missing ask)
	// may come from the transaction's next statement or from Update.
	UpdateAsk(ctx context.Context, a *Ask) error
	// DeleteAsks removes at most limit (above 0) of the settled asks
	// settled before p.SettledBefore, those settled first first, and
	// returns how many went: a purge calls it, one transaction after
	// another, until fewer than limit went, and so holds the writer for a
	// batch at a time, never for the whole purge. The asks' events leave
	// the history but not the audit chain: each is kept there purged
	// (AuditRow.Purged, its content replaced by its body hash), and a
	// record of the purge (a PurgeNote) is added for each run of rows the
	// call purged, at p.At.
	DeleteAsks(ctx context.Context, p Purge, limit int) (int, error)
}

// EventTx is what a transaction may do with the asks' events.
type EventTx interface {
	// AddEvent appends e and sets e.ID; watchers hear of it after commit.
	// A store may hold the insert back and send it with the transaction's
	// next statement or its commit (PostgreSQL does): e.ID is then set, and
	// an error of the insert returned, by that statement or by Update. So
	// read e.ID once Update has returned.
	AddEvent(ctx context.Context, e *Event) error
	// AskHistory returns the events of ask askID, oldest first, without
	// snapshots; none when it has none or does not exist.
	AskHistory(ctx context.Context, askID int64) ([]*Event, error)
	// EventsAfter returns the events after afterID across all asks, oldest
	// first, each with its snapshot, at most limit when limit is above 0.
	EventsAfter(ctx context.Context, afterID int64, limit int) ([]*Event, error)
	// LastEventID returns the newest event's id, 0 when there is none.
	LastEventID(ctx context.Context) (int64, error)
}
