-- A person's email address (PUT /api/me/notify, email; SPEC §16): email is
-- their choice, NULL while they have not chosen ('' is a choice of none,
-- which sign-ins keep); provider_email is the verified address their
-- identity provider gave at their last sign-in, mailed while email is NULL.
-- The same columns as the SQLite store's 023_notify_email.sql.
ALTER TABLE people_notify ADD COLUMN email TEXT;
ALTER TABLE people_notify ADD COLUMN provider_email TEXT NOT NULL DEFAULT '';
