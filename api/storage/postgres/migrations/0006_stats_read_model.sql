-- 0006 (PostgreSQL): the statistics read model, as the SQLite 0006.
CREATE TABLE stats_periods (
    stammtisch_id bigint NOT NULL,
    year          bigint NOT NULL,    -- 0: all time
    games         bigint NOT NULL,
    body          text NOT NULL,      -- JSON: dashboard.stats.Period
    computed_at   timestamp NOT NULL,
    version       bigint NOT NULL,
    PRIMARY KEY (stammtisch_id, year)
);
CREATE TABLE stats_stale (
    stammtisch_id bigint PRIMARY KEY,
    version       bigint NOT NULL
);
CREATE INDEX games_stammtisch_year ON games (stammtisch_id, year);
INSERT INTO stats_stale (stammtisch_id, version) SELECT id, 1 FROM stammtische;
