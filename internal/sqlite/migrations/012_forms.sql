-- Form asks (SPEC §9): an MCP server's elicitation, put to the person as a
-- form or a URL to open. The message is the ask's title. The same columns as
-- the PostgreSQL store's 013_forms.sql.
ALTER TABLE asks ADD COLUMN source TEXT NOT NULL DEFAULT '';  -- the MCP server's name
ALTER TABLE asks ADD COLUMN form_schema TEXT;                 -- JSON object as given, form mode
ALTER TABLE asks ADD COLUMN url TEXT NOT NULL DEFAULT '';     -- url mode
