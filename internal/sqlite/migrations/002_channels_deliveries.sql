-- Delivery channels per session, and the outbox (SPEC §5): the same tables,
-- columns and meanings as the PostgreSQL store's 002_channels_deliveries.sql.

-- A session's delivery channel, as set by PUT /api/sessions/{name}/channel.
-- Sessions without a row use the server's default (askd serve --tell).
CREATE TABLE channels (
    session    TEXT    NOT NULL PRIMARY KEY,
    channel    TEXT    NOT NULL,               -- JSON: {"type", "url", "secret", "argv"}
    updated_at INTEGER NOT NULL
) STRICT;

-- The outbox: one row per message to send, written in the same transaction
-- as what made it due (a settled ask to tell, a new ask to notify of).
CREATE TABLE deliveries (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    kind            TEXT    NOT NULL,          -- 'tell' | 'notify'
    -- 'ask:<id>@<settled_at>' for tells: the Idempotency-Key receivers see, and
    -- unique, so one settlement is never queued twice.
    idempotency_key TEXT    NOT NULL UNIQUE,
    ask_id          INTEGER NOT NULL REFERENCES asks (id) ON DELETE CASCADE,
    session         TEXT    NOT NULL,
    channel         TEXT    NOT NULL,          -- JSON snapshot of the channel or notifier
    status          TEXT    NOT NULL,          -- 'pending' | 'sent' | 'failed'
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_at         INTEGER,                   -- NULL: no worker sends it (hook channel)
    claimed_until   INTEGER,                   -- a worker's lease
    last_error      TEXT    NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) STRICT;

-- Workers look only at pending deliveries, by when they are due.
CREATE INDEX deliveries_due ON deliveries (next_at) WHERE status = 'pending';
-- Purging an ask takes its deliveries with it.
CREATE INDEX deliveries_ask_id ON deliveries (ask_id);
