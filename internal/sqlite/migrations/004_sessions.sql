-- Sessions belong to agent tokens (SPEC §1): a session is the pair (agent
-- token's name, session name), so the same name sent with two tokens is two
-- sessions. The same tables, columns and meanings as the PostgreSQL store's
-- 004_sessions.sql.
--
-- sessions records each (agent, name) pair once, when it is first used (its
-- first ask, or its channel set by a launcher), which is what the per-token
-- cap on new sessions per minute counts; and it holds the session's delivery
-- channel, which moves here from channels (keyed by name alone).
CREATE TABLE sessions (
    agent              TEXT    NOT NULL,
    name               TEXT    NOT NULL,
    created_at         INTEGER NOT NULL,       -- microseconds since the Unix epoch
    channel            TEXT,                   -- JSON; NULL: the server's default
    channel_updated_at INTEGER,
    PRIMARY KEY (agent, name)
) STRICT;

-- New sessions of one agent in the last minute.
CREATE INDEX sessions_agent_created_at ON sessions (agent, created_at);

-- Every session that has asks, under the agent whose asks they are: a name
-- used by several tokens splits into one session each.
INSERT INTO sessions (agent, name, created_at)
    SELECT agent, session, MIN(created_at) FROM asks GROUP BY agent, session;

-- A channel set on a name that exactly one token's asks use goes to that
-- token's session. Where several tokens used the name, nothing tells which
-- of them set it, and giving it to all would send one agent's answers to the
-- webhook another chose: those sessions fall back to the server's default
-- channel (their answers wait for check_ask or the Stop hook; none is lost).
-- A channel on a name without asks has no owner to give it to and goes too.
UPDATE sessions SET
    channel = (SELECT c.channel FROM channels c WHERE c.session = sessions.name),
    channel_updated_at = (SELECT c.updated_at FROM channels c WHERE c.session = sessions.name)
WHERE name IN (SELECT session FROM asks GROUP BY session HAVING COUNT(DISTINCT agent) = 1)
  AND name IN (SELECT session FROM channels);

DROP TABLE channels;

-- Lookups for an agent name both the agent and the session.
DROP INDEX asks_status_session;
DROP INDEX asks_session_kind_status;
-- The inbox (pending asks), and an agent's pending asks across its sessions
-- (the per-token cap).
CREATE INDEX asks_status_agent_session ON asks (status, agent, session);
-- One pending attention ask per session, and check_ask {} on a session.
CREATE INDEX asks_agent_session_kind_status ON asks (agent, session, kind, status);
