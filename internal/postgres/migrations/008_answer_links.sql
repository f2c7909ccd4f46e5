-- Signed answer links (docs/notifications.md): a notification's button,
-- <public-url>/a/<code>, answers one ask at one revision with one answer,
-- once, before it expires, as one human token (askd serve --notify-as).
-- Only the code's hex SHA-256 is stored. A link goes with its ask when that
-- is purged, and with its human token when that is revoked. The same table
-- as the SQLite store's 008_answer_links.sql, in PostgreSQL's types.
CREATE TABLE answer_links (
    hash       TEXT        NOT NULL PRIMARY KEY, -- hex SHA-256 of the code
    ask_id     BIGINT      NOT NULL REFERENCES asks (id) ON DELETE CASCADE,
    revision   INTEGER     NOT NULL,             -- a newer revision of the ask refuses it
    label      TEXT        NOT NULL,             -- what the button says
    answer     JSON        NOT NULL,             -- the answer it gives, as askd.Answer (json, as 001 says why)
    human      TEXT        NOT NULL REFERENCES tokens (name) ON DELETE CASCADE,
    used_at    TIMESTAMPTZ,                      -- NULL until it answered
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

-- Purging expired links; the foreign keys' cascades.
CREATE INDEX answer_links_expires_at ON answer_links (expires_at);
CREATE INDEX answer_links_ask_id ON answer_links (ask_id);
CREATE INDEX answer_links_human ON answer_links (human);
