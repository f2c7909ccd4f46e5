-- The audit chain's second version (audit.go): a row's hash covers its ask,
-- action and time, and the hash of its session, actor and note (its body,
-- askd.AuditBody, askd_audit_body below). A --retain purge no longer takes
-- rows out of the chain: it moves each row of the asks it removes to
-- audit_purged, keeping its place (id), ask, action, time and hash with its
-- body, so that verify still walks every row ever written and a deletion
-- cannot be passed off as a purge. The same tables as the SQLite store's
-- 017_audit_purged.sql.
--
-- events.chain is 2 for a row hashed in the second version; NULL for the
-- rows written before it, whose hashes cover their session, actor and note
-- themselves: a purge keeps those whole. The trigger below hashes every
-- row inserted from now on in the second version, whoever inserts it (an
-- older askd still running during the upgrade too).

ALTER TABLE events ADD COLUMN chain SMALLINT;

-- What a purge removes from a row, hashed (askd.AuditBody).
CREATE FUNCTION askd_audit_body(session text, actor text, note text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT encode(sha256(convert_to(
        E'askd-audit-body-2\n' ||
        askd_audit_field(session) ||
        askd_audit_field(actor) ||
        askd_audit_field(note), 'UTF8')), 'hex') $$;

-- A row's hash after prev (askd.AuditHash, askd.AuditContent), from its
-- body. STABLE for the time zone, as askd_audit_hash.
CREATE FUNCTION askd_audit_hash2(prev text, ask_id bigint, action text, at timestamptz, body text) RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT encode(sha256(convert_to(
        E'askd-audit-2\n' ||
        askd_audit_field(prev) ||
        askd_audit_field(COALESCE(ask_id, 0)::text) ||
        askd_audit_field(action) ||
        askd_audit_field((extract(epoch FROM date_trunc('second', at))::bigint * 1000000
            + extract(microseconds FROM at)::bigint % 1000000)::text) ||
        askd_audit_field(body), 'UTF8')), 'hex') $$;

CREATE OR REPLACE FUNCTION askd_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    prev text;
BEGIN
    SELECT hash INTO prev FROM audit_head WHERE one = 1 FOR UPDATE;
    NEW.hash := askd_audit_hash2(prev, NEW.ask_id, NEW.action, NEW.at, askd_audit_body(NEW.session, NEW.actor, NEW.note));
    NEW.chain := 2;
    UPDATE audit_head SET hash = NEW.hash WHERE one = 1;
    RETURN NEW;
END
$$;

CREATE TABLE audit_purged (
    id      BIGINT      NOT NULL PRIMARY KEY, -- the history row's id, never reused (events' identity)
    ask_id  BIGINT      NOT NULL,             -- the purged ask's (no longer in asks)
    action  TEXT        NOT NULL,
    at      TIMESTAMPTZ NOT NULL,
    body    TEXT,                             -- askd_audit_body of what was removed; NULL for a first-version row
    session TEXT,                             -- a first-version row's, kept; NULL otherwise
    actor   TEXT,
    note    TEXT,
    hash    TEXT        NOT NULL
);
