-- The audit trail (SPEC §11): every history row carries hash, the hex
-- SHA-256 of its content and the previous row's hash, one chain per
-- database. The bytes hashed are askd.AuditContent's (audit.go), which
-- askd_audit_hash below builds in SQL; verify computes them in Go.
--
-- The hash is computed in the database, by a BEFORE INSERT trigger, so that
-- every row is chained whoever writes it: a row written by an older askd
-- still running during an upgrade is chained like the others, not left
-- without a hash. The chain's head is a one-row table that the trigger reads
-- FOR UPDATE and rewrites: its row lock, held to the commit, makes writers
-- take turns, so concurrent writers (in one process or many) form one chain.
-- askd's writers already hold the event log's advisory lock from their
-- first statement (event.go), which also keeps ids in chain order; the row
-- lock is what holds for any writer.
--
-- A change of configuration is a row with no ask (ask_id NULL). It is no
-- ask's event: the notification trigger leaves it out. An older askd still
-- running during the upgrade is not told of it either, but one that reads
-- the event log from an id (an event stream resumed with Last-Event-ID)
-- past a config row fails that read (its ask_id cannot be NULL): finish the
-- upgrade before changing tokens, teams or rules.

ALTER TABLE events ALTER COLUMN ask_id DROP NOT NULL;
ALTER TABLE events ADD COLUMN hash TEXT;

-- One field of the content: its length in bytes, ':', itself, '\n'.
CREATE FUNCTION askd_audit_field(v text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT octet_length(v)::text || ':' || v || E'\n' $$;

-- A row's hash after prev (askd.AuditHash). The time is in microseconds
-- since the Unix epoch, computed without floating point. STABLE, not
-- IMMUTABLE: date_trunc of a timestamptz reads the session's time zone
-- (whole seconds are the same in every zone, so the hash is not).
CREATE FUNCTION askd_audit_hash(prev text, ask_id bigint, session text, action text, actor text, at timestamptz, note text) RETURNS text
    LANGUAGE sql STABLE
    AS $$ SELECT encode(sha256(convert_to(
        E'askd-audit-1\n' ||
        askd_audit_field(prev) ||
        askd_audit_field(COALESCE(ask_id, 0)::text) ||
        askd_audit_field(session) ||
        askd_audit_field(action) ||
        askd_audit_field(actor) ||
        askd_audit_field((extract(epoch FROM date_trunc('second', at))::bigint * 1000000
            + extract(microseconds FROM at)::bigint % 1000000)::text) ||
        askd_audit_field(note), 'UTF8')), 'hex') $$;

CREATE TABLE audit_head (
    one  INT  NOT NULL PRIMARY KEY CHECK (one = 1),
    hash TEXT NOT NULL
);

-- The rows already here are chained, oldest first, from the first the
-- database kept.
DO $$
DECLARE
    head text := '';
    r    record;
BEGIN
    FOR r IN SELECT id, ask_id, session, action, actor, at, note FROM events ORDER BY id LOOP
        head := askd_audit_hash(head, r.ask_id, r.session, r.action, r.actor, r.at, r.note);
        UPDATE events SET hash = head WHERE id = r.id;
    END LOOP;
    INSERT INTO audit_head (one, hash) VALUES (1, head);
END
$$;

CREATE FUNCTION askd_audit_chain() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    prev text;
BEGIN
    SELECT hash INTO prev FROM audit_head WHERE one = 1 FOR UPDATE;
    NEW.hash := askd_audit_hash(prev, NEW.ask_id, NEW.session, NEW.action, NEW.actor, NEW.at, NEW.note);
    UPDATE audit_head SET hash = NEW.hash WHERE one = 1;
    RETURN NEW;
END
$$;

CREATE TRIGGER events_chained
    BEFORE INSERT ON events
    FOR EACH ROW
    EXECUTE FUNCTION askd_audit_chain();

DROP TRIGGER events_added ON events;
CREATE TRIGGER events_added
    AFTER INSERT ON events
    FOR EACH ROW
    WHEN (NEW.ask_id IS NOT NULL)
    EXECUTE FUNCTION askd_notify_event();
