package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/askd-dev/askd"
)

// tx is one transaction, read-write from Update or read-only from View.
type tx struct {
	tx querier
	// p is the pipe tx is, for holding statements back: writes, and reads
	// sent ahead of the next statement.
	p *pipe
	// locked are the asks this write transaction has read (so locked) or
	// created: their rows stay until it ends, so that an update of one
	// cannot miss, and it may be held back (UpdateAsk).
	locked   map[int64]bool
	writable bool
	// exclusive: the transaction holds the write lock (see the package
	// comment), so no other write transaction runs meanwhile.
	exclusive bool
	// fixed, when set, runs every statement instead of the caller's context:
	// in a shared write batch, one caller giving up must not cancel a
	// statement, which would break the transaction everyone shares.
	fixed context.Context
}

func (t *tx) ctx(ctx context.Context) context.Context {
	if t.fixed != nil {
		return t.fixed
	}
	return ctx
}

// areas is t as the askd.Tx it serves: t does every area.
func (t *tx) areas() askd.Tx {
	return askd.Tx{
		Sessions: t, Asks: t, Events: t, Audit: t, Tokens: t, SignIns: t, Identities: t, Push: t,
		Channels: t, Deliveries: t, Rules: t, Policies: t, Teams: t, AnswerLinks: t, MCPCalls: t,
	}
}

// txOf is the store's own transaction behind t, one that areas made.
func txOf(t askd.Tx) *tx { return t.Asks.(*tx) }

// LockSession takes a transaction advisory lock on the session (the 64-bit
// hash of its agent and name), held until commit or rollback: transactions
// locking the same session run one after the other from here on. Two
// sessions with the same hash only wait for each other needlessly. Under Update, which holds the write
// lock, it has nothing left to do and costs no round trip.
func (t *tx) LockSession(ctx context.Context, agent, session string) error {
	if t.exclusive {
		return nil
	}
	// Names hold no control characters (askd.ValidName), so a newline
	// between them makes the pair one key.
	if _, err := t.tx.Exec(t.ctx(ctx), "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", agent+"\n"+session); err != nil {
		return translate(err, fmt.Sprintf("lock session %q", session))
	}
	return nil
}

// mustWrite fails a write attempted in a View, with what was being done.
func (t *tx) mustWrite(what string) error {
	if !t.writable {
		return fmt.Errorf("%s: in a read-only transaction", what)
	}
	return nil
}

// forUpdate is the locking clause of reads of asks: in a write transaction
// they lock the rows they return until commit, so that what the transaction
// writes back was not changed under it (see the package comment). NO KEY:
// adding an event of the ask, whose foreign key takes a KEY SHARE lock on
// it, is not held up.
func (t *tx) forUpdate() string {
	if t.writable {
		return " FOR NO KEY UPDATE"
	}
	return ""
}

// askFields are the columns of asks a write sets, in the order askValues
// gives their values.
var askFields = []string{
	"kind", "session", "agent", "status", "revision",
	"questions", "title", "details", "options", "recommended", "payload", "tool_name", "tool_use_id",
	"source", "form_schema", "url",
	"created_at", "updated_at", "deadline", "snoozed_until", "settled_at", "settled_by", "cancel_reason", "answer",
	"tell", "told_at",
	"owner", "claimed_by", "claimed_at", "escalated_to", "escalated_at",
	"approvals_needed", "approvals", "exclude_owner",
	"gate_key",
	"agent_tool", "no_edit",
	"one_call",
}

// searchValue is the value a write gives the column search, after those of
// askFields: the words a search finds the ask by (askd.Ask.SearchText), for
// settled asks only (migration 006), as text the statement turns into a
// tsvector.
var searchValue = "to_tsvector('simple', $" + strconv.Itoa(len(askFields)+1) + "::text)"

var (
	askColumns = "id, " + strings.Join(askFields, ", ")
	insertAsk  = "INSERT INTO asks (" + strings.Join(askFields, ", ") + ", search) VALUES (" +
		placeholders(1, len(askFields)) + ", " + searchValue + ") RETURNING id"
	updateAsk = "UPDATE asks SET " + assignments(askFields) + ", search = " + searchValue +
		" WHERE id = $" + strconv.Itoa(len(askFields)+2)
)

// placeholders returns "$from, ..., $(from+n-1)".
func placeholders(from, n int) string {
	ps := make([]string, n)
	for i := range ps {
		ps[i] = "$" + strconv.Itoa(from+i)
	}
	return strings.Join(ps, ", ")
}

// assignments returns "field1 = $1, field2 = $2, ...".
func assignments(fields []string) string {
	as := make([]string, len(fields))
	for i, f := range fields {
		as[i] = f + " = $" + strconv.Itoa(i+1)
	}
	return strings.Join(as, ", ")
}

