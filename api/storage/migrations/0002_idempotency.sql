-- 0002: responses of writes sent with an Idempotency-Key (api/idempotency.py).
-- One row per Stammtisch and key, written in the same transaction as the write it answers, so
-- a retry after a crash finds either both or neither. The key itself is not stored (only its
-- sha256); the response body is stored encrypted with a pad derived from the key, so the row
-- does not disclose a Stammtisch's token (the answer to creating one). Rows older than
-- IDEMPOTENCY_TTL_HOURS are purged.
CREATE TABLE idempotency_keys (
    stammtisch_id  INTEGER NOT NULL,    -- 0: requests outside a Stammtisch (creating one)
    key_hash       VARCHAR NOT NULL,    -- sha256 of the Idempotency-Key header, hex
    fingerprint    VARCHAR NOT NULL,    -- sha256 of method, path and body of the first request
    status         INTEGER NOT NULL,    -- HTTP status of the original response
    content_type   VARCHAR NOT NULL,
    body           BLOB NOT NULL,       -- original response body, XOR a pad derived from the key
    created_at     TIMESTAMP NOT NULL,  -- UTC
    PRIMARY KEY (stammtisch_id, key_hash)
);
