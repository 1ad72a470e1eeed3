-- 0003 (PostgreSQL): one summary row per player and finished game, as the SQLite 0003.
CREATE TABLE player_game_facts (
    game_id          bigint NOT NULL REFERENCES games (id),
    player_id        bigint NOT NULL,
    stammtisch_id    bigint NOT NULL,
    year             bigint NOT NULL,
    played_local     timestamp NOT NULL,
    lost             bigint NOT NULL,
    finalist         bigint NOT NULL,
    finale_lost      bigint NOT NULL,
    blattschuss      bigint NOT NULL,
    halves_lost      bigint NOT NULL,
    deckel           bigint NOT NULL,
    deckel_half1     bigint NOT NULL,
    deckel_half2     bigint NOT NULL,
    deckel_finale    bigint NOT NULL,
    turns            bigint NOT NULL,
    schock_aus       bigint NOT NULL,
    fair_schock_aus  bigint NOT NULL,
    fair_schock      bigint NOT NULL,
    fair_general     bigint NOT NULL,
    fair_strasse     bigint NOT NULL,
    fair_zahl        bigint NOT NULL,
    PRIMARY KEY (game_id, player_id)
);
CREATE INDEX player_game_facts_year ON player_game_facts (stammtisch_id, year);
