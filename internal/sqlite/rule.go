package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/askd-dev/askd"
)

const ruleColumns = "id, agent, session, tool, match_by, prefix, title, effect, ask_id, created_by, created_at, expires_at, revoked_at, revoked_by"

// CreateRule stores r and sets r.ID; ENOTFOUND when no token is named
// r.Agent or r.CreatedBy.
func (t *tx) CreateRule(ctx context.Context, r *askd.Rule) error {
	if err := t.mustWrite("create rule"); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, `
		INSERT INTO rules (agent, session, tool, match_by, prefix, title, effect, ask_id, created_by, created_at, expires_at, revoked_at, revoked_by)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Agent, r.Session, r.Tool, string(r.Match), r.Prefix, r.Title, string(r.Effect), r.AskID, r.CreatedBy,
		micros(r.CreatedAt), micros(r.ExpiresAt), nullMicros(r.RevokedAt), r.RevokedBy)
	if err != nil {
		return translate(err, "create rule", says{missing: fmt.Sprintf("no token named %q or %q", r.Agent, r.CreatedBy)})
	}
	if r.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("create rule: %w", err)
	}
	return nil
}

// Rule returns the rule with the id; ENOTFOUND when there is none.
func (t *tx) Rule(ctx context.Context, id int64) (*askd.Rule, error) {
	row := t.tx.QueryRowContext(ctx, "SELECT "+ruleColumns+" FROM rules WHERE id = ?", id)
	r, err := scanRule(row)
	if err != nil {
		return nil, translate(err, fmt.Sprintf("read rule %d", id), says{notFound: fmt.Sprintf("rule %d not found", id)})
	}
	return r, nil
}

// FindRules returns the rules matching f, oldest first.
func (t *tx) FindRules(ctx context.Context, f askd.RuleFilter) ([]*askd.Rule, error) {
	var (
		conds []string
		args  []any
	)
	if f.Agent != "" {
		conds, args = append(conds, "agent = ?"), append(args, f.Agent)
	}
	if f.Session != "" {
		conds, args = append(conds, "session = ?"), append(args, f.Session)
	}
	if !f.LiveAt.IsZero() {
		conds, args = append(conds, "revoked_at IS NULL AND expires_at > ?"), append(args, micros(f.LiveAt))
	}
	query := "SELECT " + ruleColumns + " FROM rules"
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := t.tx.QueryContext(ctx, query+" ORDER BY id", args...)
	return collect(rows, err, "find rules", scanRule)
}

// UpdateRule replaces rule r.ID's expiry and revocation; ENOTFOUND when
// there is none.
func (t *tx) UpdateRule(ctx context.Context, r *askd.Rule) error {
	if err := t.mustWrite("update rule"); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, "UPDATE rules SET expires_at = ?, revoked_at = ?, revoked_by = ? WHERE id = ?",
		micros(r.ExpiresAt), nullMicros(r.RevokedAt), r.RevokedBy, r.ID)
	if err != nil {
		return fmt.Errorf("update rule %d: %w", r.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update rule %d: %w", r.ID, err)
	}
	if n == 0 {
		return askd.Errorf(askd.ENOTFOUND, "rule %d not found", r.ID)
	}
	return nil
}

// scanRule reads one row of ruleColumns.
func scanRule(row scanner) (*askd.Rule, error) {
	var (
		r                askd.Rule
		match, effect    string
		created, expires int64
		revoked          sql.NullInt64
	)
	err := row.Scan(&r.ID, &r.Agent, &r.Session, &r.Tool, &match, &r.Prefix, &r.Title, &effect, &r.AskID, &r.CreatedBy,
		&created, &expires, &revoked, &r.RevokedBy)
	if err != nil {
		return nil, err
	}
	r.Match, r.Effect = askd.RuleMatch(match), askd.RuleEffect(effect)
	r.CreatedAt, r.ExpiresAt, r.RevokedAt = fromMicros(created), fromMicros(expires), fromNullMicros(revoked)
	return &r, nil
}
