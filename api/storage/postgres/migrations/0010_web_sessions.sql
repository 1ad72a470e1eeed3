-- 0010 (PostgreSQL): the logins of the pub form, shared by every server (api/web/session.py),
-- as the SQLite 0010: the sha256 of the cookie's opaque id, the Stammtisch, the hash of its key
-- at login (a changed key ends every login) and when the login expires (naive UTC).
CREATE TABLE web_sessions (
    id_hash        text PRIMARY KEY,
    stammtisch_id  bigint NOT NULL REFERENCES stammtische (id) ON DELETE CASCADE,
    token_hash     text NOT NULL,
    expires_at     timestamp NOT NULL
);

CREATE INDEX web_sessions_expiry ON web_sessions (expires_at);
