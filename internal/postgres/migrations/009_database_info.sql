-- The database's own record: one row. database_id is drawn once, when this
-- migration runs. probed_at is written by readiness's write probe
-- (Store.Probe), to see whether writes work again after one failed. The same
-- table as the SQLite store's 009_database_info.sql, in PostgreSQL's types.
CREATE TABLE database_info (
    id          INTEGER     NOT NULL PRIMARY KEY CHECK (id = 1),
    database_id TEXT        NOT NULL,
    probed_at   TIMESTAMPTZ
);

INSERT INTO database_info (id, database_id) VALUES (1, md5(random()::text || clock_timestamp()::text));
