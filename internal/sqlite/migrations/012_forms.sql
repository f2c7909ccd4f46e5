-- Form asks (SPEC §9): an MCP server's elicitation, put to the person as a
-- form or a URL to open. The message is the ask's title. The same columns as
-- the PostgreSQL store's 013_forms.sql.
ALTER TABLE asks ADD COLUMN source TEXT NOT NULL DEFAULT '';  -- the MCP server's name
ALTER TABLE asks ADD COLUMN form_schema TEXT;                 -- JSON object as given, form mode
ALTER TABLE asks ADD COLUMN url TEXT NOT NULL DEFAULT '';     -- url mode

-- A form's source and URL are words of its search text (askd.Ask.SearchText).
DROP VIEW asks_search_docs;
CREATE VIEW asks_search_docs (id, status, doc) AS
SELECT id, status, askd_search_text(title, details, questions, options, answer, source, url) FROM asks;
