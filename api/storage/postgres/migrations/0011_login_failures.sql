-- 0011 (PostgreSQL): failed logins with a Stammtisch's key, for the form's exponential
-- back-off, shared by every server; as the SQLite 0011 (on main; 0008-0010 are SQLite
-- migrations of work in progress, to be mirrored here under the same numbers). UNLOGGED as
-- rate_limits (0007): a count lost in a crash of the database server only shortens one
-- back-off.
CREATE UNLOGGED TABLE login_failures (
    who         text PRIMARY KEY,
    failures    bigint NOT NULL,
    last_at     double precision NOT NULL
);