// askValues returns the values of a for askFields, then for search. JSON
// goes as []byte, which pgx sends to a json column as it is; nil is NULL.
func askValues(a *askd.Ask) ([]any, error) {
	questions, err := jsonColumn(a.Questions, a.Questions == nil)
	if err != nil {
		return nil, fmt.Errorf("questions: %w", err)
	}
	options, err := jsonColumn(a.Options, a.Options == nil)
	if err != nil {
		return nil, fmt.Errorf("options: %w", err)
	}
	var payload []byte
	if len(a.Payload) > 0 {
		if !json.Valid(a.Payload) {
			return nil, errors.New("payload: not valid JSON")
		}
		payload = a.Payload
	}
	var schema []byte
	if len(a.Schema) > 0 {
		if !json.Valid(a.Schema) {
			return nil, errors.New("schema: not valid JSON")
		}
		schema = a.Schema
	}
	answer, err := jsonColumn(a.Answer, a.Answer == nil)
	if err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	approvals, err := jsonColumn(a.Approvals, len(a.Approvals) == 0)
	if err != nil {
		return nil, fmt.Errorf("approvals: %w", err)
	}
	// NULL rather than "", so the partial index holds only asks that have one.
	var toolUseID *string
	if a.ToolUseID != "" {
		toolUseID = &a.ToolUseID
	}
	var search *string // NULL while pending: only the history is searched
	if !a.Pending() {
		text := a.SearchText()
		search = &text
	}
	return []any{
		string(a.Kind), a.Session, a.Agent, string(a.Status), a.Revision,
		questions, a.Title, a.Details, options, a.Recommended, payload, a.ToolName, toolUseID,
		a.Source, schema, a.URL,
		a.CreatedAt, a.UpdatedAt, a.Deadline, a.SnoozedUntil,
		a.SettledAt, a.SettledBy, string(a.CancelReason), answer,
		a.ToBeTold, a.ToldAt,
		a.Owner, a.ClaimedBy, a.ClaimedAt, a.EscalatedTo, a.EscalatedAt,
		a.ApprovalsNeeded, approvals, a.ExcludeOwner,
		gateKey(a),
		a.AgentTool, a.NoEdit,
		a.OneCall,
		search,
	}, nil
}

// gateKey is the value of column gate_key for a: a keyed approval's key
// (SPEC §12), NULL for every other ask, so that the unique index holds only
// keyed ones.
func gateKey(a *askd.Ask) *string {
	if a.Kind != askd.KindApproval || a.Key == "" {
		return nil
	}
	return &a.Key
}

// scanAsk reads one row of askColumns.
func scanAsk(row pgx.Row) (*askd.Ask, error) {
	var (
		a                                         askd.Ask
		kind, status, cancelReason                string
		questions, options, payload, answer       []byte
		schema                                    []byte
		toolUseID                                 *string
		deadline, snoozedUntil, settledAt, toldAt *time.Time
		claimedAt, escalatedAt                    *time.Time
		approvals                                 []byte
		key                                       *string
	)
	err := row.Scan(&a.ID,
		&kind, &a.Session, &a.Agent, &status, &a.Revision,
		&questions, &a.Title, &a.Details, &options, &a.Recommended, &payload, &a.ToolName, &toolUseID,
		&a.Source, &schema, &a.URL,
		&a.CreatedAt, &a.UpdatedAt, &deadline, &snoozedUntil, &settledAt, &a.SettledBy, &cancelReason, &answer,
		&a.ToBeTold, &toldAt,
		&a.Owner, &a.ClaimedBy, &claimedAt, &a.EscalatedTo, &escalatedAt,
		&a.ApprovalsNeeded, &approvals, &a.ExcludeOwner,
		&key,
		&a.AgentTool, &a.NoEdit,
		&a.OneCall)
	if err != nil {
		return nil, err
	}
	a.Kind, a.Status, a.CancelReason = askd.Kind(kind), askd.Status(status), askd.CancelReason(cancelReason)
	if toolUseID != nil {
		a.ToolUseID = *toolUseID
	}
	if key != nil {
		a.Key = *key
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	a.Deadline, a.SnoozedUntil = utc(deadline), utc(snoozedUntil)
	a.SettledAt, a.ToldAt = utc(settledAt), utc(toldAt)
	a.ClaimedAt, a.EscalatedAt = utc(claimedAt), utc(escalatedAt)
	if payload != nil {
		a.Payload = json.RawMessage(payload)
	}
	if schema != nil {
		a.Schema = json.RawMessage(schema)
	}
	if err := decodeColumn(questions, &a.Questions); err != nil {
		return nil, fmt.Errorf("ask %d questions: %w", a.ID, err)
	}
	if err := decodeColumn(options, &a.Options); err != nil {
		return nil, fmt.Errorf("ask %d options: %w", a.ID, err)
	}
	if err := decodeColumn(approvals, &a.Approvals); err != nil {
		return nil, fmt.Errorf("ask %d approvals: %w", a.ID, err)
	}
	if answer != nil {
		a.Answer = new(askd.Answer)
		if err := json.Unmarshal(answer, a.Answer); err != nil {
			return nil, fmt.Errorf("ask %d answer: %w", a.ID, err)
		}
	}
	return a.WithKey(), nil
}

// Ask returns the ask with the id; ENOTFOUND when there is none. In a write
// transaction it locks the ask until commit.
func (t *tx) Ask(ctx context.Context, id int64) (*askd.Ask, error) {
	row := t.tx.QueryRow(t.ctx(ctx), "SELECT "+askColumns+" FROM asks WHERE id = $1"+t.forUpdate(), id)
	a, err := scanAsk(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "ask %d not found", id)
	}
	if err != nil {
		return nil, translate(err, fmt.Sprintf("read ask %d", id))
	}
	t.lock(a.ID)
	return a, nil
}

