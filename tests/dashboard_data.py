"""Small fixed statistics data, written straight into the fact tables (no engine involved), so
every expected number in the statistics tests can be worked out by hand.

Stammtisch 1 „Zur Post“ (public). Players: Anna 1, Bert 2, Clara 3, Dieter 4, Elke 5 (joins in
July 2024), Frank 6 (one game in 2023). Stammtisch 2 „Zum Anker“ (private) has Gerd 7.

2024, finished (half 1 loser, half 2 loser, Finale → game loser):

    G1 01-05 A B C D     B, C, Finale B–C → B        rounds 12 (its 8 turns in TURNS)
    G2 02-02 A B C D     A, A, Blattschuss → A       rounds  9
    G3 03-01 A B C D     C, D, Finale C–D → C        rounds 20
    G4 04-05 A B C D     B, D, Finale B–D → D        rounds 20
    G5 07-05 A B C D E   E, E, Blattschuss → E       rounds  7
    G6 08-02 A C E       A, C, Finale A–C → C        rounds 15
    G7 09-06 B D E       B, E, Finale B–E → E        rounds  5
    G10 10-04 A B        still running: never counted

2023, finished: G8 11-03 A B C F: A, C, Finale A–C → A; G9 12-01 A B C: B, C, Finale B–C → B.
Stammtisch 2: G11 2024-05-03 Gerd and Hugo, Gerd loses both halves: never in Stammtisch 1's numbers.
Turns, rounds and Deckel moves exist for G1 and G5 only (see ``TURNS``, ``ROUNDS``, ``DECKEL``).
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

from api.bench.snapshot import sqlite_to_duckdb
from api.domain.facts import Seating, summarize
from api.storage import SQLiteStore
from api.storage.records import FACT_COLUMNS
from api.storage.sqlite.store import encode

PLAYERS = [
    (1, 1, "Anna"),
    (2, 1, "Bert"),
    (3, 1, "Clara"),
    (4, 1, "Dieter"),
    (5, 1, "Elke"),
    (6, 1, "Frank"),
    (7, 2, "Gerd"),
    (8, 2, "Hugo"),
]

# game id: (stammtisch, date, seats, half1 loser, half2 loser, loser, rounds, turns, status)
GAMES: dict[int, tuple[Any, ...]] = {
    1: (1, "2024-01-05", [1, 2, 3, 4], 2, 3, 2, 12, 8, "finished"),
    2: (1, "2024-02-02", [1, 2, 3, 4], 1, 1, 1, 9, 30, "finished"),
    3: (1, "2024-03-01", [1, 2, 3, 4], 3, 4, 3, 20, 60, "finished"),
    4: (1, "2024-04-05", [1, 2, 3, 4], 2, 4, 4, 20, 70, "finished"),
    5: (1, "2024-07-05", [1, 2, 3, 4, 5], 5, 5, 5, 7, 30, "finished"),
    6: (1, "2024-08-02", [1, 3, 5], 1, 3, 3, 15, 30, "finished"),
    7: (1, "2024-09-06", [2, 4, 5], 2, 5, 5, 5, 30, "finished"),
    8: (1, "2023-11-03", [1, 2, 3, 6], 1, 3, 1, 10, 30, "finished"),
    9: (1, "2023-12-01", [1, 2, 3], 2, 3, 2, 10, 30, "finished"),
    10: (1, "2024-10-04", [1, 2], 1, None, None, 3, 9, "running"),
    11: (2, "2024-05-03", [7, 8], 7, 7, 7, 30, 90, "finished"),
}

# (game, half, receiver, amount, reason)
DECKEL = [
    (1, "half1", 2, 5, "round"),
    (1, "half1", 3, 3, "round"),
    (1, "half1", 2, 5, "round"),
    (1, "half2", 3, 13, "round"),
    (1, "finale", 2, 13, "round"),
    (5, "half1", 5, 13, "round"),
    (5, "half2", 5, 9, "round"),
    (5, "half2", 5, 4, "round"),
    (5, "half2", 1, 1, "penalty"),
    (10, "half1", 1, 13, "round"),  # running game
    (11, "half1", 7, 20, "round"),  # other Stammtisch
]

# rounds of G1: (round_no, starter, throw limit)
ROUNDS = [(1, 1, 1), (2, 2, 3)]
# turns of G1: (round_no, player, dice, throws, hand, blind, category)
TURNS = [
    (1, 1, "1-1-1", 1, True, False, "schock_aus"),  # the opener chose to stop: not fair
    (1, 2, "2-2-2", 1, True, False, "general"),  # forced by the limit of one: fair
    (1, 3, "1-2-3", 1, True, False, "strasse"),  # fair
    (1, 4, "1-1-4", 1, True, False, "schock"),  # fair
    (2, 2, "1-1-1", 3, False, False, "schock_aus"),  # three throws: not fair
    (2, 3, "4-5-6", 1, True, False, "strasse"),  # one throw of three allowed: chosen, not fair
    (2, 4, "3-5-6", 1, True, True, "zahl"),  # blind: fair
    (2, 1, "1-1-1", 2, False, False, "schock_aus"),  # not fair
]
NAMES = {pid: name for pid, _, name in PLAYERS}


def _insert(cur: Any, sql: str, rows: list[tuple[Any, ...]]) -> None:
    if rows:  # values as the SQLite adapter stores them
        cur.executemany(sql, [[encode(v) for v in row] for row in rows])


def _temporary_file() -> str:
    folder = tempfile.mkdtemp(prefix="schocken-dashboard-data-")
    atexit.register(shutil.rmtree, folder, True)
    return str(Path(folder) / "data.sqlite3")


def make_store(
    extra_turns: list[tuple[Any, ...]] | None = None, path: str | None = None
) -> SQLiteStore:
    """A SQLite store (a temporary file unless ``path``) with the data above."""
    store = SQLiteStore(path or _temporary_file())
    cur = store.connect()  # writing fixed rows straight into the tables
    cur.execute("BEGIN IMMEDIATE")
    _fill(cur, extra_turns)
    cur.execute("COMMIT")
    cur.close()
    _summarize(store)
    return store


def _fill(cur: Any, extra_turns: list[tuple[Any, ...]] | None) -> None:
    now = datetime(2025, 1, 1)
    _insert(
        cur,
        "INSERT INTO stammtische (id, slug, name, rules, private, token_hash, created_at) "
        "VALUES (?, ?, ?, '{}', ?, 'x', ?)",
        [(1, "zur-post", "Zur Post", False, now), (2, "zum-anker", "Zum Anker", True, now)],
    )
    _insert(
        cur,
        "INSERT INTO players VALUES (?, ?, ?, false, ?, NULL)",
        [(pid, st, name, now) for pid, st, name in PLAYERS],
    )
    games, seats, facts, halves = [], [], [], []
    for gid, (st, day, players, h1, h2, loser, rounds, turns, status) in GAMES.items():
        at = datetime.fromisoformat(day + "T20:00:00")
        games.append((gid, st, at, at, at.year, now))
        seats += [(gid, i, p, NAMES[p], i == 0) for i, p in enumerate(players)]
        finale = (h1, h2) if status == "finished" and h1 != h2 else (None, None)
        facts.append(
            {
                "game_id": gid, "status": status,
                "phase": "finished" if status == "finished" else "half2",
                "loser_id": loser, "loser": NAMES.get(loser),
                "blattschuss": status == "finished" and h1 == h2,
                "finalist1_id": finale[0], "finalist2_id": finale[1],
                "turns": turns, "last_seq": turns,
            }
        )  # fmt: skip
        # one round in half 2 and in the Finale, the rest in half 1: they sum up to ``rounds``
        later = (h2 is not None) + (finale[0] is not None)
        halves += [(gid, "half1", h1, NAMES[h1], rounds - later)]
        if h2 is not None:
            halves += [(gid, "half2", h2, NAMES[h2], 1)]
        if finale[0] is not None:
            halves += [(gid, "finale", loser, NAMES[loser], 1)]
    _insert(
        cur,
        "INSERT INTO games (id, stammtisch_id, header, rules, options, played_at, played_at_utc, "
        "played_local, year, source, created_at) "
        "VALUES (?, ?, '{}', '{}', '{}', NULL, ?, ?, ?, 'import', ?)",
        games,
    )
    _insert(cur, "INSERT INTO game_players VALUES (?, ?, ?, ?, ?)", seats)
    columns = FACT_COLUMNS["game_facts"]  # whatever the schema of this version has
    _insert(
        cur,
        f"INSERT INTO game_facts VALUES ({', '.join('?' * len(columns))})",
        [tuple(row[c] for c in columns) for row in facts],
    )
    _insert(cur, "INSERT INTO half_facts VALUES (?, ?, ?, ?, ?)", halves)
    _insert(
        cur,
        "INSERT INTO deckel_moves VALUES (?, ?, 1, ?, ?, 1, ?, ?, 'mitte', NULL, ?)",
        [
            (gid, n, half, reason, to, NAMES[to], amount)
            for n, (gid, half, to, amount, reason) in enumerate(DECKEL, start=1)
        ],
    )
    _insert(
        cur,
        "INSERT INTO round_facts VALUES (1, ?, 'half1', ?, ?, ?, NULL, NULL, NULL, NULL, 1,"
        " 'mitte', NULL, false)",
        [(no, starter, NAMES[starter], limit) for no, starter, limit in ROUNDS],
    )
    turns = list(TURNS) + list(extra_turns or [])
    _insert(
        cur,
        "INSERT INTO turn_facts VALUES (1, ?, ?, 'half1', ?, ?, ?, ?, ?, ?, ?, ?, 'x', 1, 0,"
        " 'summary')",
        [
            (n, n, rnd, p, NAMES[p], dice, throws, hand, blind, cat)
            for n, (rnd, p, dice, throws, hand, blind, cat) in enumerate(turns, start=1)
        ],
    )


def _summarize(store: SQLiteStore) -> None:
    """The per-player summary rows of the finished games, as the API derives them."""
    repo = store.repository()
    rows = []
    for gid in repo.game_ids():
        facts = repo.read_facts(gid)
        if facts["game_facts"][0]["status"] != "finished":
            continue
        game = repo.get_game_by_id(gid)
        assert game is not None
        seating = Seating(gid, game.players, game.stammtisch_id, game.year, game.played_local)
        rows += summarize(seating, facts)
    repo.close()
    columns = FACT_COLUMNS["player_game_facts"]
    conn = store.connect()
    _insert(
        conn,
        f"INSERT INTO player_game_facts VALUES ({', '.join('?' * len(columns))})",
        [tuple(row[c] for c in columns) for row in rows],
    )
    conn.close()


def cursor(store: SQLiteStore) -> Any:
    """A DuckDB copy of the store's tables (what the statistics read; see api/bench/snapshot.py)."""
    return sqlite_to_duckdb(store.repository())
