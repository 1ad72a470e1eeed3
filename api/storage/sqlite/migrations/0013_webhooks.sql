-- 0013 (SQLite): webhooks and their deliveries, a transactional outbox (api/domain/webhooks.py,
-- the sender api/domain/sender.py).
--
-- webhooks: the URLs a Stammtisch registered, each for the event kinds it chose (a JSON list),
-- with its signing secret ("whsec_<base64>", kept to sign every delivery). AUTOINCREMENT: an id
-- is never used twice, so the idempotency ids of a deleted webhook's deliveries never return.
CREATE TABLE webhooks (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    stammtisch_id  INTEGER NOT NULL REFERENCES stammtische (id) ON DELETE CASCADE,
    url            TEXT NOT NULL,
    kinds          JSON NOT NULL,          -- ["game_lost", ...]
    secret         TEXT NOT NULL,
    active         BOOLEAN NOT NULL,
    description    TEXT NOT NULL,
    created_at     TIMESTAMP NOT NULL
);
CREATE INDEX webhooks_stammtisch ON webhooks (stammtisch_id);

-- webhook_deliveries: one row per event of a stored game entry (game_events (stammtisch_id,
-- position), the event_index-th of its list) that a webhook chose, inserted in the same
-- transaction as the entry; or a test ping (position NULL, the body in payload). The receiver's
-- idempotency id ("webhook-id" header) is "<webhook_id>-<position>-<event_index>" (a ping:
-- "<webhook_id>-ping-<id>"), the same on every attempt and redelivery. state: pending (due at
-- next_attempt_at; a sender's claim moves that on by its lease), delivered, failed.
-- AUTOINCREMENT here too: a ping's id is never that of a forgotten one.
CREATE TABLE webhook_deliveries (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    webhook_id       INTEGER NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    stammtisch_id    INTEGER NOT NULL,
    position         INTEGER,
    event_index      INTEGER NOT NULL,
    payload          JSON,
    state            TEXT NOT NULL,
    attempts         INTEGER NOT NULL,
    next_attempt_at  TIMESTAMP NOT NULL,
    last_status      INTEGER,
    last_error       TEXT,
    last_attempt_at  TIMESTAMP,
    delivered_at     TIMESTAMP,
    created_at       TIMESTAMP NOT NULL,
    kind             TEXT NOT NULL           -- the event's kind ("ping" for a test)
);
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE state = 'pending';
