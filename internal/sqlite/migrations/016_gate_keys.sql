-- Keyed approvals (SPEC §12): the key an agent token asked an approval
-- with, NULL for the rest. One ask per token and key, whatever its status:
-- the unique index is also what finds it. The same column and index as the
-- PostgreSQL store's 017_gate_keys.sql.
ALTER TABLE asks ADD COLUMN gate_key TEXT;
CREATE UNIQUE INDEX asks_gate_key ON asks (agent, gate_key) WHERE gate_key IS NOT NULL;
