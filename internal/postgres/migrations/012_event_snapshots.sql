-- Event notifications that carry the ask, so that a process woken by another
-- process's commit has the ask as that commit left it (askd.Change.Ask) and
-- need not read it again: the agent side returns an answer given on the
-- inbox side straight from the notification.
--
-- askd_asks, payload '<event id>:<ask id>:<snapshot>': an event was added,
-- and <snapshot> is its events.snapshot as text, the ask right after the
-- event, the JSON as AddEvent wrote it. A payload must be shorter than
-- BLCKSZ - NAMEDATALEN - 128 bytes (PostgreSQL's async.c; 8000 in a default
-- build), or pg_notify fails, and with it the transaction. So a snapshot
-- that would not fit is left out, '<event id>:<ask id>:', and the listener
-- reads the ask, as it did for every event before. The length is counted in
-- bytes of the server's encoding (octet_length), as pg_notify counts it, not
-- in characters.
--
-- askd_events, payload '<event id>:<ask id>', is still sent, unchanged, for
-- the processes of an older askd that are still running during an upgrade:
-- an older build refuses to start on this schema, but one already running
-- keeps listening. This build listens to askd_asks and not to askd_events,
-- so that it hears each event once.
--
-- The SQLite store has no 012: there a store tells only its own process of
-- its commits, with the ask at hand, and needs no trigger. Each store's
-- versions are its own (internal/migrations checks a database against its
-- own store's list).
CREATE OR REPLACE FUNCTION askd_notify_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids      text := NEW.id::text || ':' || NEW.ask_id::text;
    -- NULL would make the whole payload NULL, which pg_notify sends as ''.
    snapshot text := COALESCE(NEW.snapshot::text, '');
    -- Payloads must be shorter than this: BLCKSZ - NAMEDATALEN - 128, with
    -- NAMEDATALEN = max_identifier_length + 1.
    payload_limit int := current_setting('block_size')::int - current_setting('max_identifier_length')::int - 129;
BEGIN
    PERFORM pg_notify('askd_events', ids);
    IF octet_length(ids) + 1 + octet_length(snapshot) >= payload_limit THEN
        snapshot := '';
    END IF;
    PERFORM pg_notify('askd_asks', ids || ':' || snapshot);
    RETURN NULL;
END
$$;

-- question_answered ('<ask id>', SPEC §6) now comes after the notifications
-- of the transaction's events instead of before them: its trigger is
-- deferred to the commit (deferred triggers fire before a commit's
-- notifications are queued, so it is still sent at commit, in commit order).
-- An askd process hears it too, as a bare notice that the ask was settled;
-- coming first, it woke the waiting call before the answer's event, with
-- the ask, had arrived, and the call read the ask.
DROP TRIGGER asks_settled ON asks;

CREATE CONSTRAINT TRIGGER asks_settled
    AFTER UPDATE OF status ON asks
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW
    WHEN (NEW.status IN ('answered', 'cancelled') AND OLD.status IS DISTINCT FROM NEW.status)
    EXECUTE FUNCTION askd_notify_settled();
