-- 0017 (SQLite): the luck figures of a finished game per player (api/rules/luck.py), computed
-- by the statistics refresher (dashboard/luck.py), not by the write that finished the game:
-- ``seq`` is the game's version (its last log entry) they were computed for, so a finish that
-- was undone and played differently is computed again; rows of a game that is no longer
-- finished are never read (the statistics join them with player_game_facts).
CREATE TABLE luck_facts (
    game_id     INTEGER NOT NULL REFERENCES games (id),
    player_id   INTEGER NOT NULL,
    seq         INTEGER NOT NULL,
    turns       INTEGER NOT NULL,  -- rated turns: every turn after the first of its round
    expected    REAL NOT NULL,     -- the sum of their chances (at the start) of beating it
    survived    INTEGER NOT NULL,  -- of them, those that beat the round's worst so far
    split       INTEGER NOT NULL,  -- of them, those whose every throw is known
    luck        REAL NOT NULL,     -- of those, the sum of the dice's share
    given_away  REAL NOT NULL,     -- of those, the sum of the chances the decisions gave away
    PRIMARY KEY (game_id, player_id)
);
