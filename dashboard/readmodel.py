"""The statistics read model: DuckDB computes, the row store keeps, every process reads.

Design (issue 11):

1. Input: the rows the statistics read (``INPUT``: the per-player summary player_game_facts,
   games, game_facts, half_facts' rounds, player names, the luck figures:
   :mod:`dashboard.luck`, brought up to date first) of the Stammtische to refresh, read
   from the row store through the repository in one consistent moment (``stats_csv``: SQLite
   renders each table's rows as one CSV text, no Python object per row; PostgreSQL's COPY
   does the same, and a full refresh fed from PostgreSQL reads Arrow streams instead,
   ``stats_arrow``: ADBC's binary COPY → Arrow → DuckDB, about half the CSV feed's time).
2. Engine: they are appended (``read_csv`` of a temporary file, :data:`_LOAD`) to a fresh
   in-memory DuckDB (a full refresh: all Stammtische into one DuckDB, read :data:`CHUNK`
   at a time while the last chunk is appended, :func:`feed`), and the set-based queries of
   :mod:`dashboard.stats` compute every Stammtisch and period (each year and all time) in
   one pass each: as one DuckDB statement that also renders each period's JSON
   (:mod:`dashboard.periods`), or for a few Stammtische (an incremental refresh) side by
   side on two cursors of a kept engine, shaped in Python (:func:`compute_rows`).
3. Store: each (Stammtisch, period) becomes one row of ``stats_periods`` (the period as
   JSON); the rows of the refreshed Stammtische are replaced in one transaction, which also
   clears their stale marks if no write marked them again meanwhile (versioned marks).
4. Incremental: a write that changes statistics (a game finished, undone, imported, a player or
   Stammtisch changed) marks its Stammtisch in ``stats_stale`` in its own transaction; the
   refresher (:mod:`dashboard.refresher`) refreshes the stale ones – one refresher at a time
   across processes (``repo.stats_lock()``: flock beside the SQLite file).
5. Readers (:class:`ReadModel`: the statistics endpoints, ``/dashboard/``) read the stored
   JSON and never compute: stale is said (header ``Statistics-Stale``), nothing is held in a
   process's memory; only ``schocken dashboard build`` refreshes first.

A full refresh (``schocken stats refresh --all``) holds every input row in DuckDB at once (1,000
Stammtische × 10 years: 360 MiB, 2.5 GiB at its peak); ``--processes N`` shares it out."""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
import threading
from collections.abc import Collection
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from api.storage import Repository, SQLiteStore
from api.storage.records import FACT_COLUMNS, StatsWrite

from .luck import LUCK_INPUT, LUCK_SCHEMA, update_luck
from .periods import StoredPeriod, period_rows
from .stats import PARAMS, SET_QUERIES, Key, Period, Row, Verlierer, compute, empty_period, run

#: the input tables of a refresh, with the columns the statistics read (in this order)
INPUT: dict[str, tuple[str, ...]] = {
    "players": ("id", "name"),
    "games": ("id", "stammtisch_id", "year", "played_local"),
    "game_facts": ("game_id", "status", "blattschuss", "finalist1_id", "finalist2_id", "loser_id"),
    "half_facts": ("game_id", "rounds"),
    # without the game's columns (stammtisch_id, year, played_local): DuckDB takes them from
    # games (:data:`_LOAD`); SQLite renders a third fewer bytes, the quoted moment most of all
    "player_game_facts": tuple(
        c
        for c in FACT_COLUMNS["player_game_facts"]
        if c not in ("stammtisch_id", "year", "played_local")
    ),  # fmt: skip
    "luck_facts": LUCK_INPUT,
}
#: the summary's columns by type: ids as BIGINT, the small counts as INTEGER (half the memory
#: of a full refresh's input; their sums are the same)
_IDS = ("game_id", "player_id", "stammtisch_id")
_KINDS = {c: "BIGINT" if c in _IDS else "TIMESTAMP" if c == "played_local" else "INTEGER"
          for c in FACT_COLUMNS["player_game_facts"]}  # fmt: skip
