package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

// MCPCall returns the call with key k; ENOTFOUND when none is kept.
func (t *tx) MCPCall(ctx context.Context, k askd.MCPCallKey) (*askd.MCPCall, error) {
	c := &askd.MCPCall{MCPCallKey: k}
	var ask *int64
	err := t.tx.QueryRow(t.ctx(ctx), `
		SELECT ask_id, cancelled, answered, created_at FROM mcp_calls
		WHERE agent = $1 AND session = $2 AND mcp_session = $3 AND request_id = $4`+t.forUpdate(),
		k.Agent, k.Session, k.MCPSession, k.RequestID).Scan(&ask, &c.Cancelled, &c.Answered, &c.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "MCP call not found")
	}
	if err != nil {
		return nil, translate(err, "read MCP call")
	}
	if ask != nil {
		c.AskID = *ask
	}
	c.CreatedAt = c.CreatedAt.UTC()
	return c, nil
}

// PutMCPCall stores c, replacing the call with its key.
func (t *tx) PutMCPCall(ctx context.Context, c *askd.MCPCall) error {
	if err := t.mustWrite("put MCP call"); err != nil {
		return err
	}
	var ask *int64
	if c.AskID != 0 {
		ask = &c.AskID
	}
	_, err := t.tx.Exec(t.ctx(ctx), `
		INSERT INTO mcp_calls (agent, session, mcp_session, request_id, ask_id, cancelled, answered, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (agent, session, mcp_session, request_id) DO UPDATE
		SET ask_id = EXCLUDED.ask_id, cancelled = EXCLUDED.cancelled, answered = EXCLUDED.answered, created_at = EXCLUDED.created_at`,
		c.Agent, c.Session, c.MCPSession, c.RequestID, ask, c.Cancelled, c.Answered, c.CreatedAt)
	return translate(err, "put MCP call")
}

// DeleteMCPCall removes the call with key k, if one is kept.
func (t *tx) DeleteMCPCall(ctx context.Context, k askd.MCPCallKey) error {
	if err := t.mustWrite("delete MCP call"); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx(ctx), `
		DELETE FROM mcp_calls
		WHERE agent = $1 AND session = $2 AND mcp_session = $3 AND request_id = $4`,
		k.Agent, k.Session, k.MCPSession, k.RequestID)
	return translate(err, "delete MCP call")
}

// CountEarlyCancellations returns how many of agent's calls are kept
// without an ask and not answered (the primary key's agent prefix finds
// them).
func (t *tx) CountEarlyCancellations(ctx context.Context, agent string) (int, error) {
	var n int
	if err := t.tx.QueryRow(t.ctx(ctx), "SELECT count(*) FROM mcp_calls WHERE agent = $1 AND ask_id IS NULL AND NOT answered", agent).Scan(&n); err != nil {
		return 0, translate(err, fmt.Sprintf("count early cancellations of %q", agent))
	}
	return n, nil
}

// PurgeMCPCalls removes every call created before createdBefore, and returns
// how many went.
func (t *tx) PurgeMCPCalls(ctx context.Context, createdBefore time.Time) (int, error) {
	if err := t.mustWrite("purge MCP calls"); err != nil {
		return 0, err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM mcp_calls WHERE created_at < $1", createdBefore)
	if err != nil {
		return 0, translate(err, "purge MCP calls")
	}
	return int(tag.RowsAffected()), nil
}
