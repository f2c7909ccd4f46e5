-- Channel bridges (docs/clients.md, "Claude Code channels"): an askd mcp
-- --channel bridge attached to a session holds a lease on it, renewed while
-- it stays attached. While one is live, settling an ask of the session writes
-- its tell delivery for the bridge (channel type "bridge"), which pushes it
-- into the running Claude Code session; with none, the session's own channel
-- is used as before. The same column as the SQLite store's 011_bridges.sql.
ALTER TABLE sessions ADD COLUMN bridge_until TIMESTAMPTZ; -- NULL: none attached
