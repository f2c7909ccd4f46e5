-- Quorum (SPEC §11): an admin's policies, which make the approvals they
-- cover need several people, and on each ask the quorum it was made with and
-- the approvals given so far. The same table and columns as the PostgreSQL
-- store's 016_policies.sql. (014 is the audit chain's.)

-- agent and team are names, not foreign keys: a policy on an agent token
-- still holds for a token made again under the name, and a policy is made
-- by the CLI on the database too, whose created_by is no token.
CREATE TABLE policies (
    id            INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT, -- never handed out twice
    match_by      TEXT    NOT NULL,            -- tool, prefix or title ("match" is SQL's)
    tool          TEXT    NOT NULL DEFAULT '',
    prefix        TEXT    NOT NULL DEFAULT '',
    title         TEXT    NOT NULL DEFAULT '',
    agent         TEXT    NOT NULL DEFAULT '', -- '': every agent
    team          TEXT    NOT NULL DEFAULT '', -- '': every agent; else agents the team owns
    approvals     INTEGER NOT NULL,            -- 2 to 5 people
    exclude_owner INTEGER NOT NULL DEFAULT 0,
    created_by    TEXT    NOT NULL,
    created_at    INTEGER NOT NULL             -- microseconds since the Unix epoch
) STRICT;

-- Kept with the ask, so that a policy changed or revoked later leaves the
-- asks made before it as they were. approvals: JSON [{by, at}], NULL for none.
ALTER TABLE asks ADD COLUMN approvals_needed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE asks ADD COLUMN approvals        TEXT;
ALTER TABLE asks ADD COLUMN exclude_owner    INTEGER NOT NULL DEFAULT 0;
