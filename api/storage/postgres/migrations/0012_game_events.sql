-- 0012 (PostgreSQL): the outbox of domain events, as the SQLite 0012. The upsert of
-- event_positions in the write transaction locks the Stammtisch's counter row until the commit,
-- so a Stammtisch's positions commit in order (a reader that saw position n has seen every
-- smaller one). Each insert also sends pg_notify('schocken_events', …), delivered at commit.
CREATE TABLE event_positions (
    stammtisch_id  bigint PRIMARY KEY REFERENCES stammtische (id),
    position       bigint NOT NULL
);

CREATE TABLE game_events (
    stammtisch_id  bigint NOT NULL REFERENCES stammtische (id),
    position       bigint NOT NULL,
    game_id        bigint NOT NULL REFERENCES games (id),
    seq            bigint NOT NULL,     -- the log entry (0: the game started or was imported)
    events         json NOT NULL,
    recorded_at    timestamp NOT NULL,  -- UTC
    PRIMARY KEY (stammtisch_id, position)
);
CREATE INDEX game_events_game ON game_events (game_id, seq);
