-- The database's own record: one row. database_id is drawn once, when this
-- migration runs, and copied by a backup (VACUUM INTO): askd serve keeps it
-- in a marker file beside the database (askd.db -> .askd.db.id) and refuses a
-- file whose id is not the one it served, or no file where it served one.
-- probed_at is written by readiness's write probe (Store.Probe), to see
-- whether writes work again after one failed. The same table as the
-- PostgreSQL store's 009_database_info.sql.
CREATE TABLE database_info (
    id          INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    database_id TEXT    NOT NULL,
    probed_at   INTEGER NOT NULL DEFAULT 0 -- microseconds since the Unix epoch
) STRICT;

INSERT INTO database_info (id, database_id) VALUES (1, lower(hex(randomblob(16))));
