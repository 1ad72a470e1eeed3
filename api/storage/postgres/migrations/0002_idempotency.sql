-- 0002 (PostgreSQL): responses of writes sent with an Idempotency-Key, as the SQLite 0002:
-- written in the transaction of the write they answer.
CREATE TABLE idempotency_keys (
    stammtisch_id  bigint NOT NULL,     -- 0: requests outside a Stammtisch (creating one)
    key_hash       text NOT NULL,
    fingerprint    text NOT NULL,
    status         bigint NOT NULL,
    content_type   text NOT NULL,
    body           bytea NOT NULL,      -- original response body, XOR a pad derived from the key
    created_at     timestamp NOT NULL,  -- UTC
    PRIMARY KEY (stammtisch_id, key_hash)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