#: the in-memory DuckDB's tables (only what the statistics read)
SCHEMA = (
    "CREATE TABLE players (id BIGINT, name VARCHAR)",
    "CREATE TABLE games (id BIGINT, stammtisch_id BIGINT, year INTEGER, played_local TIMESTAMP)",
    "CREATE TABLE game_facts (game_id BIGINT, status VARCHAR, blattschuss BOOLEAN, "
    "finalist1_id BIGINT, finalist2_id BIGINT, loser_id BIGINT)",
    "CREATE TABLE half_facts (game_id BIGINT, rounds INTEGER)",
    "CREATE TABLE player_game_facts ("
    + ", ".join(f"{c} {kind}" for c, kind in _KINDS.items())
    + ")",
    LUCK_SCHEMA,
)
_CSV = (
    "read_csv($path, header = false, delim = ',', quote = '\"', escape = '\"', "
    "nullstr = '\\N', auto_detect = false, columns = $columns)"
)
#: how the CSV text of a table is appended ("": every table but those named); the summary
#: rows take their game's Stammtisch, year and moment from ``games`` (loaded before them)
_LOAD = {
    "": "INSERT INTO {table} BY NAME SELECT * FROM " + _CSV,
    "player_game_facts": "INSERT INTO {table} BY NAME SELECT f.*, g.stammtisch_id, g.year, "
    "g.played_local FROM " + _CSV + " f JOIN games g ON g.id = CAST(f.game_id AS BIGINT)",
}
#: how an Arrow stream of a table (``stats_arrow``, registered as ``incoming``) is appended
_ARROW = {
    "": "INSERT INTO {table} BY NAME SELECT * FROM incoming",
    "player_game_facts": "INSERT INTO {table} BY NAME SELECT f.*, g.stammtisch_id, g.year, "
    "g.played_local FROM incoming f JOIN games g ON g.id = f.game_id",
}
#: columns read as their type (not as text cast on insert): the summary's counts, most of
#: the bytes (the rest is small and read as text: booleans, moments)
_TYPES = {("player_game_facts", c): _KINDS[c] for c in INPUT["player_game_facts"]}
#: Stammtische per read from the row store while a full refresh feeds DuckDB
CHUNK = 100
#: threads running the set-based queries of a small refresh side by side
QUERY_WORKERS = 2
#: seconds a reader waits for another refresher before it shows the stored numbers
READ_WAIT = 3.0
#: a refresh of at most this many Stammtische reuses its thread's engine
SMALL = 5
#: the fields of a period that hold a moment (JSON text → datetime when read back)
MOMENTS = frozenset({"first_game", "last_game", "played_local"})


def _encode(value: object) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON: {type(value).__name__}")


