-- People sign in through their identity provider (SPEC §15). An identity
-- (a provider's issuer and the subject it gives an account, or issuer
-- 'proxy' and the name a trusted proxy's header gives) is linked to one
-- person, a human token. It has no foreign key to tokens: revoking the
-- person keeps the identity, marked revoked, so that it is refused at its
-- next sign-in until an admin links it again. The same tables as the
-- PostgreSQL store's 019_identities.sql.
CREATE TABLE identities (
    issuer     TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    person     TEXT    NOT NULL,             -- a human token's name
    linked_at  INTEGER NOT NULL,             -- microseconds since the Unix epoch
    revoked_at INTEGER,                      -- NULL while it signs its person in
    PRIMARY KEY (issuer, subject)
) STRICT;
CREATE INDEX identities_person ON identities (person);

-- Sign-ins begun at a provider and not yet back: taken once by the
-- callback. state and binding are hex SHA-256 of the state parameter and
-- of the browser cookie's value.
CREATE TABLE provider_signins (
    state      TEXT    NOT NULL PRIMARY KEY,
    binding    TEXT    NOT NULL,
    nonce      TEXT    NOT NULL,
    verifier   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX provider_signins_expires_at ON provider_signins (expires_at);
CREATE INDEX provider_signins_created_at ON provider_signins (created_at);

-- How each browser signed in: link, token, proxy, or oidc:ISSUER; '' for
-- browser sessions from before.
ALTER TABLE browser_sessions ADD COLUMN via TEXT NOT NULL DEFAULT '';
