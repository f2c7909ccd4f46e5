-- The audit trail (SPEC §11): every history row carries hash, the hex
-- SHA-256 of its content and the previous row's hash (askd.AuditContent),
-- one chain per database. A change of configuration is a row with no ask
-- (ask_id NULL), so events is rebuilt with ask_id nullable: SQLite cannot
-- drop a NOT NULL in place.
--
-- SQLite has no SHA-256 in SQL, so the store computes each hash in Go, in
-- the transaction that writes the row (AddEvent). The rows already here are
-- chained, oldest first, by the store right after this migration, in the
-- same transaction (chainUnhashed in migrate.go): the chain starts at the
-- first row the database ever kept.
CREATE TABLE events_audit (
    id       INTEGER PRIMARY KEY AUTOINCREMENT, -- SSE ids: never reused, or Last-Event-ID could skip events
    ask_id   INTEGER REFERENCES asks (id) ON DELETE CASCADE, -- NULL: a config or purged row
    session  TEXT    NOT NULL,
    action   TEXT    NOT NULL,
    actor    TEXT    NOT NULL DEFAULT '',
    at       INTEGER NOT NULL,
    note     TEXT    NOT NULL DEFAULT '',
    snapshot TEXT,                              -- JSON of the ask right after the event
    hash     TEXT                               -- hex SHA-256; NULL only until chained
) STRICT;

INSERT INTO events_audit (id, ask_id, session, action, actor, at, note, snapshot)
    SELECT id, ask_id, session, action, actor, at, note, snapshot FROM events ORDER BY id;

-- Keep AUTOINCREMENT's high-water mark: ids of purged rows are never reused.
UPDATE sqlite_sequence SET seq = MAX(seq, (SELECT seq FROM sqlite_sequence WHERE name = 'events'))
    WHERE name = 'events_audit';
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'events_audit', seq FROM sqlite_sequence WHERE name = 'events'
    AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events_audit');

DROP TABLE events;
ALTER TABLE events_audit RENAME TO events;
CREATE INDEX events_ask_id ON events (ask_id, id);

-- The chain's head: the hash of the newest row written, which a purge does
-- not change (the next row is chained to the last one written, removed or
-- not).
CREATE TABLE audit_head (
    one  INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
    hash TEXT    NOT NULL
) STRICT;
INSERT INTO audit_head (one, hash) VALUES (1, '');
