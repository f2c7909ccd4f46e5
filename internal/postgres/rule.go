package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

const ruleColumns = "id, agent, session, tool, match_by, prefix, title, effect, ask_id, created_by, created_at, expires_at, revoked_at, revoked_by"

// CreateRule stores r and sets r.ID; ENOTFOUND when no token is named
// r.Agent or r.CreatedBy.
func (t *tx) CreateRule(ctx context.Context, r *askd.Rule) error {
	if err := t.mustWrite("create rule"); err != nil {
		return err
	}
	err := t.tx.QueryRow(t.ctx(ctx), `
		INSERT INTO rules (agent, session, tool, match_by, prefix, title, effect, ask_id, created_by, created_at, expires_at, revoked_at, revoked_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
		r.Agent, r.Session, r.Tool, string(r.Match), r.Prefix, r.Title, string(r.Effect), r.AskID, r.CreatedBy,
		r.CreatedAt, r.ExpiresAt, r.RevokedAt, r.RevokedBy).Scan(&r.ID)
	if foreignKeyViolation(err) {
		return askd.Errorf(askd.ENOTFOUND, "no token named %q or %q", r.Agent, r.CreatedBy)
	}
	if err != nil {
		return translate(err, "create rule")
	}
	return nil
}

// Rule returns the rule with the id; ENOTFOUND when there is none.
func (t *tx) Rule(ctx context.Context, id int64) (*askd.Rule, error) {
	row := t.tx.QueryRow(t.ctx(ctx), "SELECT "+ruleColumns+" FROM rules WHERE id = $1", id)
	r, err := scanRule(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "rule %d not found", id)
	}
	if err != nil {
		return nil, translate(err, fmt.Sprintf("read rule %d", id))
	}
	return r, nil
}

// FindRules returns the rules matching f, oldest first.
func (t *tx) FindRules(ctx context.Context, f askd.RuleFilter) ([]*askd.Rule, error) {
	var (
		conds []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Agent != "" {
		conds = append(conds, "agent = "+arg(f.Agent))
	}
	if f.Session != "" {
		conds = append(conds, "session = "+arg(f.Session))
	}
	if !f.LiveAt.IsZero() {
		conds = append(conds, "revoked_at IS NULL AND expires_at > "+arg(f.LiveAt))
	}
	query := "SELECT " + ruleColumns + " FROM rules"
	if len(conds) > 0 {
		query += " WHERE " + strings.Join(conds, " AND ")
	}
	rows, err := t.tx.Query(t.ctx(ctx), query+" ORDER BY id", args...)
	if err != nil {
		return nil, translate(err, "find rules")
	}
	rules, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*askd.Rule, error) { return scanRule(row) })
	if err != nil {
		return nil, translate(err, "find rules")
	}
	if rules == nil {
		rules = []*askd.Rule{}
	}
	return rules, nil
}

// UpdateRule replaces rule r.ID's expiry and revocation; ENOTFOUND when
// there is none.
func (t *tx) UpdateRule(ctx context.Context, r *askd.Rule) error {
	if err := t.mustWrite("update rule"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "UPDATE rules SET expires_at = $1, revoked_at = $2, revoked_by = $3 WHERE id = $4",
		r.ExpiresAt, r.RevokedAt, r.RevokedBy, r.ID)
	if err != nil {
		return translate(err, fmt.Sprintf("update rule %d", r.ID))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "rule %d not found", r.ID)
	}
	return nil
}

// scanRule reads one row of ruleColumns.
func scanRule(row pgx.Row) (*askd.Rule, error) {
	var (
		r             askd.Rule
		match, effect string
		revoked       *time.Time
	)
	err := row.Scan(&r.ID, &r.Agent, &r.Session, &r.Tool, &match, &r.Prefix, &r.Title, &effect, &r.AskID, &r.CreatedBy,
		&r.CreatedAt, &r.ExpiresAt, &revoked, &r.RevokedBy)
	if err != nil {
		return nil, err
	}
	r.Match, r.Effect = askd.RuleMatch(match), askd.RuleEffect(effect)
	r.CreatedAt, r.ExpiresAt, r.RevokedAt = r.CreatedAt.UTC(), r.ExpiresAt.UTC(), utc(revoked)
	return &r, nil
}
