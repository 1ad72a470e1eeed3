"""Statistics on whatever store the app runs on.

The statistics are DuckDB SQL. On the DuckDB store they run on the request's cursor. The
in-memory fake (tests, the contract test) has no SQL, so its rows are copied into a fresh
in-memory DuckDB with the same schema (the API's migrations) and the queries run there: the
same numbers, no second implementation.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from api.storage import DuckDBRepository, MemoryRepository
from api.storage.records import FACT_COLUMNS
from api.storage.sql import migrations

from .bulk import BulkLoader, moment
from .stats import Connection, Statistics


def memory_to_duckdb(repo: MemoryRepository) -> duckdb.DuckDBPyConnection:
    """A new in-memory DuckDB holding everything of a :class:`~api.storage.MemoryRepository`."""
    conn = duckdb.connect(":memory:", config={"autoinstall_known_extensions": False})
    for _, _, sql in migrations():
        conn.execute(sql)
    loader = BulkLoader(conn)
    try:
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
                local = moment(game.played_at)[1] if game.played_at else game.played_at_utc
                loader.add(
                    "games",
                    [
                        (
                            game.id, game.stammtisch_id, game.header, game.rules, game.options,
                            game.played_at, game.played_at_utc, local, game.year, game.source,
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
        loader.flush()
    finally:
        loader.close()
    return conn


@contextmanager
def connection_for(repo: DuckDBRepository | MemoryRepository) -> Iterator[Connection]:
    """The repository's DuckDB cursor, or a DuckDB copy of the in-memory fake."""
    if isinstance(repo, DuckDBRepository):
        yield repo._cur  # noqa: SLF001 - the DuckDB adapter's cursor
        return
    conn = memory_to_duckdb(repo)
    try:
        yield conn
    finally:
        conn.close()


@contextmanager
def statistics_for(repo: DuckDBRepository | MemoryRepository) -> Iterator[Statistics]:
    """:class:`Statistics` on the repository's store (see :func:`connection_for`)."""
    with connection_for(repo) as conn:
        yield Statistics(conn)
