-- One approval answers one call (SPEC §14, the MCP gate): an approval
-- asked with one_call is true here. Once told it holds its key no more
-- (the token's next approval with the key is a new one), so the unique
-- index is now of the approvals that hold their key (askd.Ask.HoldsKey):
-- every keyed one but a one-call one told. A token has at most one under a
-- key, also against another process at the same instant; keys asked
-- without one_call keep one approval each, for good, as before. The
-- lookup by key keeps an index of every keyed approval, told or not: a
-- query says no told_at, so it could not use the unique one. The same
-- column and indexes as the SQLite store's 022_one_call.sql.
ALTER TABLE asks ADD COLUMN one_call boolean NOT NULL DEFAULT false;
DROP INDEX asks_gate_key;
CREATE INDEX asks_gate_key ON asks (agent, gate_key) WHERE gate_key IS NOT NULL;
CREATE UNIQUE INDEX asks_gate_key_held ON asks (agent, gate_key)
    WHERE gate_key IS NOT NULL AND (NOT one_call OR told_at IS NULL);
