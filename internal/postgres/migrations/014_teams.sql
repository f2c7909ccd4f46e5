-- A team's inbox (SPEC §10): a person (a human token) has an access level,
-- an agent token an owner, teams of people escalate what waits too long, and
-- an ask is routed to its agent token's owner. The same tables, columns and
-- indexes as the SQLite store's 013_teams.sql (and two more, for Mine), in
-- PostgreSQL's types. A team's escalate_after is an interval, written by
-- askd as microseconds alone (no days or months), so that adding it to a
-- time is exact.

-- access: a human token's level, admin, approver or viewer; '' for agent
-- tokens. owner: an agent token's person or "team:NAME"; '' for everyone.
ALTER TABLE tokens ADD COLUMN access TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN owner  TEXT NOT NULL DEFAULT '';
-- Tokens from before roles existed become admin (SPEC §10): whoever held
-- one could do everything until now.
UPDATE tokens SET access = 'admin' WHERE role = 'human';

-- An ask's owner is its agent token's when it was made, kept with the ask so
-- that a later set-owner leaves the asks made before it where they were.
ALTER TABLE asks ADD COLUMN owner        TEXT NOT NULL DEFAULT '';
ALTER TABLE asks ADD COLUMN claimed_by   TEXT NOT NULL DEFAULT '';  -- "I'm on it", until settled
ALTER TABLE asks ADD COLUMN claimed_at   TIMESTAMPTZ;
ALTER TABLE asks ADD COLUMN escalated_to TEXT NOT NULL DEFAULT '';  -- a person or "team:NAME", once
ALTER TABLE asks ADD COLUMN escalated_at TIMESTAMPTZ;

-- Mine (a person's own, their teams' and nobody's asks) counts and lists
-- pending asks by owner, and by whom they were escalated to (one bitmap
-- scan of each, ORed). The SQLite store has no such index: its planner,
-- without statistics, walks the pending asks by status instead.
CREATE INDEX asks_pending_owner ON asks (owner) WHERE status = 'pending';
CREATE INDEX asks_escalated_to ON asks (escalated_to) WHERE escalated_to <> '';
-- The escalation sweep looks, team by team, only at the team's pending asks
-- not escalated yet, and of those only at the ones revised long enough ago.
CREATE INDEX asks_escalation ON asks (owner, updated_at)
    WHERE status = 'pending' AND escalated_at IS NULL AND owner <> '';

CREATE TABLE teams (
    name           TEXT        NOT NULL PRIMARY KEY,
    escalate_after INTERVAL    NOT NULL DEFAULT '0',  -- 0: never
    escalate_to    TEXT        NOT NULL DEFAULT '',   -- a person or "team:NAME"
    created_at     TIMESTAMPTZ NOT NULL
);

-- A member is a person, a human token's name: revoking the token takes them
-- out of their teams, as it ends their browser sessions.
CREATE TABLE team_members (
    team   TEXT NOT NULL REFERENCES teams (name) ON DELETE CASCADE,
    person TEXT NOT NULL REFERENCES tokens (name) ON DELETE CASCADE,
    PRIMARY KEY (team, person)
);

-- A person's teams, and the cascade when their token is revoked.
CREATE INDEX team_members_person ON team_members (person);

-- Where a person wants to hear of asks routed to them (PUT /api/me/notify).
-- A row only for a person who set something; it goes with their token.
CREATE TABLE people_notify (
    person  TEXT NOT NULL PRIMARY KEY REFERENCES tokens (name) ON DELETE CASCADE,
    ntfy    TEXT NOT NULL DEFAULT '',  -- an ntfy topic URL
    webhook TEXT NOT NULL DEFAULT ''   -- a webhook URL
);
