-- A team's history searched at scale (SPEC §8: a search's p50 within 50 ms
-- with 1,000,000 settled asks). A session's settled asks and a person's,
-- most recently settled first and counted, come from indexes of their own
-- instead of a walk of every settled ask. And the newest config row of an
-- action (LastConfigEvent, which each batch of a --retain purge reads)
-- comes from the config rows alone, not from a walk back over every purge
-- record since. The same indexes as the SQLite store's
-- 024_history_indexes.sql.
CREATE INDEX asks_session_settled_at ON asks (session, settled_at, id) WHERE settled_at IS NOT NULL;
CREATE INDEX asks_settled_by_settled_at ON asks (settled_by, settled_at, id) WHERE settled_at IS NOT NULL;
CREATE INDEX events_config ON events (action, id) WHERE ask_id IS NULL;
