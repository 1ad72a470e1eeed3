"""A DuckDB copy of whatever store the app runs on, for the tests and the benchmarks.

The statistics are DuckDB SQL. The SQLite store (the store of record) and the in-memory fake
have no DuckDB, so their rows are copied into a fresh in-memory DuckDB with the same schema
(:func:`duckdb_schema`) and the queries run there: the same numbers, no second
implementation. SQLite's rows arrive as stored (JSON text, ISO timestamps, 0/1 booleans), read
in one transaction, and DuckDB's load casts them to the column types. Every call copies
everything: no request path uses it (the statistics read the read model,
dashboard/readmodel.py); the storage tests check with it the per-player summary against the
SQL oracle (migration 0003's view) and SQLite's rows against DuckDB's on a copy of every table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import duckdb

from api.storage import MemoryRepository, Repository, SQLiteRepository
from api.storage.convert import DUCKDB_VERSION
from api.storage.records import FACT_COLUMNS
from api.storage.sql import migrations, statements
from dashboard.luck import LUCK_INPUT, LUCK_SCHEMA
from dashboard.stats import Connection

from .bulk import TABLES, BulkLoader

if TYPE_CHECKING:
    from api.storage.postgres import PostgresRepository


def duckdb_schema() -> list[str]:
    """The statements that create the tables of the retired DuckDB store at its last version
    (:data:`~api.storage.convert.DUCKDB_VERSION`): SQLite's migrations of the same numbers,
    which DuckDB runs as they are (the same tables and columns; SQLite's declared types are
    DuckDB's types), taken as plain columns: without keys and indexes, which would make a bulk
    load about ten times slower (api/bench/stats_bench.py)."""
    history = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    try:
        for version, _, sql in migrations("api.storage.sqlite"):
            for statement in statements(sql) if version <= DUCKDB_VERSION else ():
                history.execute(statement)
        columns = history.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns"
            " ORDER BY table_name, ordinal_position"
        ).fetchall()
    finally:
        history.close()
    tables: dict[str, list[str]] = {}
    for table, column, kind in columns:
        tables.setdefault(table, []).append(f"{column} {kind}")
    return [f"CREATE TABLE {table} ({', '.join(c)})" for table, c in tables.items()]


def _duckdb_copy(
    fill: Callable[[BulkLoader], None], luck: list[tuple[object, ...]]
) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB with the API's schema, holding the rows ``fill`` adds and the
    luck figures ``luck`` (the statistics' columns of ``luck_facts``, migration 0017)."""
    conn = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    try:
        for statement in duckdb_schema():
            conn.execute(statement)
        conn.execute(LUCK_SCHEMA)
        if luck:
            marks = ", ".join("?" * len(LUCK_INPUT))
            conn.executemany(f"INSERT INTO luck_facts VALUES ({marks})", luck)  # noqa: S608
        loader = BulkLoader(conn)
        try:
            fill(loader)
            loader.flush()
        finally:
            loader.close()
    except BaseException:
        conn.close()
        raise
    return conn


def sqlite_to_duckdb(repo: SQLiteRepository | PostgresRepository) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB holding every table of a SQLite (or PostgreSQL: its rows arrive
    as Python values, as the fake's) database, one moment of it."""

    def fill(loader: BulkLoader) -> None:
        for table, rows in repo.table_rows(TABLES).items():
            loader.add(table, rows)

    luck = {"luck_facts": LUCK_INPUT}
    return _duckdb_copy(fill, repo.table_rows(luck)["luck_facts"])


def memory_to_duckdb(repo: MemoryRepository) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB holding everything of a :class:`~api.storage.MemoryRepository`."""
    columns = LUCK_INPUT
    with repo.transaction():
        luck = [tuple(r[c] for c in columns) for rows in repo.luck.values() for r in rows]
    return _duckdb_copy(lambda loader: _fill_from_memory(repo, loader), luck)


def _fill_from_memory(repo: MemoryRepository, loader: BulkLoader) -> None:
    with repo.transaction():  # a consistent copy: the fake's lock is held
        loader.add(
            "stammtische",
            [
                (s.id, s.slug, s.name, s.rules, s.private, s.token_hash, s.created_at)
                for s in repo.stammtische.values()
            ],
        )
        loader.add(
            "players",
            [
                (p.id, p.stammtisch_id, p.name, p.retired, p.created_at, p.retired_at)
                for p in repo.players.values()
            ],
        )
        for game in repo.games.values():
            loader.add(
                "games",
                [
                    (
                        game.id, game.stammtisch_id, game.header, game.rules, game.options,
                        game.played_at, game.played_at_utc, game.played_local, game.year, game.source,
                        game.created_at,
                    )
                ],
            )  # fmt: skip
            loader.add(
                "game_players",
                [(game.id, p.seat, p.player_id, p.name, p.starter) for p in game.players],
            )
            facts = repo.facts.get(game.id, {})
            for table, columns in FACT_COLUMNS.items():
                loader.add(table, [tuple(r[c] for c in columns) for r in facts.get(table, [])])


@contextmanager
def connection_for(repo: Repository) -> Iterator[Connection]:
    """A DuckDB copy of a SQLite or PostgreSQL database or of the in-memory fake (the
    PostgreSQL adapter imported only when it is in use, which the extra "postgres" brings)."""
    if isinstance(repo, SQLiteRepository):
        conn = sqlite_to_duckdb(repo)
    elif isinstance(repo, MemoryRepository):
        conn = memory_to_duckdb(repo)
    else:
        from api.storage.postgres import PostgresRepository

        if not isinstance(repo, PostgresRepository):
            raise TypeError(f"no statistics on {type(repo).__name__}")
        conn = sqlite_to_duckdb(repo)
    try:
        yield conn
    finally:
        conn.close()
