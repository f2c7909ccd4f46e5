-- Searching the history (GET /api/history?q=), and paging the inbox.

-- search holds the words of a settled ask, those of askd.Ask.SearchText
-- (the same as the SQLite store's 006_search.sql indexes): its title,
-- details, questions and their headers, the labels and descriptions of its
-- options, and its answer (chosen labels, own words, the reply or response,
-- a comment) — not previews, nor payloads. The store writes it with every
-- write of an ask, from the text askd computes: no JSON is read here on the
-- way from a person's answer to the agent waiting for it. NULL while
-- pending: only the history is searched. 'simple': no stemming and no stop
-- words, so a word of any language matches as written (folded to lower case).
ALTER TABLE asks ADD COLUMN search TSVECTOR;

-- The asks settled already get theirs here, from askd_search_text_006, the
-- same text read from the stored JSON. Keys are picked by name: questions
-- and options are lists of {question, header, options, multiSelect} and
-- {label, description, preview}; an answer is {answers: {question: label or
-- [labels]}, response, answer, decision, payload, comment}. Every
-- json_array_elements and json_each is given only an array or an object.
-- "\u0000" escapes, which a payload may hold (json keeps them) and which make
-- reading any value of the document fail (text cannot hold U+0000), are
-- taken out first; the pattern takes escaped backslashes as they are, so
-- "\\u0000" (a backslash, then "u0000") stays. ASCII punctuation becomes
-- spaces, as askd.SearchWords splits words.
CREATE FUNCTION askd_search_text_006(title TEXT, details TEXT, questions JSON, options JSON, answer JSON)
RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
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

-- All at once; should some stored JSON still not read (an escape such as a
-- lone surrogate in a payload), ask by ask, those by their title and
-- details alone, rather than askd not starting.
DO $$
DECLARE
    r RECORD;
BEGIN
    BEGIN
        UPDATE asks SET search = to_tsvector('simple', askd_search_text_006(title, details, questions, options, answer))
        WHERE status <> 'pending';
    EXCEPTION WHEN OTHERS THEN
        FOR r IN SELECT id FROM asks WHERE status <> 'pending' LOOP
            BEGIN
                UPDATE asks SET search = to_tsvector('simple', askd_search_text_006(title, details, questions, options, answer))
                WHERE id = r.id;
            EXCEPTION WHEN OTHERS THEN
                UPDATE asks SET search = to_tsvector('simple', translate(title || ' ' || details,
                    '!"#$%&''()*+,-./:;<=>?@[\]^_`{|}~', repeat(' ', 32)))
                WHERE id = r.id;
            END;
        END LOOP;
    END;
END
$$;

DROP FUNCTION askd_search_text_006;

CREATE INDEX asks_search ON asks USING gin (search) WHERE search IS NOT NULL;

-- Keyset paging walks these in order: the inbox's pending asks by deadline
-- then id (the expiry sweep uses it too), the history by settled_at then id
-- (and purging). With id in the index, ties come in id order without a sort.
DROP INDEX asks_deadline;
CREATE INDEX asks_deadline ON asks (deadline, id) WHERE status = 'pending';
DROP INDEX asks_settled_at;
CREATE INDEX asks_settled_at ON asks (settled_at, id) WHERE settled_at IS NOT NULL;
