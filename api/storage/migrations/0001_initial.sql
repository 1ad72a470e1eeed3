-- 0001: Stammtische, players, games, the append-only game log and the derived fact tables.
-- Facts are derived from the log and can always be rebuilt (`schocken rebuild`).
-- Halves are named like the engine's phases: 'half1', 'half2', 'finale'.
-- No foreign keys and no UNIQUE indexes on mutable columns: DuckDB checks both eagerly on
-- UPDATE; the service layer guarantees them instead.

CREATE SEQUENCE stammtisch_id_seq START 1;
CREATE TABLE stammtische (
    id          INTEGER PRIMARY KEY DEFAULT nextval('stammtisch_id_seq'),
    slug        VARCHAR NOT NULL UNIQUE,
    name        VARCHAR NOT NULL,
    rules       JSON NOT NULL,          -- house rules {"preset", "overrides"}
    private     BOOLEAN NOT NULL,       -- statistics and games readable only with the token
    token_hash  VARCHAR NOT NULL,       -- sha256 of the write token, hex
    created_at  TIMESTAMP NOT NULL      -- UTC
);

CREATE SEQUENCE player_id_seq START 1;
CREATE TABLE players (
    id             INTEGER PRIMARY KEY DEFAULT nextval('player_id_seq'),
    stammtisch_id  INTEGER NOT NULL,
    name           VARCHAR NOT NULL,
    retired        BOOLEAN NOT NULL,
    created_at     TIMESTAMP NOT NULL,
    retired_at     TIMESTAMP
);
CREATE INDEX players_stammtisch ON players (stammtisch_id);

CREATE SEQUENCE game_id_seq START 1;
CREATE TABLE games (
    id             INTEGER PRIMARY KEY DEFAULT nextval('game_id_seq'),
    stammtisch_id  INTEGER NOT NULL,
    header         JSON NOT NULL,       -- the game log document without "events", as given
    rules          JSON NOT NULL,       -- {"preset", "overrides"}
    options        JSON NOT NULL,       -- the ruleset expanded: every option with its value
    played_at      VARCHAR,             -- ISO 8601 with offset as given (NULL: not given)
    played_at_utc  TIMESTAMP NOT NULL,
    played_local   TIMESTAMP NOT NULL,  -- wall-clock time at the table
    year           INTEGER NOT NULL,    -- calendar year at the table: the statistics year
    source         VARCHAR NOT NULL,    -- 'api' (started over HTTP) or 'import'
    created_at     TIMESTAMP NOT NULL
);
CREATE INDEX games_stammtisch ON games (stammtisch_id);

-- Seat order of a game; player_id is the Stammtisch's player, name as it was at the game.
CREATE TABLE game_players (
    game_id    INTEGER NOT NULL,
    seat       INTEGER NOT NULL,        -- 0-based, clockwise
    player_id  INTEGER NOT NULL,
    name       VARCHAR NOT NULL,
    starter    BOOLEAN NOT NULL,
    PRIMARY KEY (game_id, seat)
);

-- The truth: every accepted entry, append-only, numbered per game from 1.
-- kind: 'turn' (summary or detail), 'throw' (one throw of a throw-by-throw turn),
-- 'penalty', 'undo' (body {"undoes": seq, ...}: the audit record of an undo).
CREATE TABLE game_log (
    game_id      INTEGER NOT NULL,
    seq          INTEGER NOT NULL,
    kind         VARCHAR NOT NULL,
    body         JSON NOT NULL,
    recorded_at  TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, seq)
);

-- Derived facts, rewritten by undo and rebuild, appended otherwise. (Domain events are not
-- stored: the log replays them; each statement costs about a millisecond here.)
CREATE TABLE game_facts (
    game_id      INTEGER PRIMARY KEY,
    status       VARCHAR NOT NULL,      -- 'running' | 'finished'
    phase        VARCHAR NOT NULL,      -- 'half1' | 'half2' | 'finale' | 'finished'
    loser_id     INTEGER,
    loser        VARCHAR,
    blattschuss  BOOLEAN NOT NULL,
    finalist1_id INTEGER,
    finalist2_id INTEGER,
    rounds       INTEGER NOT NULL       -- resolved rounds, repeated ones included
);

CREATE TABLE turn_facts (
    game_id       INTEGER NOT NULL,
    turn_no       INTEGER NOT NULL,     -- 1-based within the game
    seq           INTEGER NOT NULL,     -- log entry that closed the turn
    half          VARCHAR NOT NULL,
    round_no      INTEGER NOT NULL,     -- 1-based within the game, as in round_facts
    player_id     INTEGER NOT NULL,
    player        VARCHAR NOT NULL,
    dice          VARCHAR NOT NULL,     -- canonical notation, pips ascending: '1-1-4'
    throws        INTEGER NOT NULL,
    hand          BOOLEAN NOT NULL,     -- aus der Hand
    blind         BOOLEAN NOT NULL,
    category      VARCHAR NOT NULL,     -- schock_aus | schock | general | strasse | zahl | special
    result_name   VARCHAR NOT NULL,     -- 'Schock 4', 'Schock aus', 'Jule' …
    deckel_value  INTEGER NOT NULL,     -- what the result is worth as the best of a round
    rank_key      BIGINT NOT NULL,      -- comparison key, higher is better
    entry         VARCHAR NOT NULL      -- 'summary' or 'detail'
);

CREATE TABLE round_facts (
    game_id          INTEGER NOT NULL,
    round_no         INTEGER NOT NULL,
    half             VARCHAR NOT NULL,
    starter_id       INTEGER,
    starter          VARCHAR,
    throw_limit      INTEGER,
    best_id          INTEGER,
    best             VARCHAR,
    worst_id         INTEGER,
    worst            VARCHAR,
    deckel           INTEGER NOT NULL,  -- what the worst actually received
    source           VARCHAR,           -- 'mitte', 'all' or the paying player's name
    source_player_id INTEGER,
    repeated         BOOLEAN NOT NULL
);

-- Every movement of Deckel to a player: rounds and penalties.
CREATE TABLE deckel_moves (
    game_id           INTEGER NOT NULL,
    move_no           INTEGER NOT NULL,
    seq               INTEGER NOT NULL,
    half              VARCHAR NOT NULL,
    reason            VARCHAR NOT NULL, -- 'round' | 'penalty'
    round_no          INTEGER,
    receiver_id       INTEGER NOT NULL,
    receiver          VARCHAR NOT NULL,
    source            VARCHAR NOT NULL, -- 'mitte', 'all' or a player's name
    source_player_id  INTEGER,
    amount            INTEGER NOT NULL
);

CREATE TABLE half_facts (
    game_id      INTEGER NOT NULL,
    half         VARCHAR NOT NULL,
    loser_id     INTEGER NOT NULL,
    loser        VARCHAR NOT NULL,
    rounds       INTEGER NOT NULL
);
