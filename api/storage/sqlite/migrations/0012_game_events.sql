-- 0012 (SQLite): the outbox of domain events. One row per stored log entry that produced
-- events, and one at seq 0 when a game starts or is imported: the events as the write answered
-- them (JSON list of {"kind", "message", "data"}), written in the write's own transaction. The
-- event streams (per game by seq, per Stammtisch by position) and the webhooks read it.
-- position counts a Stammtisch's rows from 1 in commit order: event_positions holds the last
-- one per Stammtisch, taken with an upsert in the write transaction (on PostgreSQL that row
-- lock orders the commits of one Stammtisch; SQLite has one writer anyway). The rowid of
-- game_events grows in commit order: a cursor for pollers across every Stammtisch.
CREATE TABLE event_positions (
    stammtisch_id  INTEGER PRIMARY KEY REFERENCES stammtische (id),
    position       INTEGER NOT NULL
);

CREATE TABLE game_events (
    stammtisch_id  INTEGER NOT NULL REFERENCES stammtische (id),
    position       INTEGER NOT NULL,
    game_id        INTEGER NOT NULL REFERENCES games (id),
    seq            INTEGER NOT NULL,    -- the log entry (0: the game started or was imported)
    events         JSON NOT NULL,
    recorded_at    TIMESTAMP NOT NULL,  -- UTC
    PRIMARY KEY (stammtisch_id, position)
);
CREATE INDEX game_events_game ON game_events (game_id, seq);
