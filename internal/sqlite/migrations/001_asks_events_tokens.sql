-- Asks, their history, and tokens.
--
-- Times are INTEGER microseconds since the Unix epoch, UTC: they compare and
-- index as plain integers, and microseconds are what PostgreSQL's timestamptz
-- keeps, so both stores round-trip the same instant. Lists and objects (questions,
-- options, payload, answer, the event snapshot) are JSON text. Tables are STRICT
-- so a value of the wrong type is an error, not a silent conversion.

CREATE TABLE asks (
    -- AUTOINCREMENT: an id is never handed out twice, even after the newest
    -- asks were purged, so an agent holding an old id never sees someone else's ask.
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    kind          TEXT    NOT NULL,
    session       TEXT    NOT NULL,
    agent         TEXT    NOT NULL,
    status        TEXT    NOT NULL,
    revision      INTEGER NOT NULL DEFAULT 1,

    questions     TEXT,                       -- JSON list, question asks
    title         TEXT    NOT NULL DEFAULT '',
    details       TEXT    NOT NULL DEFAULT '',
    options       TEXT,                       -- JSON list, decision asks
    recommended   TEXT    NOT NULL DEFAULT '',
    payload       TEXT,                       -- JSON object, approvals
    tool_name     TEXT    NOT NULL DEFAULT '',
    tool_use_id   TEXT,                       -- NULL when none, so its index stays small

    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    deadline      INTEGER,
    snoozed_until INTEGER,
    settled_at    INTEGER,
    settled_by    TEXT    NOT NULL DEFAULT '',
    cancel_reason TEXT    NOT NULL DEFAULT '',
    answer        TEXT,                       -- JSON object

    tell          INTEGER NOT NULL DEFAULT 0, -- 0 or 1
    told_at       INTEGER
) STRICT;

-- The inbox: pending asks, by session.
CREATE INDEX asks_status_session ON asks (status, session);
-- One pending attention ask per session, and check_ask {} on a session.
CREATE INDEX asks_session_kind_status ON asks (session, kind, status);
-- permission_prompt retries re-attach by tool_use_id.
CREATE INDEX asks_tool_use_id ON asks (tool_use_id) WHERE tool_use_id IS NOT NULL;
-- The expiry sweep looks only at pending asks with a deadline.
CREATE INDEX asks_deadline ON asks (deadline) WHERE status = 'pending';
-- Purging settled asks past the retention period.
CREATE INDEX asks_settled_at ON asks (settled_at) WHERE settled_at IS NOT NULL;

CREATE TABLE events (
    id       INTEGER PRIMARY KEY AUTOINCREMENT, -- SSE ids: never reused, or Last-Event-ID could skip events
    ask_id   INTEGER NOT NULL REFERENCES asks (id) ON DELETE CASCADE,
    session  TEXT    NOT NULL,
    action   TEXT    NOT NULL,
    actor    TEXT    NOT NULL DEFAULT '',
    at       INTEGER NOT NULL,
    note     TEXT    NOT NULL DEFAULT '',
    snapshot TEXT                               -- JSON of the ask right after the event
) STRICT;

CREATE INDEX events_ask_id ON events (ask_id, id);

CREATE TABLE tokens (
    name       TEXT    NOT NULL PRIMARY KEY,
    role       TEXT    NOT NULL,
    hash       TEXT    NOT NULL UNIQUE,         -- hex SHA-256; the token itself is never stored
    created_at INTEGER NOT NULL
) STRICT;
