-- 0007 (PostgreSQL): the write rate limit's token buckets, shared by every server, as the
-- SQLite 0007. UNLOGGED: no WAL and no wait for a flush at commit (the SQLite counters run with
-- synchronous=OFF for the same reason); a crash of the database server empties the table,
-- which only lets every client write a burst more.
CREATE UNLOGGED TABLE rate_limits (
    who         text PRIMARY KEY,
    tokens      double precision NOT NULL,
    updated_at  double precision NOT NULL,
    granted     bigint NOT NULL
);
