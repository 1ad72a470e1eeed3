"""Benchmark of the statistics: bulk load, queries on DuckDB beside SQLite, site build, memory.

    python -m api.bench.stats_bench               # 1,000 Stammtische × 10 years (≈ 40M turns)
    python -m api.bench.stats_bench --scale 0.02  # 20 Stammtische: a quick run

1. Simulate one pool of weekly games for ten years (6 to 8 of 8 players, through the engine)
   and bulk-load it as Stammtisch 1 (:class:`dashboard.bulk.BulkLoader`: Python rows → CSV →
   ``INSERT … SELECT FROM read_csv``).
2. Every other Stammtisch replays the pool's games in its own order with its own players,
   written by ``INSERT … SELECT`` in game-id order (``stats_bench.sql``); ids follow time.
   The game log is loaded for the pool only (the statistics never read it).
3. All statistics of random Stammtisch-years (``Statistics.collect``) on DuckDB, and the same
   query files on SQLite (stdlib ``sqlite3``, indexed on every join key) loaded with the same rows.
4. The static site of one Stammtisch (ten years: eleven pages), and the peak memory (RSS).

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sqlite3
import statistics
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from api.config import Config
from api.rules import PRESETS
from api.rules.log import to_log
from api.rules.simulate import simulate_game
from api.storage.records import TABLE_COLUMNS
from api.storage.sql import migrations
from api.storage.sql import queries as named_queries
from dashboard.bulk import BulkLoader, game_rows
from dashboard.demo import fridays
from dashboard.site import build_site
from dashboard.stats import Statistics, queries

PLAYERS = [f"Spieler {i}" for i in range(1, 9)]
PLAYER_IDS = {name: i + 1 for i, name in enumerate(PLAYERS)}
#: the tables the statistics read (all game data but the log)
SQLITE_TABLES = tuple(table for table in TABLE_COLUMNS if table != "game_log")
SQLITE_INDEXES = (
    "CREATE INDEX games_st_year ON games (stammtisch_id, year)",
    "CREATE INDEX game_players_game ON game_players (game_id)",
    "CREATE INDEX game_facts_game ON game_facts (game_id)",
    "CREATE INDEX half_facts_game ON half_facts (game_id)",
    "CREATE INDEX deckel_moves_game ON deckel_moves (game_id)",
    "CREATE INDEX round_facts_game ON round_facts (game_id, round_no)",
    "CREATE INDEX turn_facts_game ON turn_facts (game_id)",
    "CREATE INDEX player_game_facts_game ON player_game_facts (game_id)",
    "CREATE INDEX player_game_facts_st_year ON player_game_facts (stammtisch_id, year)",
    "CREATE INDEX players_id ON players (id)",
)


def sql_statements() -> dict[str, str]:
    """The named statements of ``stats_bench.sql`` (``-- name: x`` starts statement x)."""
    return named_queries("api.bench", "stats_bench.sql")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def line(label: str, value: str) -> None:
    print(f"  {label:<52} {value}", flush=True)


def scalar(conn: Any, sql: str, parameters: Any = None) -> Any:
    """The first column of the first row of ``sql`` (a count, a setting)."""
    row = conn.execute(sql, parameters).fetchone()
    assert row is not None, sql
    return row[0]


def simulate_pool(evenings: list[datetime], rng: random.Random) -> list[dict[str, Any]]:
    """One weekly game per evening, 6 to 8 of the 8 players, as game logs."""
    rules = PRESETS["standard"]
    pool = []
    for at in evenings:
        seats = rng.sample(PLAYERS, rng.choice((6, 7, 8)))
        game = simulate_game(rules, seats, seats[0], rng, played_at=at.isoformat())
        pool.append(to_log(game))
    return pool


def pool_rows(
    pool: list[dict[str, Any]], n: int, interleaved: bool, now: datetime
) -> list[dict[str, list[tuple[Any, ...]]]]:
    """Replay the pool and derive the rows of every table (game ids as the replicas use them)."""
    return [
        game_rows(w * n + 1 if interleaved else w + 1, 1, PLAYER_IDS, log, now)
        for w, log in enumerate(pool)
    ]


def bulk_load(conn: Any, rows: list[dict[str, list[tuple[Any, ...]]]], now: datetime) -> int:
    """Stammtisch 1, its players and the pool's rows through :class:`BulkLoader`; turns loaded."""
    loader = BulkLoader(conn)
    loader.add("stammtische", [(1, "stammtisch-1", "Stammtisch 1", {}, False, "x", now)])
    loader.add("players", [(i, 1, name, False, now, None) for name, i in PLAYER_IDS.items()])
    for game in rows:
        loader.add_game(game)
    conn.begin()
    loaded = loader.flush()
    conn.commit()
    loader.close()
    return loaded["turn_facts"]


