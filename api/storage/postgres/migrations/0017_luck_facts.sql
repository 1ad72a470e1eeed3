-- 0017 (PostgreSQL): the luck figures of a finished game per player (api/rules/luck.py), computed
-- by the statistics refresher (dashboard/luck.py), not by the write that finished the game:
-- ``seq`` is the game's version (its last log entry) they were computed for, so a finish that
-- was undone and played differently is computed again; rows of a game that is no longer
-- finished are never read (the statistics join them with player_game_facts).
CREATE TABLE luck_facts (
    game_id     bigint NOT NULL REFERENCES games (id),
    player_id   bigint NOT NULL,
    seq         bigint NOT NULL,
    turns       bigint NOT NULL,
    expected    double precision NOT NULL,
    survived    bigint NOT NULL,
    split       bigint NOT NULL,
    luck        double precision NOT NULL,
    given_away  double precision NOT NULL,
    PRIMARY KEY (game_id, player_id)
);
