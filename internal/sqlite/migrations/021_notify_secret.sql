-- A person's webhook may have a secret (PUT /api/me/notify, webhook_secret):
-- its notifications are then signed as tell webhooks are (SPEC §19). ''
-- is none. The same column as the PostgreSQL store's 022_notify_secret.sql.
ALTER TABLE people_notify ADD COLUMN webhook_secret TEXT NOT NULL DEFAULT '';