def replicate(conn: Any, n: int, weeks: int, interleaved: bool) -> None:
    """Stammtische 2..n replay the pool by ``INSERT … SELECT`` (``stats_bench.sql``)."""
    sql = sql_statements()
    conn.begin()
    conn.execute(sql["stammtische"], {"n": n})
    conn.execute(sql["players"], {"n": n})
    conn.execute(sql["plan"], {"n": n, "weeks": weeks, "interleaved": interleaved})
    conn.execute(sql["macros"])
    for table in (
        "games", "game_players", "game_facts", "turn_facts", "round_facts", "deckel_moves",
        "half_facts", "player_game_facts",
    ):  # fmt: skip
        conn.execute(sql[table])
    conn.commit()


def load(conn: Any, n: int, years: int, seed: int, interleaved: bool) -> dict[str, float]:
    """Simulate the pool, bulk-load it, replicate it to ``n`` Stammtische; returns timings."""
    rng = random.Random(seed)
    evenings = fridays(2016, years)
    weeks = len(evenings)
    now = datetime(2026, 1, 1)

    started = time.perf_counter()
    pool = simulate_pool(evenings, rng)
    simulated = time.perf_counter() - started
    started = time.perf_counter()
    rows = pool_rows(pool, n, interleaved, now)
    derived = time.perf_counter() - started
    started = time.perf_counter()
    pool_turns = bulk_load(conn, rows, now)
    pool_seconds = time.perf_counter() - started
    started = time.perf_counter()
    replicate(conn, n, weeks, interleaved)
    copy_seconds = time.perf_counter() - started
    summary_rows = scalar(conn, "SELECT count(*) FROM player_game_facts")
    turns = scalar(conn, sql_statements()["count_turns"])

    layout = "interleaved by week (live)" if interleaved else "one block per Stammtisch"
    print(f"Load: {n} Stammtische × {years} years ({weeks} weekly games each), ids {layout}")
    line("pool: simulated games (engine)", f"{weeks} in {simulated:.1f} s")
    line("pool: replay + derive facts (API code)", f"{derived:.1f} s")
    line(
        "pool: Python rows → CSV → DuckDB (every table)",
        f"{pool_turns:,} turns in {pool_seconds:.2f} s = {pool_turns / pool_seconds:,.0f} turns/s",
    )
    copied = turns - pool_turns
    if copied:
        line(
            "replicas: INSERT … SELECT in game-id order",
            f"{copied:,} turns in {copy_seconds:.1f} s = {copied / copy_seconds:,.0f} turns/s",
        )
    line("per-player summary rows (player_game_facts)", f"{summary_rows:,}")
    total = pool_seconds + copy_seconds
    line("bulk load overall", f"{turns:,} turns in {total:.1f} s = {turns / total:,.0f} turns/s")
    line("games", f"{n * weeks:,}")
    return {"turns": turns}


def to_sqlite(duck: Any, path: Path) -> float:
    """Copy the tables the statistics read into an SQLite file, with indexes; returns seconds."""
    started = time.perf_counter()
    lite = sqlite3.connect(path)
    lite.execute("PRAGMA journal_mode = OFF")
    lite.execute("PRAGMA synchronous = OFF")
    for table in SQLITE_TABLES:
        cur = duck.execute(f"SELECT * FROM {table} LIMIT 0")  # noqa: S608 - fixed table names
        columns = [d[0] for d in cur.description]
        cur.fetchall()
        lite.execute(f"CREATE TABLE {table} ({', '.join(columns)})")
        # timestamps and JSON as text, as SQLite keeps them
        select = ", ".join(f"CAST({c} AS VARCHAR)" if c.endswith(("_at", "_utc", "_local")) or c in ("rules", "header", "options") else c for c in columns)  # fmt: skip
        cur = duck.execute(f"SELECT {select} FROM {table}")  # noqa: S608
        insert = f"INSERT INTO {table} VALUES ({', '.join('?' * len(columns))})"
        while rows := cur.fetchmany(200_000):
            lite.executemany(insert, rows)
        lite.commit()
    for statement in SQLITE_INDEXES:
        lite.execute(statement)
    lite.execute("ANALYZE")
    lite.commit()
    lite.close()
    return time.perf_counter() - started