// lock notes that ask id's row stays until a write transaction ends.
func (t *tx) lock(id int64) {
	if !t.writable {
		return
	}
	if t.locked == nil {
		t.locked = map[int64]bool{}
	}
	t.locked[id] = true
}

// FindAsks returns the asks matching f: pending ones first, then newest first,
// at most f.Limit of them when it is above 0. In a write transaction it locks
// the asks it returns until commit.
func (t *tx) FindAsks(ctx context.Context, f askd.AskFilter) ([]*askd.Ask, error) {
	where, args := askWhere(f)
	asks, err := t.selectAsks(ctx, "find asks", where, args, "status = 'pending' DESC, id DESC", f.Limit, t.forUpdate())
	for _, a := range asks {
		t.lock(a.ID)
	}
	return asks, err
}

// selectAsks returns the asks matching where (its arguments args, $1 on),
// in order, at most limit when it is above 0, with the locking clause lock;
// what names the read in errors.
func (t *tx) selectAsks(ctx context.Context, what, where string, args []any, order string, limit int, lock string) ([]*askd.Ask, error) {
	query := "SELECT " + askColumns + " FROM asks" + where + " ORDER BY " + order
	if limit > 0 {
		args = append(slices.Clip(args), limit)
		query += " LIMIT $" + strconv.Itoa(len(args))
	}
	rows, err := t.tx.Query(t.ctx(ctx), query+lock, args...)
	if err != nil {
		return nil, translate(err, what)
	}
	asks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*askd.Ask, error) { return scanAsk(row) })
	if err != nil {
		return nil, translate(err, what)
	}
	if asks == nil {
		asks = []*askd.Ask{}
	}
	return asks, nil
}

// CountAsks counts the asks matching f; f.Limit does not apply.
func (t *tx) CountAsks(ctx context.Context, f askd.AskFilter) (int, error) {
	where, args := askWhere(f)
	var n int
	if err := t.tx.QueryRow(t.ctx(ctx), "SELECT count(*) FROM asks"+where, args...).Scan(&n); err != nil {
		return 0, translate(err, "count asks")
	}
	return n, nil
}

