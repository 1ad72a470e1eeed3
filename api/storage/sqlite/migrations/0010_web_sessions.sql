-- 0010 (SQLite): the logins of the pub form, shared by every server process (api/web/session.py).
-- The session cookie holds only an opaque random id; a row holds its sha256, the Stammtisch,
-- the hash of the Stammtisch's key at login (a changed key ends every login) and when the
-- login expires. Logging out deletes the row: a saved copy of the cookie no longer works.
CREATE TABLE web_sessions (
    id_hash        TEXT PRIMARY KEY,
    stammtisch_id  INTEGER NOT NULL REFERENCES stammtische (id) ON DELETE CASCADE,
    token_hash     TEXT NOT NULL,
    expires_at     TIMESTAMP NOT NULL
) WITHOUT ROWID;

CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);
