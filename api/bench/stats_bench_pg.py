"""The PostgreSQL source of :mod:`api.bench.stats_bench` (``--postgres`` / ``--database-url``):
the same tables a refresh reads, loaded into a PostgreSQL database of the API's schema (DuckDB
writes CSV, ``COPY … FROM STDIN`` reads it), then the full statistics refresh fed from it (the
same command, ``schocken stats refresh --all --database-url``) and its feed, and the
incremental refresh of one stale Stammtisch (what ``schocken stats refresh --watch`` runs after
a finished game), printed beside the SQLite-fed figures of the same run.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from api.storage import PostgresStore
from api.storage.records import TABLE_COLUMNS
from dashboard.periods import period_rows
from dashboard.readmodel import feed

from .pgserver import Server
from .procstat import cpu_seconds

#: what the refresh reads, the same as the SQLite row store holds (stats_bench.ROW_STORE_TABLES)
TABLES = ("stammtische", "players", "games", "game_facts", "half_facts", "player_game_facts")
#: the server settings of a statistics run: a deployment's durable defaults, more buffers
SETTINGS = ("shared_buffers=1GB", "max_wal_size=4GB", "maintenance_work_mem=512MB")


def _select(table: str, kinds: dict[str, str]) -> str:
    """DuckDB's SELECT of ``table`` as PostgreSQL's columns take it (flags, counts)."""
    columns = []
    for c in TABLE_COLUMNS[table]:
        kind = kinds[c]
        if kind == "boolean":
            columns.append(f"CAST({c} AS BOOLEAN)")
        elif kind == "bigint":
            columns.append(f"CAST({c} AS BIGINT)")
        else:
            columns.append(c)
    return f"SELECT {', '.join(columns)} FROM {table}"  # noqa: S608 - fixed names


def load(duck: Any, url: str, line: Callable[[str, str], None]) -> float:
    """Copy the tables a refresh reads from DuckDB into the (migrated, empty) database ``url``,
    every Stammtisch marked stale; returns seconds."""
    import psycopg

    started = time.perf_counter()
    store = PostgresStore(url, pool_size=1)
    kinds = {t: dict(cols) for t, cols in store.kinds.items()}
    store.close()
    with (
        tempfile.TemporaryDirectory(prefix="stats-bench-pg-") as folder,
        psycopg.connect(url, autocommit=True) as conn,
    ):
        for table in TABLES:
            path = os.path.join(folder, f"{table}.csv")
            duck.execute(
                f"COPY ({_select(table, kinds[table])}) TO '{path}' (FORMAT csv, HEADER false)"
            )
            columns = ", ".join(TABLE_COLUMNS[table])
            with conn.cursor() as cursor, open(path, "rb") as fh:
                with cursor.copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT csv)") as copy:
                    while block := fh.read(1 << 20):
                        copy.write(block)
            os.unlink(path)
        conn.execute("INSERT INTO stats_stale SELECT id, 1 FROM stammtische ON CONFLICT DO NOTHING")
        conn.execute("VACUUM ANALYZE")
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    seconds = time.perf_counter() - started
    line("PostgreSQL: COPY of the same tables, VACUUM ANALYZE",
         f"{seconds:.1f} s, {(size[0] if size else 0) / 2**20:,.0f} MiB")  # fmt: skip
    return seconds


def time_refresh_command(
    url: str, server: Server, sqlite_seconds: float, line: Callable[[str, str], None]
) -> float:
    """``schocken stats refresh --all --database-url`` in its own process, beside the
    SQLite-fed one; returns its seconds."""
    command = [sys.executable, "-m", "api.cli", "stats", "refresh", "--all", "--database-url", url]
    env = {k: v for k, v in os.environ.items() if k != "SCHOCKEN_DATABASE_URL"}
    postmaster = [p for p in [server.postmaster_pid()] if p]
    db0 = cpu_seconds(*postmaster, reaped=True)
    started = time.perf_counter()
    told = subprocess.run(command, check=True, capture_output=True, text=True, env=env).stderr
    seconds = time.perf_counter() - started
    db = cpu_seconds(*postmaster, reaped=True) - db0
    child = int(told.rsplit("höchstens ", 1)[1].split()[0])
    line(
        "schocken stats refresh --all --database-url (PostgreSQL)",
        f"{seconds:.1f} s = {seconds / sqlite_seconds:.2f} × the SQLite-fed "
        f"{sqlite_seconds:.1f} s (target ≤ 2), peak RSS {child:,} MiB",
    )
    if postmaster:
        line("  PostgreSQL's CPU time meanwhile (its backends)", f"{db:.1f} s")
    return seconds


def time_feed(url: str, line: Callable[[str, str], None]) -> None:
    """The refresh's own steps fed from PostgreSQL, in this process."""
    store = PostgresStore(url, pool_size=2)
    repo = store.repository()
    ids = repo.stammtisch_ids()
    started = time.perf_counter()
    conn = feed(repo, ids, arrow=False)
    line("  feed by CSV: COPY … TO STDOUT (csv) → read_csv, in chunks",
         f"{time.perf_counter() - started:.2f} s")  # fmt: skip
    conn.close()
    started = time.perf_counter()
    conn = feed(repo, ids)
    line("  feed (the refresh's): ADBC Arrow streams → DuckDB",
         f"{time.perf_counter() - started:.2f} s")  # fmt: skip
    started = time.perf_counter()
    period_rows(conn, ids)
    line("  compute: the one statement → JSON of every period",
         f"{time.perf_counter() - started:.2f} s")  # fmt: skip
    conn.close()
    store.close()


def time_incremental(
    url: str, samples: int, describe: Callable[[list[float]], str], line: Callable[[str, str], None]
) -> None:
    """One Stammtisch marked stale, refreshed from PostgreSQL (as ``--watch`` does)."""

    store = PostgresStore(url, pool_size=2)
    repo = store.repository()
    times = incremental_times(repo, repo.stammtisch_ids(), samples)
    line("refresh of the stale Stammtisch from PostgreSQL", describe(times))
    store.close()


def incremental_times(repo: Any, ids: list[int], samples: int) -> list[float]:
    """Milliseconds of ``samples`` refreshes, each of one Stammtisch marked stale (the same
    random choice on either store), as ``stats refresh --watch`` runs after a finished game."""
    from dashboard.readmodel import refresh

    rng = random.Random(7)
    times = []
    for _ in range(samples):
        repo.mark_stats_stale([rng.choice(ids)])
        started = time.perf_counter()
        refresh(repo)
        times.append((time.perf_counter() - started) * 1000)
    return times


class Source:
    """The PostgreSQL source of one run: its server (started here, or ``--database-url``'s)
    and a database loaded with the run's data."""

    def __init__(self, url: str | None, duck: Any, line: Callable[[str, str], None]) -> None:
        self.line = line
        self.server = Server(url, () if url else SETTINGS)
        print(f"PostgreSQL: {self.server.described}", flush=True)
        try:
            self.url = self.server.fresh()
            load(duck, self.url, line)
        except BaseException:
            self.server.stop()
            raise

    def refresh(self, sqlite_seconds: float) -> None:
        time_refresh_command(self.url, self.server, sqlite_seconds, self.line)
        time_feed(self.url, self.line)

    def incremental(self, samples: int, describe: Callable[[list[float]], str]) -> None:
        time_incremental(self.url, samples, describe, self.line)

    def stop(self) -> None:
        try:
            self.server.drop(self.url)
        finally:
            self.server.stop()