// askWhere returns the WHERE clause, empty or with a leading space, for every
// field of f but Limit, and its arguments ($1, $2, ...).
func askWhere(f askd.AskFilter) (string, []any) {
	var (
		conds []string
		args  []any
	)
	// Each ? of cond is arg: a condition may use its value twice.
	add := func(cond string, arg any) {
		args = append(args, arg)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.ID != 0 {
		add("id = ?", f.ID)
	}
	switch f.Status {
	case "":
	case askd.StatusPending:
		// A literal, not a parameter: the planner can then use the partial
		// index on pending deadlines, whose condition it must prove.
		conds = append(conds, "status = 'pending'")
	default:
		add("status = ?", string(f.Status))
	}
	if f.Agent != "" {
		add("agent = ?", f.Agent)
	}
	if f.Session != "" {
		add("session = ?", f.Session)
	}
	if f.Kind != "" {
		add("kind = ?", string(f.Kind))
	}
	if f.ToolUseID != "" {
		add("tool_use_id = ?", f.ToolUseID)
	}
	if f.Key != "" {
		add("gate_key = ?", f.Key)
	}
	if f.KeyPrefix != "" {
		// starts_with compares characters exactly: no LIKE wildcards to escape.
		add("gate_key IS NOT NULL AND starts_with(gate_key, ?)", f.KeyPrefix)
	}
	if f.Before != 0 {
		add("id < ?", f.Before)
	}
	if !f.SettledBefore.IsZero() {
		add("status <> 'pending' AND settled_at < ?", f.SettledBefore)
	}
	if !f.DeadlineBefore.IsZero() {
		add("deadline < ?", f.DeadlineBefore)
	}
	if f.Routes != nil {
		add("(owner = ANY (?) OR (escalated_to <> '' AND escalated_to = ANY (?)))", f.Routes)
	}
	if !f.EscalateDue.IsZero() {
		// Team by team, each team's asks found in the partial index
		// asks_escalation by owner and up to the time its escalate_after
		// reaches back to; the rest is checked on those alone.
		conds = append(conds, "status = 'pending'", "claimed_by = ''")
		add("(snoozed_until IS NULL OR snoozed_until <= ?)", f.EscalateDue)
		add(`id IN (SELECT a.id FROM teams t JOIN asks a ON a.owner = 'team:' || t.name
			WHERE t.escalate_after > '0' AND a.updated_at <= ?::timestamptz - t.escalate_after
			AND a.status = 'pending' AND a.escalated_at IS NULL AND a.owner <> '')`, f.EscalateDue)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// CreateAsk inserts a and sets a.ID to its new id. Ids are never reused.
func (t *tx) CreateAsk(ctx context.Context, a *askd.Ask) error {
	if err := t.mustWrite("create ask"); err != nil {
		return err
	}
	values, err := askValues(a)
	if err != nil {
		return fmt.Errorf("create ask: %w", err)
	}
	if err := t.tx.QueryRow(t.ctx(ctx), insertAsk, values...).Scan(&a.ID); err != nil {
		return translate(err, "create ask")
	}
	t.lock(a.ID)
	return nil
}

// UpdateAsk replaces every stored field of ask a.ID with a's; ENOTFOUND when
// there is no such ask. In a write batch, the update of an ask the
// transaction has read or created is held back and sent with its next
// statement (see pipe): an error then comes from that statement or from
// Update.
func (t *tx) UpdateAsk(ctx context.Context, a *askd.Ask) error {
	if err := t.mustWrite("update ask"); err != nil {
		return err
	}
	values, err := askValues(a)
	if err != nil {
		return fmt.Errorf("update ask %d: %w", a.ID, err)
	}
	values = append(values, a.ID)
	check := func(tag pgconn.CommandTag, err error) error {
		if err != nil {
			return translate(err, fmt.Sprintf("update ask %d", a.ID))
		}
		if tag.RowsAffected() == 0 {
			return askd.Errorf(askd.ENOTFOUND, "ask %d not found", a.ID)
		}
		return nil
	}
	if !t.locked[a.ID] {
		// It may not exist, and a miss is not an error the server sees:
		// sent now, so that it fails the update before anything commits.
		return check(t.tx.Exec(t.ctx(ctx), updateAsk, values...))
	}
	// Held, sent with the transaction's next read or its end (pipe.go): the
	// row is there, so only a statement error, which the server sees and
	// which stops the rest of the round trip, can fail it.
	t.p.hold(updateAsk, values, func(br pgx.BatchResults) error { return check(br.Exec()) })
	return nil
}

// DeleteAsks removes at most limit of the settled asks settled before
// p.SettledBefore, those settled first first, and with them (ON DELETE
// CASCADE) their events, which stay in the audit chain purged (purge).
// Pending asks stay whatever their age.
func (t *tx) DeleteAsks(ctx context.Context, p askd.Purge, limit int) (int, error) {
	if err := t.mustWrite("delete asks"); err != nil {
		return 0, err
	}
	if limit <= 0 {
		return 0, askd.Errorf(askd.EINVALID, "delete asks: limit %d, want 1 or more", limit)
	}
	clear(t.locked) // the rows may go
	// The partial index asks_settled_at (settled_at, id), walked from its start.
	rows, err := t.tx.Query(t.ctx(ctx), `SELECT id FROM asks WHERE status <> 'pending' AND settled_at < $1
		ORDER BY settled_at, id LIMIT $2`, p.SettledBefore, limit)
	if err != nil {
		return 0, translate(err, "delete asks")
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return 0, translate(err, "delete asks")
	}
	if len(ids) == 0 {
		return 0, nil
	}
	if err := t.purge(ctx, p, ids); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM asks WHERE id = ANY($1)", ids)
	if err != nil {
		return 0, translate(err, "delete asks")
	}
	// The count is of asks only; the events that went by cascade are not in it.
	return int(tag.RowsAffected()), nil
}

// utc is *t in UTC, nil for nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// jsonColumn is v as JSON, or nil (NULL) when absent.
func jsonColumn(v any, absent bool) ([]byte, error) {
	if absent {
		return nil, nil
	}
	return json.Marshal(v)
}

// decodeColumn decodes JSON into v, leaving v alone when NULL.
func decodeColumn(b []byte, v any) error {
	if b == nil {
		return nil
	}
	return json.Unmarshal(b, v)
}
