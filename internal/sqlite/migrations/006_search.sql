-- Searching the history (GET /api/history?q=): a full-text index of settled
-- asks, of the words of askd.Ask.SearchText, as in the PostgreSQL store's
-- 006_search.sql: an ask's title, details, questions and their headers, the
-- labels and descriptions of its options, and its answer (chosen labels, own
-- words, the reply or response, a comment) — not previews, nor payloads.

-- asks_search_docs is the text the index holds for each ask, defined once
-- for the back-fill below and for indexing later (index.go): what
-- askd.Ask.SearchText says, through askd_search_text, a function askd
-- defines on each of its connections (so the view works in askd only).
CREATE VIEW asks_search_docs (id, status, doc) AS
SELECT id, status, askd_search_text(title, details, questions, options, answer) FROM asks;

-- Contentless: the text is in asks already, the index keeps only its words.
-- contentless_delete lets a row go by its rowid (the ask's id) alone. The
-- text comes split into words already (askd.SearchWords, as queries are);
-- unicode61 splits it at the spaces and folds case; remove_diacritics 0
-- keeps "café" and "cafe" apart, as PostgreSQL's 'simple' configuration
-- does, and as askd_match does for asks not indexed yet.
CREATE VIRTUAL TABLE asks_search USING fts5 (
    doc, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0'
);

-- Only settled asks are searched (the history), so only they are indexed.
INSERT INTO asks_search (rowid, doc) SELECT id, doc FROM asks_search_docs WHERE status <> 'pending';

-- Settling an ask queues it here rather than writing the index (see
-- index.go for why and when the queue is indexed); searches match queued
-- asks one by one.
CREATE TABLE asks_search_queue (
    id INTEGER PRIMARY KEY -- a settled ask whose words asks_search does not hold
) STRICT;

CREATE TRIGGER asks_search_insert AFTER INSERT ON asks
WHEN NEW.status <> 'pending'
BEGIN
    INSERT OR IGNORE INTO asks_search_queue (id) VALUES (NEW.id);
END;

CREATE TRIGGER asks_search_settle AFTER UPDATE ON asks
WHEN OLD.status = 'pending' AND NEW.status <> 'pending'
BEGIN
    INSERT OR IGNORE INTO asks_search_queue (id) VALUES (NEW.id);
END;

-- A settled ask whose text changes loses its words at once, unless it is
-- still queued (and so has none in the index), and is queued again. Updates
-- of pending asks (a replaced attention ask, a snooze) and of settled ones
-- that leave their text alone (told) do nothing.
CREATE TRIGGER asks_search_change AFTER UPDATE ON asks
WHEN OLD.status <> 'pending'
 AND (OLD.status IS NOT NEW.status OR OLD.title IS NOT NEW.title OR OLD.details IS NOT NEW.details
      OR OLD.questions IS NOT NEW.questions OR OLD.options IS NOT NEW.options OR OLD.answer IS NOT NEW.answer)
BEGIN
    DELETE FROM asks_search WHERE rowid = OLD.id
        AND NOT EXISTS (SELECT 1 FROM asks_search_queue WHERE id = OLD.id);
    INSERT OR IGNORE INTO asks_search_queue (id) VALUES (NEW.id);
END;

-- Purging (DeleteAsks) takes the ask's words with it.
CREATE TRIGGER asks_search_delete AFTER DELETE ON asks
WHEN OLD.status <> 'pending'
BEGIN
    DELETE FROM asks_search WHERE rowid = OLD.id
        AND NOT EXISTS (SELECT 1 FROM asks_search_queue WHERE id = OLD.id);
    DELETE FROM asks_search_queue WHERE id = OLD.id;
END;
