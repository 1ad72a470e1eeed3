-- 0001 (SQLite): Stammtische, players, games, the append-only game log and the derived fact
-- tables. The retired DuckDB store had the same tables and columns at the same versions (0001
-- to 0005: api/bench/snapshot.py runs these files in DuckDB to rebuild them), so a database of
-- either engine at version N holds the same schema.
--
-- Values: JSON documents as text; timestamps as ISO 8601 text without offset, UTC except
-- played_local ('2026-11-27 19:00:00[.ffffff]', which sorts like the time); booleans as 0/1.
-- The declared types (JSON, TIMESTAMP, BOOLEAN) tell the adapter how to read a column back.
-- Unlike DuckDB (its store had none), SQLite checks foreign keys cheaply, with the parent's primary
-- key (PRAGMA foreign_keys=ON on every connection): a row of a game needs its game, a game and
-- a player their Stammtisch. Player ids of seats and facts are not checked. The fact tables get
-- an index on their game (read and rewritten per game), which DuckDB's zone maps replace.

CREATE TABLE stammtische (
    id          INTEGER PRIMARY KEY,
    slug        TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    rules       JSON NOT NULL,          -- house rules {"preset", "overrides"}
    private     BOOLEAN NOT NULL,       -- statistics and games readable only with the token
    token_hash  TEXT NOT NULL,          -- sha256 of the write token, hex
    created_at  TIMESTAMP NOT NULL      -- UTC
);

CREATE TABLE players (
    id             INTEGER PRIMARY KEY,
    stammtisch_id  INTEGER NOT NULL REFERENCES stammtische (id),
    name           TEXT NOT NULL,
    retired        BOOLEAN NOT NULL,
    created_at     TIMESTAMP NOT NULL,
    retired_at     TIMESTAMP
);
CREATE INDEX players_stammtisch ON players (stammtisch_id);

CREATE TABLE games (
    id             INTEGER PRIMARY KEY,
    stammtisch_id  INTEGER NOT NULL REFERENCES stammtische (id),
    header         JSON NOT NULL,       -- the game log document without "events", as given
    rules          JSON NOT NULL,       -- {"preset", "overrides"}
    options        JSON NOT NULL,       -- the ruleset expanded: every option with its value
    played_at      TEXT,                -- ISO 8601 with offset as given (NULL: not given)
    played_at_utc  TIMESTAMP NOT NULL,
    played_local   TIMESTAMP NOT NULL,  -- wall-clock time at the table
    year           INTEGER NOT NULL,    -- calendar year at the table: the statistics year
    source         TEXT NOT NULL,       -- 'api' (started over HTTP) or 'import'
    created_at     TIMESTAMP NOT NULL
);
CREATE INDEX games_stammtisch ON games (stammtisch_id, played_at_utc);

-- Seat order of a game; player_id is the Stammtisch's player, name as it was at the game.
CREATE TABLE game_players (
    game_id    INTEGER NOT NULL REFERENCES games (id),
    seat       INTEGER NOT NULL,        -- 0-based, clockwise
    player_id  INTEGER NOT NULL,
    name       TEXT NOT NULL,
    starter    BOOLEAN NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX game_players_player ON game_players (player_id);

-- The truth: every accepted entry, append-only, numbered per game from 1. The primary key is
-- the guard of concurrent writers: two appends of one (game, seq) cannot both commit.
-- kind: 'turn' (summary or detail), 'throw' (one throw of a throw-by-throw turn),
-- 'penalty', 'undo' (body {"undoes": seq, ...}: the audit record of an undo).
CREATE TABLE game_log (
    game_id      INTEGER NOT NULL REFERENCES games (id),
    seq          INTEGER NOT NULL,
    kind         TEXT NOT NULL,
    body         JSON NOT NULL,
    recorded_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, seq)
);

-- Derived facts, rewritten by undo and rebuild, appended otherwise.
CREATE TABLE game_facts (
    game_id      INTEGER PRIMARY KEY REFERENCES games (id),
    status       TEXT NOT NULL,         -- 'running' | 'finished'
    phase        TEXT NOT NULL,         -- 'half1' | 'half2' | 'finale' | 'finished'
    loser_id     INTEGER,
    loser        TEXT,
    blattschuss  BOOLEAN NOT NULL,
    finalist1_id INTEGER,
    finalist2_id INTEGER,
    rounds       INTEGER NOT NULL       -- resolved rounds, repeated ones included (gone in 0004)
);

CREATE TABLE turn_facts (
    game_id       INTEGER NOT NULL REFERENCES games (id),
    turn_no       INTEGER NOT NULL,     -- 1-based within the game
    seq           INTEGER NOT NULL,     -- log entry that closed the turn
    half          TEXT NOT NULL,
    round_no      INTEGER NOT NULL,     -- 1-based within the game, as in round_facts
    player_id     INTEGER NOT NULL,
    player        TEXT NOT NULL,
    dice          TEXT NOT NULL,        -- canonical notation, pips ascending: '1-1-4'
    throws        INTEGER NOT NULL,
    hand          BOOLEAN NOT NULL,
    blind         BOOLEAN NOT NULL,
    category      TEXT NOT NULL,
    result_name   TEXT NOT NULL,
    deckel_value  INTEGER NOT NULL,     -- what the result is worth as the best of a round
    rank_key      INTEGER NOT NULL,     -- comparison key, higher is better
    entry         TEXT NOT NULL         -- 'summary' or 'detail'
);
CREATE INDEX turn_facts_game ON turn_facts (game_id, turn_no);

CREATE TABLE round_facts (
    game_id          INTEGER NOT NULL REFERENCES games (id),
    round_no         INTEGER NOT NULL,
    half             TEXT NOT NULL,
    starter_id       INTEGER,
    starter          TEXT,
    throw_limit      INTEGER,
    best_id          INTEGER,
    best             TEXT,
    worst_id         INTEGER,
    worst            TEXT,
    deckel           INTEGER NOT NULL,  -- what the worst actually received
    source           TEXT,              -- 'mitte', 'all' or the paying player's name
    source_player_id INTEGER,
    repeated         BOOLEAN NOT NULL
);
CREATE INDEX round_facts_game ON round_facts (game_id, round_no);

-- Every movement of Deckel to a player: rounds and penalties.
CREATE TABLE deckel_moves (
    game_id           INTEGER NOT NULL REFERENCES games (id),
    move_no           INTEGER NOT NULL,
    seq               INTEGER NOT NULL,
    half              TEXT NOT NULL,
    reason            TEXT NOT NULL,    -- 'round' | 'penalty'
    round_no          INTEGER,
    receiver_id       INTEGER NOT NULL,
    receiver          TEXT NOT NULL,
    source            TEXT NOT NULL,    -- 'mitte', 'all' or a player's name
    source_player_id  INTEGER,
    amount            INTEGER NOT NULL
);
CREATE INDEX deckel_moves_game ON deckel_moves (game_id, move_no);

CREATE TABLE half_facts (
    game_id      INTEGER NOT NULL REFERENCES games (id),
    half         TEXT NOT NULL,
    loser_id     INTEGER NOT NULL,
    loser        TEXT NOT NULL,
    rounds       INTEGER NOT NULL
);
CREATE INDEX half_facts_game ON half_facts (game_id, half);
