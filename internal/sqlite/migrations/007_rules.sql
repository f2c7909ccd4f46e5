-- Rules: a person's standing answers to one session's approvals ("always
-- allow npm test in this session for 8h"). A rule belongs to one session,
-- the pair (agent token's name, session name), and answers only its asks.
-- Revoking a rule keeps its row (revoked_at, revoked_by) so that the asks it
-- answered still name a rule one can look up; revoking the agent token, or
-- the human token of the person who made it, deletes it. The same table as
-- the PostgreSQL store's 007_rules.sql.
CREATE TABLE rules (
    -- AUTOINCREMENT: an id is never handed out twice, so "allowed by rule 3"
    -- in an ask's history always means the same rule.
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    agent      TEXT    NOT NULL REFERENCES tokens (name) ON DELETE CASCADE,
    session    TEXT    NOT NULL,
    tool       TEXT    NOT NULL DEFAULT '', -- tool and prefix rules
    match_by   TEXT    NOT NULL,            -- tool, prefix or title ("match" is SQL's)
    prefix     TEXT    NOT NULL DEFAULT '',
    title      TEXT    NOT NULL DEFAULT '',
    effect     TEXT    NOT NULL,            -- allow or deny
    ask_id     INTEGER NOT NULL,            -- made from; no foreign key: purging the ask keeps the rule
    created_by TEXT    NOT NULL REFERENCES tokens (name) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,            -- microseconds since the Unix epoch
    expires_at INTEGER NOT NULL,
    revoked_at INTEGER,
    revoked_by TEXT    NOT NULL DEFAULT ''
) STRICT;

-- A new approval looks up its session's live rules.
CREATE INDEX rules_agent_session_expires_at ON rules (agent, session, expires_at);
-- The foreign keys' cascades when a token is revoked.
CREATE INDEX rules_created_by ON rules (created_by);
