-- Searching the history (GET /api/history?q=), and paging the inbox: the
-- same words match as in the SQLite store's 006_search.sql, whose index
-- holds an ask's title, details, questions and their headers, the labels
-- and descriptions of its options, and its answer (chosen labels, own
-- words, the reply or response, a comment) — not previews, nor payloads.

-- askd_search_text is that text. Keys are picked by name from the JSON the
-- store writes: questions and options are lists of {question, header,
-- options, multiSelect} and {label, description, preview}; an answer is
-- {answers: {question: label or [labels]}, response, answer, decision,
-- payload, comment}. Nothing in it may fail, for it runs in the write that
-- settles the ask:
--   - every json_array_elements and json_each is given only an array or an
--     object (CASE), whatever shape the JSON has;
--   - "\u0000" escapes are taken out first: a payload may hold them (json
--     keeps them), but reading any value of a document that has one fails,
--     since text cannot hold U+0000. The pattern takes escaped backslashes
--     (\\) as they are, so "\\u0000" (a backslash, then "u0000") stays; the
--     strpos test skips the regular expression for every other document.
--
-- ASCII punctuation becomes spaces: PostgreSQL's parser would otherwise keep
-- "staging.example.com", "build/tmp" or "v1.2" whole, where SQLite's
-- tokenizer (and askd.SearchWords, for queries) splits them into words.
--
-- IMMUTABLE, as a generated column needs, and true: the result depends on
-- the arguments alone. Built-in functions only, so that it also works under
-- the empty search_path pg_dump restores with.
CREATE FUNCTION askd_search_text(title TEXT, details TEXT, questions JSON, options JSON, answer JSON)
RETURNS TEXT LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT translate(concat_ws(' ', title, details,
    (SELECT string_agg(concat_ws(' ', q->>'question', q->>'header',
            (SELECT string_agg(concat_ws(' ', o->>'label', o->>'description'), ' ')
             FROM json_array_elements(CASE json_typeof(q->'options') WHEN 'array' THEN q->'options' END) AS o)), ' ')
     FROM json_array_elements(CASE json_typeof(j.qs) WHEN 'array' THEN j.qs END) AS q),
    (SELECT string_agg(concat_ws(' ', o->>'label', o->>'description'), ' ')
     FROM json_array_elements(CASE json_typeof(j.os) WHEN 'array' THEN j.os END) AS o),
    CASE json_typeof(j.ans) WHEN 'object' THEN concat_ws(' ', j.ans->>'answer', j.ans->>'response', j.ans->>'comment') END,
    (SELECT string_agg(CASE json_typeof(v)
                WHEN 'string' THEN v #>> '{}'
                WHEN 'array' THEN (SELECT string_agg(x #>> '{}', ' ') FROM json_array_elements(v) AS x
                                   WHERE json_typeof(x) = 'string')
            END, ' ')
     FROM json_each(CASE json_typeof(j.ans->'answers') WHEN 'object' THEN j.ans->'answers' END) AS e (k, v))),
    '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', repeat(' ', 32))
FROM (SELECT
    CASE WHEN strpos(questions::text, '\u0000') > 0
        THEN regexp_replace(questions::text, '(\\\\)|\\u0000', '\1', 'g')::json ELSE questions END,
    CASE WHEN strpos(options::text, '\u0000') > 0
        THEN regexp_replace(options::text, '(\\\\)|\\u0000', '\1', 'g')::json ELSE options END,
    CASE WHEN strpos(answer::text, '\u0000') > 0
        THEN regexp_replace(answer::text, '(\\\\)|\\u0000', '\1', 'g')::json ELSE answer END
) AS j (qs, os, ans)
$$;

-- The words of settled asks, kept by PostgreSQL itself on every write
-- (insert, settle, purge) and computed for the existing rows by this ALTER.
-- NULL while pending: only the history is searched, and creating pending
-- asks, the hot path, computes nothing. 'simple': no stemming and no stop
-- words, so a word of any language matches as written (folded to lower case).
ALTER TABLE asks ADD COLUMN search TSVECTOR GENERATED ALWAYS AS (
    CASE WHEN status <> 'pending'
        THEN to_tsvector('simple', askd_search_text(title, details, questions, options, answer))
    END) STORED;

CREATE INDEX asks_search ON asks USING gin (search) WHERE search IS NOT NULL;

-- Keyset paging walks these in order: the inbox's pending asks by deadline
-- then id (the expiry sweep uses it too), the history by settled_at then id
-- (and purging). With id in the index, ties come in id order without a sort.
DROP INDEX asks_deadline;
CREATE INDEX asks_deadline ON asks (deadline, id) WHERE status = 'pending';
DROP INDEX asks_settled_at;
CREATE INDEX asks_settled_at ON asks (settled_at, id) WHERE settled_at IS NOT NULL;