def _moments(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return {
        k: datetime.fromisoformat(v) if k in MOMENTS and isinstance(v, str) else v for k, v in pairs
    }


def to_json(period: Period) -> str:
    return json.dumps(period, default=_encode, ensure_ascii=False, separators=(",", ":"))


def from_json(text: str) -> Period:
    period: Period = json.loads(text, object_pairs_hook=_moments)
    return period


def _engine(conn: duckdb.DuckDBPyConnection | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the input tables, empty: a new one, or ``conn`` emptied."""
    if conn is None:
        conn = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
        for statement in SCHEMA:
            conn.execute(statement)
    else:
        for table in INPUT:
            conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
    return conn


#: engines of small refreshes not in use, kept between them (each emptied before its next use):
#: one per task that refreshes at a time (a thread, or a greenlet of ``schocken serve``'s
#: gevent worker), at most :data:`SMALL_KEPT` kept
_SMALL: list[duckdb.DuckDBPyConnection] = []
_SMALL_LOCK = threading.Lock()
SMALL_KEPT = 2
#: the settings of that engine: for a few Stammtische DuckDB spends nearly all of a query's
#: time planning it (about 60 of 65 ms for the nine queries, measured), not running it; one
#: thread per query (the queries run side by side on two cursors) and no optimizer passes
#: (the plans need no join ordering or pushdown at this size) cut it by up to a fifth
#: (one Stammtisch, 10 years; the results are the same: the optimizer changes plans only)
SMALL_SETTINGS = ("SET threads = 1", "PRAGMA disable_optimizer")


def _small_engine() -> duckdb.DuckDBPyConnection:
    conn = _engine()
    for statement in SMALL_SETTINGS:
        conn.execute(statement)
    return conn


def duckdb_input(
    repo: Repository, stammtische: Collection[int], conn: duckdb.DuckDBPyConnection | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB (new, or ``conn`` emptied) holding the input rows of
    ``stammtische``."""
    conn = _engine(conn)
    try:
        _append(conn, repo.stats_csv(INPUT, stammtische))
    except BaseException:
        conn.close()
        raise
    return conn


def _append(conn: duckdb.DuckDBPyConnection, texts: dict[str, list[str]]) -> None:
    """Append the CSV texts of ``Repository.stats_csv`` to the input tables of ``conn``."""
    with tempfile.TemporaryDirectory(prefix="schocken-stats-") as folder:
        for table, lines in texts.items():  # in the order of INPUT: games before their facts
            if not lines:
                continue
            path = os.path.join(folder, f"{table}.csv")
            with open(path, "w", encoding="utf-8", newline="") as fh:
                fh.write("\n".join(lines))
                fh.write("\n")
            columns = {c: _TYPES.get((table, c), "VARCHAR") for c in INPUT[table]}
            conn.execute(_LOAD.get(table, _LOAD[""]).format(table=table),
                         {"path": path, "columns": columns})  # fmt: skip


def _feed_arrow(repo: Repository, conn: duckdb.DuckDBPyConnection, ids: list[int]) -> bool:
    """Append the input rows of ``ids`` as Arrow streams, if the row store gives them
    (PostgreSQL with ``adbc-driver-postgresql``: ``stats_arrow``); whether it did."""
    streams = getattr(repo, "stats_arrow", None)
    if streams is None:
        return False
    with streams(INPUT, ids) as tables:
        if tables is None:
            return False
        for table, reader in tables:  # DuckDB reads each stream as PostgreSQL sends it
            conn.register("incoming", reader)
            try:
                conn.execute(_ARROW.get(table, _ARROW[""]).format(table=table))
            finally:
                conn.unregister("incoming")
    return True


def feed(repo: Repository, ids: list[int], arrow: bool = True) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB holding the input rows of ``ids`` (many): as Arrow streams where
    the row store gives them (:func:`_feed_arrow`), else read from the row store :data:`CHUNK`
    Stammtische at a time, this thread reading the next chunk while a helper thread appends
    the last one (SQLite and DuckDB let go of the GIL as they work); ``arrow=False``: CSV
    always (the benchmark compares them)."""
    conn = _engine()
    try:
        if arrow and _feed_arrow(repo, conn, ids):
            return conn
        with ThreadPoolExecutor(1, thread_name_prefix="stats-feed") as pool:
            pending: Future[None] | None = None
            for i in range(0, len(ids), CHUNK):
                texts = repo.stats_csv(INPUT, ids[i : i + CHUNK])
                if pending is not None:
                    pending.result()
                pending = pool.submit(_append, conn, texts)
            if pending is not None:
                pending.result()
    except BaseException:
        conn.close()
        raise
    return conn


def compute_rows(repo: Repository, stammtische: Collection[int]) -> list[StoredPeriod]:
    """Every period of ``stammtische`` as stored (the same text either way, tested): many
    Stammtische are computed and rendered by DuckDB in one statement
    (:func:`dashboard.periods.period_rows`); a few (an incremental refresh) by the ten
    queries side by side on two cursors of a kept engine (no new database per finished
    game), shaped in Python – for one Stammtisch DuckDB spends its time on the
    operators' fixed costs, and the one statement has more of them than the ten queries
    (measured: about 60 against 45 ms)."""
    if len(stammtische) > SMALL:
        conn = duckdb_input(repo, stammtische)
        try:
            return period_rows(conn, stammtische)
        finally:
            conn.close()
    with _SMALL_LOCK:  # taken; put back only when all went well
        engine = _SMALL.pop() if _SMALL else None
    conn = duckdb_input(repo, stammtische, engine or _small_engine())
    found = compute(conn, stammtische, run_parallel(conn))
    with _SMALL_LOCK:
        kept = len(_SMALL) < SMALL_KEPT
        if kept:
            _SMALL.append(conn)
    if not kept:
        conn.close()
    return [(st, year, p["overview"]["games"], to_json(p)) for (st, year), p in found.items()]


def run_parallel(conn: duckdb.DuckDBPyConnection) -> dict[str, list[Row]]:
    """The rows of every set-based query, run side by side on cursors of ``conn`` (DuckDB
    plans and runs them without the GIL), by the threads of this process's query pool."""

    def one(name: str) -> list[Row]:
        cursor = conn.cursor()
        try:
            return run(cursor, name, **PARAMS)
        finally:
            cursor.close()

    return dict(zip(SET_QUERIES, _query_pool().map(one, SET_QUERIES), strict=True))


_POOL: dict[int, ThreadPoolExecutor] = {}
_POOL_LOCK = threading.Lock()


def _query_pool() -> ThreadPoolExecutor:
    """This process's pool of query threads (starting two threads costs several ms on a busy
    machine, a third of a small refresh's queries); a forked child makes its own."""
    with _POOL_LOCK:
        pool = _POOL.get(os.getpid())
        if pool is None:
            pool = _POOL[os.getpid()] = ThreadPoolExecutor(
                QUERY_WORKERS, thread_name_prefix="stats-query"
            )
        return pool


def compute_periods(repo: Repository, stammtische: Collection[int]) -> dict[Key, Period]:
    """Every period of ``stammtische``, computed by DuckDB from the row store's rows, as
    :func:`dashboard.stats.compute` shapes them (audits compare the stored ones with it)."""
    return {(st, year): from_json(body) for st, year, _, body in compute_rows(repo, stammtische)}


@dataclass(frozen=True, slots=True)
class Refreshed:
    stammtische: int
    periods: int


def _refresh(repo: Repository, ids: list[int], versions: dict[int, int]) -> Refreshed:
    """Recompute ``ids`` and store them (the lock is held): the rows of all of them go into
    one DuckDB (:func:`feed`), which computes every period in one statement; one
    transaction replaces their rows and clears their marks (the luck figures first)."""
    update_luck(repo, ids)
    if len(ids) <= CHUNK:  # an incremental refresh
        rows = compute_rows(repo, ids)
    else:
        conn = feed(repo, ids)
        try:
            rows = period_rows(conn, ids)
        finally:
            conn.close()
    repo.write_stats(StatsWrite(ids, rows, {st: versions[st] for st in ids if st in versions}))
    return Refreshed(len(ids), len(rows))


def refresh(
    repo: Repository, everything: bool = False, wait: bool | float = True
) -> Refreshed | None:
    """Recompute the stale Stammtische (``everything``: all), under the one-refresher lock;
    None when another refresher holds the lock and ``wait`` (False, or seconds) ran out."""
    with repo.stats_lock(wait) as locked:
        if not locked:
            return None
        versions = repo.stale_stats()  # read before the input: a later mark stays
        return _refresh(repo, repo.stammtisch_ids() if everything else sorted(versions), versions)


def _refresh_part(path: str, ids: list[int], versions: dict[int, int]) -> Refreshed:
    """One process's share of :func:`refresh_file` (its parent holds the lock)."""
    store = SQLiteStore(path)
    try:
        return _refresh(store.repository(), ids, versions)
    finally:
        store.close()


def refresh_file(path: str, everything: bool = False, processes: int = 1) -> Refreshed:
    """:func:`refresh` of the SQLite database ``path``; a big refresh is shared among
    ``processes`` processes (each reads, computes and writes its own Stammtische, in chunks;
    the SQLite write lock takes their short writes in turn), this one holding the lock."""
    store = SQLiteStore(path)
    try:
        repo = store.repository()
        with repo.stats_lock() as locked:
            assert locked  # noqa: S101 - waited for it
            versions = repo.stale_stats()
            ids = repo.stammtisch_ids() if everything else sorted(versions)
            if processes <= 1 or len(ids) <= CHUNK:
                return _refresh(repo, ids, versions)
            size = -(-len(ids) // processes)
            parts = [ids[i : i + size] for i in range(0, len(ids), size)]
            context = multiprocessing.get_context("spawn")  # no connection crosses a fork
            with ProcessPoolExecutor(len(parts), mp_context=context) as pool:
                done = list(pool.map(_refresh_part, [path] * len(parts), parts,
                                     [versions] * len(parts)))  # fmt: skip
            return Refreshed(sum(d.stammtische for d in done), sum(d.periods for d in done))
    finally:
        store.close()


class ReadModel:
    """The statistics as stored (the interface of :class:`~dashboard.stats.Statistics` that
    the endpoints and the site use). A request never computes: what is stored is shown (never
    computed: empty), :meth:`stale` says whether it lags, the refresher catches up.
    ``refresh_first`` (``schocken dashboard build``): refresh the stale ones first."""

    def __init__(self, repo: Repository, refresh_first: bool = False) -> None:
        self.repo = repo
        self.refresh_first = refresh_first

    def stale(self, stammtisch_id: int) -> bool:
        """Whether the stored statistics of ``stammtisch_id`` lag behind its games (marked
        stale by a write since the last refresh, or never computed)."""
        return (
            stammtisch_id in self.repo.stale_stats()
            or self.repo.read_stats(stammtisch_id, None) is None
        )

    def fresh(self, stammtisch_id: int) -> None:
        """With ``refresh_first``: refresh what is stale first if ``stammtisch_id`` is. When
        another refresher holds the lock for longer than :data:`READ_WAIT` (a full refresh),
        the stored numbers are shown."""
        if not self.refresh_first:
            return
        if stammtisch_id in self.repo.stale_stats():
            refresh(self.repo, wait=READ_WAIT)
        elif self.repo.read_stats(stammtisch_id, None) is None:
            self.repo.mark_stats_stale([stammtisch_id])
            refresh(self.repo, wait=READ_WAIT)

    def collect(self, stammtisch_id: int, year: int | None) -> Period:
        self.fresh(stammtisch_id)
        text = self.repo.read_stats(stammtisch_id, year)
        return empty_period(year) if text is None else from_json(text)

    def years(self, stammtisch_id: int) -> list[Row]:
        self.fresh(stammtisch_id)
        return [{"year": y, "games": g} for _, y, g in self.repo.stats_years(stammtisch_id)]

    def overview(self, stammtisch_id: int, year: int | None) -> Row:
        return self.collect(stammtisch_id, year)["overview"]

    def verlierer(
        self, stammtisch_id: int, year: int | None, games: int | None = None
    ) -> Verlierer:
        return self.collect(stammtisch_id, year)["verlierer"]

    def attendance(self, stammtisch_id: int, year: int | None) -> list[Row]:
        return self.collect(stammtisch_id, year)["attendance"]

    def stammtische(self, include_private: bool = False) -> list[Row]:
        """Every Stammtisch with its finished games and first and last year, by name."""
        listed = self.repo.stats_rows({"stammtische": ("id", "slug", "name", "private")}, None)
        if self.refresh_first:
            never = {row[0] for row in listed["stammtische"]} - self.repo.stats_computed()
            if never:  # e.g. a database converted from the retired store
                self.repo.mark_stats_stale(never)
            if self.repo.stale_stats():
                refresh(self.repo, wait=READ_WAIT)
        years: dict[int, list[tuple[int, int]]] = {}
        for st, year, games in self.repo.stats_years(None):
            years.setdefault(st, []).append((year, games))
        rows = []
        for st_id, slug, name, private in listed["stammtische"]:
            if private and not include_private:
                continue
            mine = years.get(st_id, [])
            rows.append({
                "id": st_id, "slug": slug, "name": name, "private": bool(private),
                "games": sum(g for _, g in mine),
                "first_year": min((y for y, _ in mine), default=None),
                "last_year": max((y for y, _ in mine), default=None),
            })  # fmt: skip
        return sorted(rows, key=lambda r: (r["name"], r["slug"]))
