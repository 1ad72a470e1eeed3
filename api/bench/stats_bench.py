"""Benchmark of the statistics read model: bulk load, full and incremental refresh, DuckDB
beside SQLite on the same set-based SQL, a period over HTTP, memory.

    python -m api.bench.stats_bench               # 1,000 Stammtische × 10 years (≈ 45M turns)
    python -m api.bench.stats_bench --scale 0.1   # 100 Stammtische: a quick run

1. Simulate one pool of weekly games for ten years (6 to 8 of 8 players, through the engine)
   and bulk-load it as Stammtisch 1 into a DuckDB file with the API's tables
   (:class:`api.bench.bulk.BulkLoader`). Every other Stammtisch replays the pool's games in
   its own order with its own players, written by ``INSERT … SELECT`` (``stats_bench.sql``).
2. The tables the statistics read (not the per-turn ones) are copied into a SQLite database
   of the API's schema (:class:`~api.storage.SQLiteStore`): the row store of the server.
3. Full refresh of every statistic of every Stammtisch and period (``schocken stats refresh
   --all``: SQLite rows → one DuckDB → one statement → JSON rows in stats_periods), and its
   parts; the same nine set-based queries run on the refresh's DuckDB and on SQLite (the row
   store, with its indexes), side by side, their rows kept inside each engine.
4. Incremental refresh of one Stammtisch marked stale (what a finished game costs), and one
   Stammtisch-year's statistics over HTTP (Flask test client, read model), and the peak memory.

With ``--postgres`` (a throwaway, durable cluster) or ``--database-url`` the same tables are
also loaded into PostgreSQL, and the full and incremental refresh fed from it are timed beside
the SQLite-fed ones (:mod:`api.bench.stats_bench_pg`). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from api.rules import PRESETS
from api.rules.log import to_log
from api.rules.simulate import simulate_game
from api.storage import SQLiteStore
from api.storage.records import TABLE_COLUMNS
from api.storage.sql import queries as named_queries
from dashboard.demo import fridays
from dashboard.periods import period_rows
from dashboard.readmodel import feed
from dashboard.site import build_site
from dashboard.stats import PARAMS, SET_QUERIES, queries

from .bulk import BulkLoader, game_rows
from .procstat import children_cpu, loadavg, peak_mb
from .snapshot import duckdb_schema
from .stats_bench_pg import Source, incremental_times

PLAYERS = [f"Spieler {i}" for i in range(1, 9)]
PLAYER_IDS = {name: i + 1 for i, name in enumerate(PLAYERS)}
#: the tables the statistics read (all game data but the log)
SQLITE_TABLES = tuple(table for table in TABLE_COLUMNS if table != "game_log")
#: the tables copied into the SQLite row store: what a refresh reads (INPUT) and the listing
ROW_STORE_TABLES = ("stammtische", "players", "games", "game_facts", "half_facts",
                    "player_game_facts")  # fmt: skip
#: SQLite as well set up for the same SQL as it can be: its sorts and temporary b-trees in
#: memory, a page cache of 2 GiB, the file mapped (DuckDB has all the memory it likes)
SQLITE_TUNING = (
    "PRAGMA temp_store = MEMORY",
    "PRAGMA cache_size = -2000000",
    "PRAGMA mmap_size = 4000000000",
)


def sql_statements() -> dict[str, str]:
    """The named statements of ``stats_bench.sql`` (``-- name: x`` starts statement x)."""
    return named_queries("api.bench", "stats_bench.sql")


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
    parser.add_argument("--no-sqlite", action="store_true", help="skip the SQLite comparison")
    parser.add_argument("--memory-limit", default="12GB", help="DuckDB memory_limit")
    parser.add_argument("--postgres", action="store_true", help="also feed from a throwaway "
                        "PostgreSQL (durable settings) loaded with the same data")  # fmt: skip
    parser.add_argument("--database-url", help="as --postgres, on this server (a new database)")
    parser.add_argument(
        "--interleaved",
        action="store_true",
        help="game ids interleaved by week across Stammtische (live recording) instead of blocks",
    )
    return parser.parse_args(argv)


def open_database(args: argparse.Namespace, work: Path) -> tuple[Any, int, bool]:
    """The DuckDB file in ``work``: loaded now, or reused from an earlier run;
    (conn, turns, reused)."""
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
    if reuse:
        turns = scalar(conn, sql_statements()["count_turns"])
        print(f"Reusing {db} ({turns:,} turns)")
    else:
        for statement in duckdb_schema():  # the API's tables
            conn.execute(statement)
        n = max(1, round(1000 * args.scale))
        turns = int(load(conn, n, args.years, args.seed, args.interleaved)["turns"])
        conn.execute("CHECKPOINT")
    line("DuckDB file (all tables, per-turn ones too)", f"{db.stat().st_size / 2**20:,.0f} MiB")
    line("DuckDB threads", str(scalar(conn, "SELECT current_setting('threads')")))
    return conn, turns, reuse


def to_row_store(duck: Any, path: Path) -> float:
    """Copy the tables a refresh reads into a SQLite database of the API's schema (the row
    store); every Stammtisch is marked stale. Returns seconds."""
    started = time.perf_counter()
    SQLiteStore(path).close()  # schema and migrations
    lite = sqlite3.connect(path)
    lite.execute("PRAGMA synchronous = OFF")
    for table in ROW_STORE_TABLES:
        columns = TABLE_COLUMNS[table]
        # timestamps and JSON as text, booleans as 0/1: as the SQLite adapter stores them
        select = ", ".join(
            f"CAST({c} AS VARCHAR)"
            if c.endswith(("_at", "_utc", "_local")) or c in ("rules", "header", "options")
            else f"CAST({c} AS INTEGER)" if c in ("private", "retired", "blattschuss", "starter")
            else c
            for c in columns
        )  # fmt: skip
        cur = duck.execute(f"SELECT {select} FROM {table}")  # noqa: S608 - fixed names
        insert = (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"  # noqa: S608
        )
        while rows := cur.fetchmany(200_000):
            lite.executemany(insert, rows)
        lite.commit()
    lite.execute("INSERT OR IGNORE INTO stats_stale SELECT id, 1 FROM stammtische")
    lite.execute("ANALYZE")
    lite.commit()
    lite.close()
    return time.perf_counter() - started


def time_sql(conn: Any) -> tuple[float, dict[str, float]]:
    """Every set-based query over every Stammtisch once, its rows kept inside the engine
    (``CREATE TEMP TABLE … AS``: no Python object per row, on either engine); (seconds,
    seconds per query)."""
    parts = {}
    for name in SET_QUERIES:
        query = queries()[name]
        sql = f"CREATE TEMP TABLE bench_{name} AS {query.sql}"  # noqa: S608 - our own files
        started = time.perf_counter()
        conn.execute(sql, {k: PARAMS[k] for k in query.params})
        parts[name] = time.perf_counter() - started
        conn.execute(f"DROP TABLE bench_{name}")
    return sum(parts.values()), parts


def time_refresh_command(repo: Any, lite_path: Path) -> float:
    """``schocken stats refresh --all`` as an operator runs it: its own process, so that its
    peak memory is its own; returns its seconds."""
    ids = repo.stammtisch_ids()
    command = [sys.executable, "-m", "api.cli", "stats", "refresh", "--all", "--db", str(lite_path)]
    started, cpu = time.perf_counter(), children_cpu()
    told = subprocess.run(command, check=True, capture_output=True, text=True).stderr
    seconds, cpu = time.perf_counter() - started, children_cpu() - cpu
    child = int(told.rsplit("höchstens ", 1)[1].split()[0])  # its VmHWM (see api/cli/stats.py)
    periods = len(repo.stats_years(None)) + len(ids)
    line(
        "schocken stats refresh --all (SQLite → DuckDB → SQL → JSON)",
        f"{seconds:.1f} s: {len(ids):,} Stammtische, {periods:,} periods, "
        f"peak RSS {child:,.0f} MiB",
    )
    line("  its CPU time (user + system, all threads)", f"{cpu:.1f} s")
    return seconds


def time_refresh(lite_path: Path, args: argparse.Namespace, postgres: Source | None) -> None:
    print("\nFull refresh: every statistic of every Stammtisch and period")
    store = SQLiteStore(lite_path)
    repo = store.repository()
    ids = repo.stammtisch_ids()
    seconds = time_refresh_command(repo, lite_path)
    started = time.perf_counter()
    conn = feed(repo, ids)  # the refresh's own steps, in this process
    line("  feed: row store → one in-memory DuckDB (stats_csv + read_csv)",
         f"{time.perf_counter() - started:.2f} s")  # fmt: skip
    started = time.perf_counter()
    period_rows(conn, ids)
    line("  compute: the one statement → JSON of every period",
         f"{time.perf_counter() - started:.2f} s")  # fmt: skip
    if postgres:  # side by side: the same refresh fed from PostgreSQL
        postgres.refresh(seconds)
    total, parts = time_sql(conn)
    conn.close()
    line("same SQL over everything: DuckDB (the refresh's input)", f"{total:.2f} s")
    line("  per query (s)", ", ".join(f"{k} {v:.2f}" for k, v in parts.items()))
    if not args.no_sqlite:
        lite = sqlite3.connect(lite_path)
        for pragma in SQLITE_TUNING:
            lite.execute(pragma)
        lite_total, lite_parts = time_sql(lite)
        lite.close()
        line(
            "same SQL over everything: SQLite (the row store)",
            f"{lite_total:.2f} s = {lite_total / total:.1f} × DuckDB's SQL, "
            f"{lite_total / seconds:.1f} × the whole refresh",
        )
        line("  per query (s)", ", ".join(f"{k} {v:.2f}" for k, v in lite_parts.items()))
    time_incremental(repo, ids, args.samples)
    if postgres:
        postgres.incremental(args.samples, describe)
    store.close()


def time_incremental(repo: Any, ids: list[int], samples: int) -> None:
    print("\nIncremental refresh: one Stammtisch marked stale (a game finished)")
    times = incremental_times(repo, ids, samples)
    line("refresh of the stale Stammtisch (all its periods)", describe(times))


def describe(times: list[float]) -> str:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"p50 {statistics.median(times):6.1f} ms, p99 {p99:6.1f} ms, "
        f"max {max(times):6.1f} ms ({len(times)} runs)"
    )


def time_http(lite_path: Path, work: Path, periods: list[tuple[int, int]]) -> None:
    from api.app import create_app

    print("\nOne Stammtisch-year's statistics over HTTP (Flask test client, read model)")
    app = create_app(
        {"STORAGE": "sqlite", "DATABASE": str(lite_path), "DASHBOARD_DIR": str(work / "site")}
    )
    client = app.test_client()
    times = []
    for _ in range(5):
        for st, year in periods:
            url = f"/api/v1/stammtische/stammtisch-{st}/statistics"
            started = time.perf_counter()
            r = client.get(url, query_string={"year": year})
            times.append((time.perf_counter() - started) * 1000)
            assert r.status_code == 200, r.text
    line("GET …/statistics?year=Y", describe(times))
    started = time.perf_counter()
    r = client.get(f"/dashboard/stammtisch-{periods[0][0]}/{periods[0][1]}.html")
    line(
        "GET /dashboard/<slug>/<year>.html (rendered)",
        f"{(time.perf_counter() - started) * 1000:.0f} ms",
    )
    app.extensions["schocken"].store.close()


def time_site(lite_path: Path, work: Path, stammtisch_id: int) -> None:
    from dashboard.readmodel import ReadModel

    print("\nStatic site of one Stammtisch (index + all time + one page per year)")
    store = SQLiteStore(lite_path)
    slug = f"stammtisch-{stammtisch_id}"
    started = time.perf_counter()
    result = build_site(
        ReadModel(store.repository(), refresh_first=True), work / "site-out", slugs=[slug]
    )
    line(f"build_site {slug}", f"{result.pages} pages in {time.perf_counter() - started:.2f} s")
    store.close()


def print_summary(turns: int) -> None:
    print()
    line("turns in the database", f"{turns:,}")
    line("peak memory (RSS, this process incl. DuckDB)", f"{peak_mb():,.0f} MiB")
    line("load average at the end (/proc/loadavg; 2 cores shared)", loadavg())


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    pg = args.postgres or args.database_url
    print(f"load average at start (/proc/loadavg): {loadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="stats-bench-") as tmp:
        work = Path(args.dir or tmp)
        work.mkdir(parents=True, exist_ok=True)
        conn, turns, reuse = open_database(args, work)
        picked = conn.execute(sql_statements()["random_years"], {"limit": args.samples}).fetchall()
        periods = [(int(s), int(y)) for s, y in picked]
        lite_path = work / "bench.sqlite3"
        if not (reuse and lite_path.exists()):
            lite_path.unlink(missing_ok=True)
            seconds = to_row_store(conn, lite_path)
            size = lite_path.stat().st_size / 2**20
            line(
                "SQLite row store: copy of the tables a refresh reads",
                f"{seconds:.1f} s, {size:,.0f} MiB",
            )
        postgres = Source(args.database_url, conn, line) if pg else None
        conn.close()
        try:
            time_refresh(lite_path, args, postgres)
        finally:
            if postgres:
                postgres.stop()
        time_http(lite_path, work, periods)
        time_site(lite_path, work, periods[0][0])
        print_summary(turns)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
