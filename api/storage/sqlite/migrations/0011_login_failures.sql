-- 0011 (SQLite): failed logins with a Stammtisch's key, for the form's exponential back-off
-- (api/http/ratelimit.py), shared by every server process. One row per Stammtisch that had
-- failures since its last good login: how many in a row and when the last one was (seconds
-- since the epoch). Written on the rate limits' connection (synchronous=OFF): a count lost in
-- a crash only shortens one back-off.
CREATE TABLE login_failures (
    who         TEXT PRIMARY KEY,
    failures    INTEGER NOT NULL,
    last_at     REAL NOT NULL
) WITHOUT ROWID;
