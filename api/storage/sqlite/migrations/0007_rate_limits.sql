-- 0007 (SQLite): the write rate limit's token buckets, shared by every server process
-- (api/http/ratelimit.py). One row per client (the sha256 of its token, or its address):
-- tokens left after the last take, when that was (seconds since the epoch) and whether the
-- last take was granted. Written on a connection of their own with synchronous=OFF (see
-- api/storage/sqlite/counters.py): a counter lost in a crash only lets a client write once
-- more.
CREATE TABLE rate_limits (
    who         TEXT PRIMARY KEY,
    tokens      REAL NOT NULL,
    updated_at  REAL NOT NULL,
    granted     INTEGER NOT NULL
) WITHOUT ROWID;
