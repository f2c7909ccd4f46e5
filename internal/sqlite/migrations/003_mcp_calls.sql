-- Blocking MCP calls of clients on protocol revisions before 2026-07-28,
-- which cancel a call with a separate notifications/cancelled request that
-- may reach another askd process than the one holding the call (PostgreSQL,
-- behind a load balancer). On SQLite one process serves them all, but the
-- calls are kept the same way, so both stores behave alike. The same table
-- as the PostgreSQL store's 003_mcp_calls.sql.
CREATE TABLE mcp_calls (
    agent       TEXT    NOT NULL,
    session     TEXT    NOT NULL,
    mcp_session TEXT    NOT NULL,               -- the Mcp-Session-Id askd handed out
    request_id  TEXT    NOT NULL,               -- the JSON-RPC id, as raw JSON
    -- NULL while only the cancellation is known (it overtook the call).
    ask_id      INTEGER REFERENCES asks (id) ON DELETE CASCADE,
    cancelled   INTEGER NOT NULL DEFAULT 0,     -- 0 or 1
    created_at  INTEGER NOT NULL,               -- microseconds since the Unix epoch
    PRIMARY KEY (agent, session, mcp_session, request_id)
) STRICT;

-- Purging leftovers: calls of a process that died, cancellations of calls
-- that never came.
CREATE INDEX mcp_calls_created_at ON mcp_calls (created_at);
-- The foreign key's cascade when asks are purged.
CREATE INDEX mcp_calls_ask_id ON mcp_calls (ask_id) WHERE ask_id IS NOT NULL;
