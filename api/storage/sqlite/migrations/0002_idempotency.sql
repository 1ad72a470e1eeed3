-- 0002 (SQLite): responses of writes sent with an Idempotency-Key (api/http/idempotency.py),
-- as the DuckDB store's 0002. One row per Stammtisch and key, written in
-- the same transaction as the write it answers, so a retry after a crash finds either both or
-- neither. Only the key's sha256 is stored; the body is sealed with a pad derived from the key.
CREATE TABLE idempotency_keys (
    stammtisch_id  INTEGER NOT NULL,    -- 0: requests outside a Stammtisch (creating one)
    key_hash       TEXT NOT NULL,       -- sha256 of the Idempotency-Key header, hex
    fingerprint    TEXT NOT NULL,       -- sha256 of method, path and body of the first request
    status         INTEGER NOT NULL,    -- HTTP status of the original response
    content_type   TEXT NOT NULL,
    body           BLOB NOT NULL,       -- original response body, XOR a pad derived from the key
    created_at     TIMESTAMP NOT NULL,  -- UTC
    PRIMARY KEY (stammtisch_id, key_hash)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
