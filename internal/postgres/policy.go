package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

const policyColumns = "id, match_by, tool, prefix, title, agent, team, approvals, exclude_owner, created_by, created_at"

// CreatePolicy stores p and sets p.ID.
func (t *tx) CreatePolicy(ctx context.Context, p *askd.Policy) error {
	if err := t.mustWrite("create policy"); err != nil {
		return err
	}
	err := t.tx.QueryRow(t.ctx(ctx), `
		INSERT INTO policies (match_by, tool, prefix, title, agent, team, approvals, exclude_owner, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		string(p.Match), p.Tool, p.Prefix, p.Title, p.Agent, p.Team, p.Approvals, p.ExcludeOwner, p.CreatedBy, p.CreatedAt).Scan(&p.ID)
	return translate(err, "create policy")
}

// Policies returns every policy, oldest first.
func (t *tx) Policies(ctx context.Context) ([]*askd.Policy, error) {
	rows, err := t.tx.Query(t.ctx(ctx), "SELECT "+policyColumns+" FROM policies ORDER BY id")
	return collect(rows, err, "list policies", func(row pgx.CollectableRow) (*askd.Policy, error) { return scanPolicy(row) })
}

// DeletePolicy removes policy id; ENOTFOUND when there is none.
func (t *tx) DeletePolicy(ctx context.Context, id int64) error {
	if err := t.mustWrite("delete policy"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM policies WHERE id = $1", id)
	if err != nil {
		return translate(err, fmt.Sprintf("delete policy %d", id))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "policy %d not found", id)
	}
	return nil
}

// scanPolicy reads one row of policyColumns.
func scanPolicy(row pgx.Row) (*askd.Policy, error) {
	var (
		p     askd.Policy
		match string
	)
	err := row.Scan(&p.ID, &match, &p.Tool, &p.Prefix, &p.Title, &p.Agent, &p.Team, &p.Approvals, &p.ExcludeOwner, &p.CreatedBy, &p.CreatedAt)
	if err != nil {
		return nil, err
	}
	p.Match, p.CreatedAt = askd.RuleMatch(match), p.CreatedAt.UTC()
	return &p, nil
}
