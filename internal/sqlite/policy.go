package sqlite

import (
	"context"
	"fmt"

	"github.com/askd-dev/askd"
)

const policyColumns = "id, match_by, tool, prefix, title, agent, team, approvals, exclude_owner, created_by, created_at"

// CreatePolicy stores p and sets p.ID.
func (t *tx) CreatePolicy(ctx context.Context, p *askd.Policy) error {
	if err := t.mustWrite("create policy"); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, `
		INSERT INTO policies (match_by, tool, prefix, title, agent, team, approvals, exclude_owner, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		string(p.Match), p.Tool, p.Prefix, p.Title, p.Agent, p.Team, p.Approvals, p.ExcludeOwner, p.CreatedBy, micros(p.CreatedAt))
	if err != nil {
		return translate(err, "create policy", says{})
	}
	if p.ID, err = res.LastInsertId(); err != nil {
		return fmt.Errorf("create policy: %w", err)
	}
	return nil
}

// Policies returns every policy, oldest first.
func (t *tx) Policies(ctx context.Context) ([]*askd.Policy, error) {
	rows, err := t.tx.QueryContext(ctx, "SELECT "+policyColumns+" FROM policies ORDER BY id")
	return collect(rows, err, "list policies", scanPolicy)
}

// DeletePolicy removes policy id; ENOTFOUND when there is none.
func (t *tx) DeletePolicy(ctx context.Context, id int64) error {
	if err := t.mustWrite("delete policy"); err != nil {
		return err
	}
	res, err := t.tx.ExecContext(ctx, "DELETE FROM policies WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("delete policy %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("delete policy %d: %w", id, err)
	}
	if n == 0 {
		return askd.Errorf(askd.ENOTFOUND, "policy %d not found", id)
	}
	return nil
}

// scanPolicy reads one row of policyColumns.
func scanPolicy(row scanner) (*askd.Policy, error) {
	var (
		p       askd.Policy
		match   string
		created int64
	)
	err := row.Scan(&p.ID, &match, &p.Tool, &p.Prefix, &p.Title, &p.Agent, &p.Team, &p.Approvals, &p.ExcludeOwner, &p.CreatedBy, &created)
	if err != nil {
		return nil, err
	}
	p.Match, p.CreatedAt = askd.RuleMatch(match), fromMicros(created)
	return &p, nil
}
