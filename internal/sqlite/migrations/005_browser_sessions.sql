-- Signing in to the inbox (SPEC §7): a sign-in link carries a short-lived,
-- single-use code, which a browser exchanges for a browser session, whose
-- random id its cookie holds. Neither the code nor the id is stored, only
-- their hex SHA-256. Both belong to a human token and go with it when it is
-- revoked. "Browser session", not "session": that word is an agent's run.
-- The same tables as the PostgreSQL store's 005_browser_sessions.sql.
CREATE TABLE signin_codes (
    hash       TEXT    NOT NULL PRIMARY KEY,    -- hex SHA-256 of the code
    human      TEXT    NOT NULL REFERENCES tokens (name) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,                -- microseconds since the Unix epoch
    expires_at INTEGER NOT NULL
) STRICT;

CREATE TABLE browser_sessions (
    hash         TEXT    NOT NULL PRIMARY KEY,  -- hex SHA-256 of the cookie's id
    human        TEXT    NOT NULL REFERENCES tokens (name) ON DELETE CASCADE,
    created_at   INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    expires_at   INTEGER NOT NULL
) STRICT;

-- Purging expired ones; the foreign keys' cascades when a token is revoked.
CREATE INDEX signin_codes_expires_at ON signin_codes (expires_at);
CREATE INDEX signin_codes_human ON signin_codes (human);
CREATE INDEX browser_sessions_expires_at ON browser_sessions (expires_at);
CREATE INDEX browser_sessions_human ON browser_sessions (human);