class TimedConnection:
    """Wraps a connection; records the time of every statistics query by name."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.names = {q.sql: q.name for q in queries().values()}
        self.times: dict[str, list[float]] = {}

    def execute(self, sql: str, parameters: Any = None) -> Any:
        started = time.perf_counter()
        cur = self.conn.execute(sql, parameters)
        rows = cur.fetchall()
        elapsed = (time.perf_counter() - started) * 1000
        self.times.setdefault(self.names.get(sql, "?"), []).append(elapsed)
        return _Fetched(cur.description, rows)


class _Fetched:
    def __init__(self, description: Any, rows: list[Any]) -> None:
        self.description = description
        self.rows = rows

    def fetchall(self) -> list[Any]:
        return self.rows


def breakdown(conn: Any, periods: list[tuple[int, int | None]]) -> str:
    timed = TimedConnection(conn)
    time_collect(Statistics(timed), periods)
    parts = sorted(timed.times.items(), key=lambda kv: -statistics.median(kv[1]))
    return ", ".join(f"{name} {statistics.median(t):.1f}" for name, t in parts)


def time_collect(stats: Statistics, periods: list[tuple[int, int | None]]) -> list[float]:
    """Wall-clock ms per period; the process CPU ms (all threads) go to ``CPU_TIMES``."""
    out = []
    for stammtisch_id, year in periods:
        started, cpu = time.perf_counter(), time.process_time()
        stats.collect(stammtisch_id, year)
        out.append((time.perf_counter() - started) * 1000)
        CPU_TIMES.append((time.process_time() - cpu) * 1000)
    return out


CPU_TIMES: list[float] = []


def describe(times: list[float]) -> str:
    cpu = CPU_TIMES[-len(times) :]
    CPU_TIMES.clear()
    return (
        f"median {statistics.median(times):6.1f} ms, max {max(times):6.1f} ms "
        f"({len(times)} runs; CPU median {statistics.median(cpu):.1f} ms)"
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="share of 1,000 Stammtische")
    parser.add_argument("--years", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--samples", type=int, default=20, help="Stammtisch-years timed")
    parser.add_argument(
        "--dir",
        help="work folder, kept afterwards (default: a temporary one); "
        "a folder of an earlier run is measured again without loading",
    )
    parser.add_argument("--threads", type=int, help="DuckDB threads (default: all cores)")
    parser.add_argument(
        "--query-threads",
        type=int,
        default=Config.DUCKDB_THREADS,
        help="DuckDB threads for the queries and the site (default: the server's)",
    )
    parser.add_argument("--no-sqlite", action="store_true", help="skip the SQLite comparison")
    parser.add_argument("--memory-limit", default="12GB", help="DuckDB memory_limit")
    parser.add_argument(
        "--interleaved",
        action="store_true",
        help="game ids interleaved by week across Stammtische (live recording) instead of blocks",
    )
    return parser.parse_args(argv)


def open_database(args: argparse.Namespace, work: Path) -> tuple[Any, int]:
    """The DuckDB file in ``work``: loaded now, or reused from an earlier run; (conn, turns)."""
    db = work / "bench.duckdb"
    reuse = db.exists()  # a --dir of an earlier run: measure again without loading
    conn = duckdb.connect(
        str(db),
        config={
            "autoinstall_known_extensions": False,
            "memory_limit": args.memory_limit,
            "temp_directory": str(work / "spill"),
        },
    )
    if args.threads:
        conn.execute("SET threads = $threads", {"threads": args.threads})
    if not reuse:  # the API's schema through its (DuckDB dialect) migrations
        for _, _, sql in migrations():
            conn.execute(sql)
    if reuse:
        turns = scalar(conn, sql_statements()["count_turns"])
        print(f"Reusing {db} ({turns:,} turns)")
    else:
        n = max(1, round(1000 * args.scale))
        turns = int(load(conn, n, args.years, args.seed, args.interleaved)["turns"])
        conn.execute("CHECKPOINT")
    line("DuckDB file", f"{db.stat().st_size / 2**20:,.0f} MiB")
    line("DuckDB threads (load)", str(scalar(conn, "SELECT current_setting('threads')")))
    # the queries run as the server runs them (api/config.py DUCKDB_THREADS)
    conn.execute("SET threads = $threads", {"threads": args.query_threads})
    line("DuckDB threads (queries, site)", str(args.query_threads))
    line("peak memory so far (RSS)", f"{peak_mb():,.0f} MiB")
    return conn, turns


Periods = list[tuple[int, int | None]]


def time_duckdb(conn: Any, periods: Periods, alltime: Periods) -> None:
    stats = Statistics(conn)
    stats.collect(*periods[0])  # warm up: first query plans, file pages
    print("\nAll statistics of one period (Statistics.collect: 9 queries, what one page shows)")
    # first touch of a Stammtisch's row groups reads them from the file (cold); again: warm
    line("DuckDB: one Stammtisch-year, first time", describe(time_collect(stats, periods)))
    line("DuckDB: one Stammtisch-year, again", describe(time_collect(stats, periods)))
    line("DuckDB: one Stammtisch, all time, first time", describe(time_collect(stats, alltime)))
    line("DuckDB: one Stammtisch, all time, again", describe(time_collect(stats, alltime)))
    line("DuckDB: per query, one year (median ms)", breakdown(conn, periods[:5]))


def time_sqlite(
    conn: Any, lite_path: Path, reuse: bool, periods: Periods, alltime: Periods
) -> None:
    """The same statistics on an SQLite copy of the rows (made now unless reused)."""
    if not (reuse and lite_path.exists()):
        lite_path.unlink(missing_ok=True)
        seconds = to_sqlite(conn, lite_path)
        line(
            "SQLite: copy of the same rows + indexes",
            f"{seconds:.1f} s, {lite_path.stat().st_size / 2**20:,.0f} MiB",
        )
    lite = sqlite3.connect(lite_path)
    lite_stats = Statistics(lite)
    lite_stats.collect(*periods[0])
    line("SQLite: one Stammtisch-year, first time", describe(time_collect(lite_stats, periods)))
    line("SQLite: one Stammtisch-year, again", describe(time_collect(lite_stats, periods)))
    line("SQLite: per query, one year (median ms)", breakdown(lite, periods[:5]))
    line(
        "SQLite: one Stammtisch, all time, first time",
        describe(time_collect(lite_stats, alltime)),
    )
    line("SQLite: one Stammtisch, all time, again", describe(time_collect(lite_stats, alltime)))
    lite.close()


def time_site(conn: Any, work: Path, stammtisch_id: int) -> None:
    print("\nStatic site of one Stammtisch (index + all time + one page per year)")
    slug = f"stammtisch-{stammtisch_id}"
    started = time.perf_counter()
    result = build_site(conn, work / "site", slugs=[slug])
    line(f"build_site {slug}", f"{result.pages} pages in {time.perf_counter() - started:.2f} s")


def print_summary(turns: int) -> None:
    print()
    line("turns in the database", f"{turns:,}")
    line("peak memory (RSS, this process incl. DuckDB)", f"{peak_mb():,.0f} MiB")
    line(
        "load average (1, 5, 15 min; 2 cores shared)",
        " ".join(f"{x:.1f}" for x in os.getloadavg()),
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="stats-bench-") as tmp:
        work = Path(args.dir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        reuse = (work / "bench.duckdb").exists()
        conn, turns = open_database(args, work)
        picked = conn.execute(sql_statements()["random_years"], {"limit": args.samples}).fetchall()
        periods: Periods = [(s, y) for s, y in picked]
        alltime: Periods = [(s, None) for s, _ in picked[:5]]
        time_duckdb(conn, periods, alltime)
        if not args.no_sqlite:
            time_sqlite(conn, work / "bench.sqlite", reuse, periods, alltime)
        time_site(conn, work, periods[0][0])
        conn.close()
        print_summary(turns)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
