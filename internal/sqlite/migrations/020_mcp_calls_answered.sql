-- MCP calls askd answered, kept as long as an early cancellation would be,
-- so that a notifications/cancelled coming after the answer (OpenCode sends
-- one after every call) is ignored: it stores nothing and counts toward no
-- cap (SPEC §18). A call answered at once has no ask. The same column as
-- the PostgreSQL store's 021_mcp_calls_answered.sql.
ALTER TABLE mcp_calls ADD COLUMN answered INTEGER NOT NULL DEFAULT 0; -- 0 or 1
