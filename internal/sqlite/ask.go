package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/askd-dev/askd"
)

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

var (
	askColumns = "id, " + strings.Join(askFields, ", ")
	insertAsk  = "INSERT INTO asks (" + strings.Join(askFields, ", ") + ") VALUES (?" +
		strings.Repeat(", ?", len(askFields)-1) + ")"
	updateAsk = "UPDATE asks SET " + strings.Join(askFields, " = ?, ") + " = ? WHERE id = ?"
)

// askValues returns the values of a for askFields, each of a comparable type
// (updateChanged compares them with ==).
func askValues(a *askd.Ask) ([]any, error) {
	questions, err := jsonColumn(a.Questions, a.Questions == nil)
	if err != nil {
		return nil, fmt.Errorf("questions: %w", err)
	}
	options, err := jsonColumn(a.Options, a.Options == nil)
	if err != nil {
		return nil, fmt.Errorf("options: %w", err)
	}
	var payload sql.NullString
	if len(a.Payload) > 0 {
		if !json.Valid(a.Payload) {
			return nil, errors.New("payload: not valid JSON")
		}
		payload = sql.NullString{String: string(a.Payload), Valid: true}
	}
	var schema sql.NullString
	if len(a.Schema) > 0 {
		if !json.Valid(a.Schema) {
			return nil, errors.New("schema: not valid JSON")
		}
		schema = sql.NullString{String: string(a.Schema), Valid: true}
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
	toolUseID := sql.NullString{String: a.ToolUseID, Valid: a.ToolUseID != ""}
	tell := 0
	if a.ToBeTold {
		tell = 1
	}
	return []any{
		string(a.Kind), a.Session, a.Agent, string(a.Status), a.Revision,
		questions, a.Title, a.Details, options, a.Recommended, payload, a.ToolName, toolUseID,
		a.Source, schema, a.URL,
		micros(a.CreatedAt), micros(a.UpdatedAt), nullMicros(a.Deadline), nullMicros(a.SnoozedUntil),
		nullMicros(a.SettledAt), a.SettledBy, string(a.CancelReason), answer,
		tell, nullMicros(a.ToldAt),
		a.Owner, a.ClaimedBy, nullMicros(a.ClaimedAt), a.EscalatedTo, nullMicros(a.EscalatedAt),
		a.ApprovalsNeeded, approvals, a.ExcludeOwner,
		gateKey(a),
		a.AgentTool, a.NoEdit,
		a.OneCall,
	}, nil
}

// gateKey is the value of column gate_key for a: a keyed approval's key
// (SPEC §12), NULL for every other ask, so that the unique index holds only
// keyed ones.
func gateKey(a *askd.Ask) sql.NullString {
	return sql.NullString{String: a.Key, Valid: a.Kind == askd.KindApproval && a.Key != ""}
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

// scanAsk reads one row of askColumns.
func scanAsk(row scanner) (*askd.Ask, error) {
	var (
		a                                              askd.Ask
		kind, status, cancelReason                     string
		questions, options, payload, toolUseID, answer sql.NullString
		schema                                         sql.NullString
		createdAt, updatedAt                           int64
		deadline, snoozedUntil, settledAt, toldAt      sql.NullInt64
		tell                                           int64
		claimedAt, escalatedAt                         sql.NullInt64
		approvals                                      sql.NullString
		key                                            sql.NullString
	)
	err := row.Scan(&a.ID,
		&kind, &a.Session, &a.Agent, &status, &a.Revision,
		&questions, &a.Title, &a.Details, &options, &a.Recommended, &payload, &a.ToolName, &toolUseID,
		&a.Source, &schema, &a.URL,
		&createdAt, &updatedAt, &deadline, &snoozedUntil, &settledAt, &a.SettledBy, &cancelReason, &answer,
		&tell, &toldAt,
		&a.Owner, &a.ClaimedBy, &claimedAt, &a.EscalatedTo, &escalatedAt,
		&a.ApprovalsNeeded, &approvals, &a.ExcludeOwner,
		&key,
		&a.AgentTool, &a.NoEdit,
		&a.OneCall)
	if err != nil {
		return nil, err
	}
	a.Kind, a.Status, a.CancelReason = askd.Kind(kind), askd.Status(status), askd.CancelReason(cancelReason)
	a.ToolUseID = toolUseID.String
	a.Key = key.String
	a.CreatedAt, a.UpdatedAt = fromMicros(createdAt), fromMicros(updatedAt)
	a.Deadline, a.SnoozedUntil = fromNullMicros(deadline), fromNullMicros(snoozedUntil)
	a.SettledAt, a.ToldAt = fromNullMicros(settledAt), fromNullMicros(toldAt)
	a.ClaimedAt, a.EscalatedAt = fromNullMicros(claimedAt), fromNullMicros(escalatedAt)
	a.ToBeTold = tell != 0
	if payload.Valid {
		a.Payload = json.RawMessage(payload.String)
	}
	if schema.Valid {
		a.Schema = json.RawMessage(schema.String)
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
	if answer.Valid {
		a.Answer = new(askd.Answer)
		if err := json.Unmarshal([]byte(answer.String), a.Answer); err != nil {
			return nil, fmt.Errorf("ask %d answer: %w", a.ID, err)
		}
	}
	return a.WithKey(), nil
}

// Ask returns the ask with the id; ENOTFOUND when there is none.
func (t *tx) Ask(ctx context.Context, id int64) (*askd.Ask, error) {
	row := t.tx.QueryRowContext(ctx, "SELECT "+askColumns+" FROM asks WHERE id = ?", id)
	a, err := scanAsk(row)
	if err != nil {
		return nil, translate(err, fmt.Sprintf("read ask %d", id), says{notFound: fmt.Sprintf("ask %d not found", id)})
	}
	if t.writable {
		t.remember(a)
	}
	return a, nil
}

// remember keeps the values of a as stored now (askValues), for UpdateAsk to
// set only the columns that change. SQLite rewrites the entry of every index
// whose columns an UPDATE names, changed or not, and each index page touched
// is one more page for the commit to append to the WAL. Naming every column,
// a told mark rewrote the ask's entries in all of asks' indexes that hold it;
// now it names told_at and updated_at, and rewrites none (updated_at's index
// holds pending asks alone). Releasing 10,000 waiting calls took 0.81–0.91×
// the CPU (docs/benchmarks.md). Only asks read by id are kept: the writes
// that follow a read in a transaction are of those.
func (t *tx) remember(a *askd.Ask) {
	values, err := askValues(a)
	if err != nil {
		return // UpdateAsk then sets every column
	}
	if t.stored == nil {
		t.stored = map[int64][]any{}
	}
	t.stored[a.ID] = values
}

// FindAsks returns the asks matching f: pending ones first, then newest first,
// at most f.Limit of them when it is above 0.
func (t *tx) FindAsks(ctx context.Context, f askd.AskFilter) ([]*askd.Ask, error) {
	where, args := askWhere(f)
	if f.Status != "" || !f.EscalateDue.IsZero() {
		// One status (EscalateDue's asks are pending): pending first holds
		// already.
		return t.findAsks(ctx, where, args, f.Limit)
	}
	// Two queries rather than ORDER BY status = 'pending' DESC, id DESC: that
	// sorts every matching row of the whole history before LIMIT applies,
	// where these walk the status index and the ids backwards and stop early.
	asks, err := t.findAsks(ctx, and(where, "status = 'pending'"), args, f.Limit)
	if err != nil {
		return nil, err
	}
	if f.Limit > 0 && len(asks) >= f.Limit {
		return asks, nil
	}
	limit := 0
	if f.Limit > 0 {
		limit = f.Limit - len(asks)
	}
	settled, err := t.findAsks(ctx, and(where, "status <> 'pending'"), args, limit)
	if err != nil {
		return nil, err
	}
	return append(asks, settled...), nil
}

// findAsks returns the asks matching where, newest first, at most limit when
// it is above 0.
func (t *tx) findAsks(ctx context.Context, where string, args []any, limit int) ([]*askd.Ask, error) {
	return t.selectAsks(ctx, "find asks", "asks", where, args, "id DESC", limit)
}

// selectAsks returns the asks of from (asks, with any INDEXED BY) matching
// where, in order, at most limit when it is above 0; what names the read in
// errors.
func (t *tx) selectAsks(ctx context.Context, what, from, where string, args []any, order string, limit int) ([]*askd.Ask, error) {
	query := "SELECT " + askColumns + " FROM " + from + where + " ORDER BY " + order
	if limit > 0 {
		query += " LIMIT ?"
		args = append(slices.Clip(args), limit)
	}
	rows, err := t.tx.QueryContext(ctx, query, args...)
	return collect(rows, err, what, scanAsk)
}

// and adds cond to a WHERE clause made by askWhere.
func and(where, cond string) string {
	if where == "" {
		return " WHERE " + cond
	}
	return where + " AND " + cond
}

// CountAsks counts the asks matching f; f.Limit does not apply.
func (t *tx) CountAsks(ctx context.Context, f askd.AskFilter) (int, error) {
	where, args := askWhere(f)
	var n int
	if err := t.tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM asks"+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count asks: %w", err)
	}
	return n, nil
}

// askWhere returns the WHERE clause, empty or with a leading space, for every
// field of f but Limit, and its arguments.
func askWhere(f askd.AskFilter) (string, []any) {
	var (
		conds []string
		args  []any
	)
	add := func(cond string, arg any) {
		conds = append(conds, cond)
		args = append(args, arg)
	}
	if f.ID != 0 {
		add("id = ?", f.ID)
	}
	switch f.Status {
	case "":
	case askd.StatusPending:
		// A literal, not a parameter: SQLite considers the partial index on
		// pending deadlines only for a query that states its condition.
		// Not with EscalateDue, whose asks are pending already (below).
		if f.EscalateDue.IsZero() {
			conds = append(conds, "status = 'pending'")
		}
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
		// substr counts characters, as len(KeyPrefix) in runes does.
		conds = append(conds, "gate_key IS NOT NULL AND substr(gate_key, 1, ?) = ?")
		args = append(args, utf8.RuneCountInString(f.KeyPrefix), f.KeyPrefix)
	}
	if f.Before != 0 {
		add("id < ?", f.Before)
	}
	if !f.SettledBefore.IsZero() {
		// settled_at < ? also implies settled_at IS NOT NULL, the condition of
		// its partial index.
		add("status <> 'pending' AND settled_at < ?", micros(f.SettledBefore))
	}
	if !f.DeadlineBefore.IsZero() {
		add("deadline < ?", micros(f.DeadlineBefore))
	}
	if f.Routes != nil {
		routes := jsonList(f.Routes)
		conds = append(conds, `(owner IN (SELECT value FROM json_each(?))
			OR (escalated_to <> '' AND escalated_to IN (SELECT value FROM json_each(?))))`)
		args = append(args, routes, routes)
	}
	if !f.EscalateDue.IsZero() {
		// Team by team (the CROSS JOIN keeps teams the outer loop), each
		// team's asks found in the partial index asks_escalation by owner
		// and up to the time its escalate_after reaches back to; the rest
		// is checked on those alone, found by id. Their status is said only
		// in the subquery: status = 'pending' out here would make SQLite
		// walk every pending ask by the index on status instead.
		due := micros(f.EscalateDue)
		conds = append(conds, "claimed_by = ''", "(snoozed_until IS NULL OR snoozed_until <= ?)",
			`id IN (SELECT a.id FROM teams t CROSS JOIN asks a
				WHERE t.escalate_after > 0 AND a.owner = 'team:' || t.name AND a.updated_at <= ? - t.escalate_after
				AND a.status = 'pending' AND a.escalated_at IS NULL AND a.owner <> '')`)
		args = append(args, due, due)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// jsonList is list as JSON, [] when nil (json_each reads null as one
// NULL), for json_each: one query text however long the list, so one
// prepared statement.
func jsonList(list []string) string {
	if list == nil {
		return "[]"
	}
	b, _ := json.Marshal(list) // a list of strings always marshals
	return string(b)
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
	res, err := t.tx.ExecContext(ctx, insertAsk, values...)
	if err != nil {
		return translate(err, "create ask", says{dupe: "the agent token has an approval holding this key"})
	}
	if !a.Pending() {
		t.settled++
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("create ask: %w", err)
	}
	a.ID = id
	return nil
}

// UpdateAsk replaces every stored field of ask a.ID with a's; ENOTFOUND when
// there is no such ask.
func (t *tx) UpdateAsk(ctx context.Context, a *askd.Ask) error {
	if err := t.mustWrite("update ask"); err != nil {
		return err
	}
	values, err := askValues(a)
	if err != nil {
		return fmt.Errorf("update ask %d: %w", a.ID, err)
	}
	query, args := updateAsk, append(values, a.ID)
	if stored, ok := t.stored[a.ID]; ok {
		query, args = updateChanged(stored, values, a.ID)
		t.stored[a.ID] = values
	}
	if !a.Pending() {
		t.settled++
	}
	if query == "" {
		return nil // nothing changed since this transaction read it
	}
	res, err := t.tx.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("update ask %d: %w", a.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update ask %d: %w", a.ID, err)
	}
	if n == 0 {
		return askd.Errorf(askd.ENOTFOUND, "ask %d not found", a.ID)
	}
	return nil
}

// updateChanged is the UPDATE of ask id that sets the columns whose values
// differ between stored and values (both askValues), and its arguments; ""
// when none differ.
func updateChanged(stored, values []any, id int64) (string, []any) {
	var set strings.Builder
	var args []any
	for i, v := range values {
		if v == stored[i] {
			continue
		}
		if len(args) > 0 {
			set.WriteString(", ")
		}
		set.WriteString(askFields[i])
		set.WriteString(" = ?")
		args = append(args, v)
	}
	if len(args) == 0 {
		return "", nil
	}
	return "UPDATE asks SET " + set.String() + " WHERE id = ?", append(args, id)
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
	// The partial index asks_settled_at, walked from its start.
	rows, err := t.tx.QueryContext(ctx, `SELECT id FROM asks WHERE status <> 'pending' AND settled_at < ?
		ORDER BY settled_at, id LIMIT ?`, micros(p.SettledBefore), limit)
	if err != nil {
		return 0, fmt.Errorf("delete asks: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("delete asks: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("delete asks: %w", err)
	}
	if len(ids) == 0 {
		return 0, nil
	}
	list := idList(ids)
	if err := t.purge(ctx, p, list); err != nil {
		return 0, err
	}
	res, err := t.tx.ExecContext(ctx, "DELETE FROM asks WHERE id IN (SELECT value FROM json_each(?))", list)
	if err != nil {
		return 0, fmt.Errorf("delete asks: %w", err)
	}
	// SQLite counts only the rows the statement deleted itself, not the
	// events that went by cascade.
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("delete asks: %w", err)
	}
	return int(n), nil
}

// idList is ids as a JSON array, for json_each: one argument however many.
func idList(ids []int64) string {
	b := make([]byte, 0, 8*len(ids)+2)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, ']'))
}

// micros is t as stored: microseconds since the Unix epoch.
func micros(t time.Time) int64 { return t.UnixMicro() }

// nullMicros is *t as stored, NULL when t is nil.
func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

// fromMicros is the stored time n, in UTC.
func fromMicros(n int64) time.Time { return time.UnixMicro(n).UTC() }

// fromNullMicros is the stored time n, nil when NULL.
func fromNullMicros(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromMicros(n.Int64)
	return &t
}

// jsonColumn is v as JSON text, or NULL when absent.
func jsonColumn(v any, absent bool) (sql.NullString, error) {
	if absent {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// decodeColumn decodes JSON text into v, leaving v alone when NULL.
func decodeColumn(s sql.NullString, v any) error {
	if !s.Valid {
		return nil
	}
	return json.Unmarshal([]byte(s.String), v)
}
