-- A team's history searched at scale (SPEC §8: a search's p50 within 50 ms
-- with 1,000,000 settled asks). A session's settled asks and a person's,
-- most recently settled first and counted, come from indexes of their own
-- instead of a walk of every settled ask (a session's: over a second; a
-- person's count: half a second, measured on 1,000,000). And the newest
-- config row of an action (LastConfigEvent, which each batch of a --retain
-- purge reads) comes from the config rows alone, not from a walk back over
-- every purge record since. The same indexes as the PostgreSQL store's
-- 025_history_indexes.sql.
CREATE INDEX asks_session_settled_at ON asks (session, settled_at) WHERE settled_at IS NOT NULL;
CREATE INDEX asks_settled_by_settled_at ON asks (settled_by, settled_at) WHERE settled_at IS NOT NULL;
CREATE INDEX events_config ON events (action, id) WHERE ask_id IS NULL;

-- A --retain purge deletes asks from the full-text index (asks_search) by
-- the thousand. FTS5 rewrites a segment once a tenth of its entries are
-- deleted ('deletemerge', 10 by default), in the commit that crosses it:
-- with a million asks indexed, six batches of a purge in a row took 130 to
-- 280 ms each, where a batch takes 4, and every answer waited behind them.
-- With 0 the deleted entries stay, skipped by searches, until their
-- segment is merged anyway as new asks are indexed (FTS5's automerge).
INSERT INTO asks_search (asks_search, rank) VALUES ('deletemerge', 0);
