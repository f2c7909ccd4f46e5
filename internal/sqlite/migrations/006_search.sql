-- Searching the history (GET /api/history?q=): a full-text index of settled
-- asks. The same words match as in the PostgreSQL store's 006_search.sql:
-- an ask's title, details, questions and their headers, the labels and
-- descriptions of its options, and its answer (chosen labels, own words,
-- the reply or response, a comment) — not previews, nor payloads.

-- asks_search_docs is the text the index holds for each ask, defined once
-- for the back-fill below and the triggers that keep the index in step.
-- Keys are picked by name from the JSON the store writes: questions and
-- options are lists of {question, header, options, multiSelect} and {label,
-- description, preview}; an answer is {answers: {question: label or [labels]},
-- response, answer, decision, payload, comment}, and only its top-level
-- texts and its answers count (a payload may hold keys of any name).
CREATE VIEW asks_search_docs (id, status, doc) AS
SELECT id, status, concat_ws(' ', title, details,
    (SELECT group_concat(value, ' ') FROM json_tree(asks.questions)
        WHERE type = 'text' AND key IN ('question', 'header', 'label', 'description')),
    (SELECT group_concat(value, ' ') FROM json_tree(asks.options)
        WHERE type = 'text' AND key IN ('label', 'description')),
    (SELECT group_concat(value, ' ') FROM json_tree(asks.answer)
        WHERE type = 'text' AND path = '$' AND key IN ('answer', 'response', 'comment')),
    (SELECT group_concat(value, ' ') FROM json_tree(asks.answer, '$.answers')
        WHERE type = 'text'))
FROM asks;

-- Contentless: the text is in asks already, the index keeps only its words.
-- contentless_delete lets a row go by its rowid (the ask's id) alone.
-- unicode61 splits on everything but letters, digits and private-use
-- characters (askd.SearchWords splits a query the same way), folds case,
-- and with remove_diacritics 2 "café" and "cafe" are one word.
CREATE VIRTUAL TABLE asks_search USING fts5 (
    doc, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 2'
);

-- Only settled asks are searched (the history), so only they are indexed:
-- creating pending asks, the hot path, costs nothing more.
INSERT INTO asks_search (rowid, doc) SELECT id, doc FROM asks_search_docs WHERE status <> 'pending';

CREATE TRIGGER asks_search_insert AFTER INSERT ON asks
WHEN NEW.status <> 'pending'
BEGIN
    INSERT INTO asks_search (rowid, doc) SELECT id, doc FROM asks_search_docs WHERE id = NEW.id;
END;

-- Settling indexes the ask; a change of a settled ask's text indexes it
-- again. Updates of pending asks (a replaced attention ask, a snooze) and
-- of settled ones that leave their text alone (told) do nothing.
CREATE TRIGGER asks_search_update AFTER UPDATE ON asks
WHEN (OLD.status <> 'pending' OR NEW.status <> 'pending')
 AND (OLD.status IS NOT NEW.status OR OLD.title IS NOT NEW.title OR OLD.details IS NOT NEW.details
      OR OLD.questions IS NOT NEW.questions OR OLD.options IS NOT NEW.options OR OLD.answer IS NOT NEW.answer)
BEGIN
    DELETE FROM asks_search WHERE rowid = OLD.id;
    INSERT INTO asks_search (rowid, doc)
        SELECT id, doc FROM asks_search_docs WHERE id = NEW.id AND NEW.status <> 'pending';
END;

-- Purging (DeleteAsks) takes the ask's words with it.
CREATE TRIGGER asks_search_delete AFTER DELETE ON asks
BEGIN
    DELETE FROM asks_search WHERE rowid = OLD.id;
END;
