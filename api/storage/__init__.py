"""Storage: the repository port and its adapters (SQLite, the store of record by default;
PostgreSQL, for a hosted service with several servers; the in-memory fake for tests).

``open_store(storage, path)`` returns a process-wide store; ``store.repository()`` gives the
repository a request works with. Nothing here knows about Flask or the rules engine. The DuckDB
store of earlier versions is retired; :mod:`.convert` turns its files into SQLite files.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..startup import require_postgres
from . import records
from .memory import MemoryRepository, MemoryStore
from .records import *  # noqa: F403 - the records (records.__all__) are the package's
from .repository import (
    MigrationError,
    RateLimited,
    Repository,
    StorageConflict,
    StorageUnavailable,
    StorageUnreachable,
)
from .sqlite import SQLiteRepository, SQLiteStore

__all__ = [
    *records.__all__,
    "MemoryRepository",
    "MemoryStore",
    "MigrationError",
    "PostgresRepository",
    "PostgresStore",
    "Repository",
    "SQLiteRepository",
    "SQLiteStore",
    "StorageConflict",
    "StorageUnavailable",
    "StorageUnreachable",
    "RateLimited",
    "open_store",
]

if TYPE_CHECKING:  # psycopg is imported only when PostgreSQL is used (about 0.1 s)
    from .postgres import PostgresRepository, PostgresStore

    Store = MemoryStore | SQLiteStore | PostgresStore


def __getattr__(name: str) -> Any:
    if name in ("PostgresRepository", "PostgresStore"):
        require_postgres()  # the packages of the extra "postgres", or a message saying so
        from . import postgres

        return getattr(postgres, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def open_store(storage: str, path: str | Path | None, old: str | Path | None = None) -> Store:
    """``storage`` is ``"sqlite"`` (needs the path of a file), ``"postgresql"`` (``path`` is
    the database's ``postgresql://`` URL) or ``"memory"``. ``old``: a
    DuckDB file of the retired store, converted into ``path`` first when ``path`` does not
    exist yet (the default files of the instance folder; one line on stderr says so)."""
    if storage == "memory":
        return MemoryStore()
    if storage == "sqlite":
        if path is None:
            raise ValueError("SQLite storage needs a database path")
        if old is not None:
            from .convert import convert_on_first_start

            told = convert_on_first_start(path, old)
            if told:
                print(told, file=sys.stderr)
        return SQLiteStore(path)
    if storage == "postgresql":
        if not path:
            raise ValueError("PostgreSQL storage needs a database URL (SCHOCKEN_DATABASE_URL)")
        require_postgres()  # the packages of the extra "postgres", or a message saying so
        from .postgres import PostgresStore

        return PostgresStore(str(path))
    if storage == "duckdb":
        raise ValueError(
            "DuckDB storage is gone: convert the file with "
            "`schocken convert --from OLD.duckdb --to NEW.sqlite3`"
        )
    raise ValueError(f"unknown storage {storage!r} (sqlite, postgresql or memory)")
