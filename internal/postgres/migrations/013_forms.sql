-- Form asks (SPEC §9): an MCP server's elicitation, put to the person as a
-- form or a URL to open. The message is the ask's title. The schema is JSON,
-- not JSONB, so that it is kept as given (its fields in their order). The
-- same columns as the SQLite store's 012_forms.sql.
ALTER TABLE asks ADD COLUMN source TEXT NOT NULL DEFAULT '';  -- the MCP server's name
ALTER TABLE asks ADD COLUMN form_schema JSON;                 -- object, form mode
ALTER TABLE asks ADD COLUMN url TEXT NOT NULL DEFAULT '';     -- url mode
