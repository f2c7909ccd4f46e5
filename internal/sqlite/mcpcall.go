package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/askd-dev/askd"
)

// MCPCall returns the call with key k; ENOTFOUND when none is kept.
func (t *tx) MCPCall(ctx context.Context, k askd.MCPCallKey) (*askd.MCPCall, error) {
	c := &askd.MCPCall{MCPCallKey: k}
	var (
		ask       sql.NullInt64
		cancelled int64
		answered  int64
		created   int64
	)
	err := t.tx.QueryRowContext(ctx, `
		SELECT ask_id, cancelled, answered, created_at FROM mcp_calls
		WHERE agent = ? AND session = ? AND mcp_session = ? AND request_id = ?`,
		k.Agent, k.Session, k.MCPSession, k.RequestID).Scan(&ask, &cancelled, &answered, &created)
	if err != nil {
		return nil, translate(err, "read MCP call", says{notFound: "MCP call not found"})
	}
	c.AskID = ask.Int64
	c.Cancelled = cancelled != 0
	c.Answered = answered != 0
	c.CreatedAt = fromMicros(created)
	return c, nil
}

// PutMCPCall stores c, replacing the call with its key.
func (t *tx) PutMCPCall(ctx context.Context, c *askd.MCPCall) error {
	if err := t.mustWrite("put MCP call"); err != nil {
		return err
	}
	var ask sql.NullInt64
	if c.AskID != 0 {
		ask = sql.NullInt64{Int64: c.AskID, Valid: true}
	}
	cancelled, answered := 0, 0
	if c.Cancelled {
		cancelled = 1
	}
	if c.Answered {
		answered = 1
	}
	_, err := t.tx.ExecContext(ctx, `
		INSERT INTO mcp_calls (agent, session, mcp_session, request_id, ask_id, cancelled, answered, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (agent, session, mcp_session, request_id) DO UPDATE
		SET ask_id = excluded.ask_id, cancelled = excluded.cancelled, answered = excluded.answered, created_at = excluded.created_at`,
		c.Agent, c.Session, c.MCPSession, c.RequestID, ask, cancelled, answered, micros(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("put MCP call: %w", err)
	}
	return nil
}

// DeleteMCPCall removes the call with key k, if one is kept.
func (t *tx) DeleteMCPCall(ctx context.Context, k askd.MCPCallKey) error {
	if err := t.mustWrite("delete MCP call"); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `
		DELETE FROM mcp_calls
		WHERE agent = ? AND session = ? AND mcp_session = ? AND request_id = ?`,
		k.Agent, k.Session, k.MCPSession, k.RequestID)
	if err != nil {
		return fmt.Errorf("delete MCP call: %w", err)
	}
	return nil
}

// CountEarlyCancellations returns how many of agent's calls are kept
// without an ask and not answered (the primary key's agent prefix finds
// them).
func (t *tx) CountEarlyCancellations(ctx context.Context, agent string) (int, error) {
	var n int
	if err := t.tx.QueryRowContext(ctx, "SELECT count(*) FROM mcp_calls WHERE agent = ? AND ask_id IS NULL AND answered = 0", agent).Scan(&n); err != nil {
		return 0, fmt.Errorf("count early cancellations of %q: %w", agent, err)
	}
	return n, nil
}

// PurgeMCPCalls removes every call created before createdBefore, and returns
// how many went.
func (t *tx) PurgeMCPCalls(ctx context.Context, createdBefore time.Time) (int, error) {
	if err := t.mustWrite("purge MCP calls"); err != nil {
		return 0, err
	}
	res, err := t.tx.ExecContext(ctx, "DELETE FROM mcp_calls WHERE created_at < ?", micros(createdBefore))
	if err != nil {
		return 0, fmt.Errorf("purge MCP calls: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("purge MCP calls: %w", err)
	}
	return int(n), nil
}
