-- Web Push (docs/notifications.md). A push subscription is one browser's:
-- the push service's endpoint and the keys that encrypt what is sent to it.
-- It belongs to the browser session that made it and goes with it (signing
-- out, expiry, revoking its human token, through browser_sessions' own
-- cascade). vapid_keys holds the server's one VAPID key pair, made at
-- first start. The same tables as the PostgreSQL store's 010_push.sql.
CREATE TABLE push_subscriptions (
    endpoint   TEXT    NOT NULL PRIMARY KEY,   -- the push service's URL for the browser
    p256dh     TEXT    NOT NULL,               -- the browser's public key, base64url
    auth       TEXT    NOT NULL,               -- the authentication secret, base64url
    browser    TEXT    NOT NULL REFERENCES browser_sessions (hash) ON DELETE CASCADE,
    human      TEXT    NOT NULL REFERENCES tokens (name) ON DELETE CASCADE,
    created_at INTEGER NOT NULL                -- microseconds since the Unix epoch
) STRICT;

-- The foreign keys' cascades.
CREATE INDEX push_subscriptions_browser ON push_subscriptions (browser);
CREATE INDEX push_subscriptions_human ON push_subscriptions (human);

CREATE TABLE vapid_keys (
    id          INTEGER NOT NULL PRIMARY KEY CHECK (id = 1), -- one pair
    public_key  TEXT    NOT NULL,              -- uncompressed P-256 point, base64url
    private_key TEXT    NOT NULL,              -- the scalar, base64url
    created_at  INTEGER NOT NULL
) STRICT;
