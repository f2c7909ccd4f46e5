-- The audit chain's second version (audit.go): a row's hash covers its ask,
-- action and time, and the hash of its session, actor and note (its body).
-- A --retain purge no longer takes rows out of the chain: it moves each row
-- of the asks it removes to audit_purged, keeping its place (id), ask,
-- action, time and hash with its body, so that verify still walks every
-- row ever written and a deletion cannot be passed off as a purge. The same
-- tables as the PostgreSQL store's 018_audit_purged.sql.
--
-- events.chain is 2 for a row hashed in the second version; NULL for the
-- rows written before it, whose hashes cover their session, actor and note
-- themselves: a purge keeps those whole.
ALTER TABLE events ADD COLUMN chain INTEGER;

CREATE TABLE audit_purged (
    id      INTEGER PRIMARY KEY, -- the history row's id, never reused (events' AUTOINCREMENT)
    ask_id  INTEGER NOT NULL,    -- the purged ask's (no longer in asks)
    action  TEXT    NOT NULL,
    at      INTEGER NOT NULL,
    body    TEXT,                -- askd.AuditBody of what was removed; NULL for a first-version row
    session TEXT,                -- a first-version row's, kept; NULL otherwise
    actor   TEXT,
    note    TEXT,
    hash    TEXT    NOT NULL
) STRICT;
