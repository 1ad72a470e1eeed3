"""Storage: the repository port and its adapters (DuckDB, SQLite, in-memory fake).

``open_store(storage, path)`` returns a process-wide store; ``store.repository()`` gives the
repository a request works with. Nothing here knows about Flask or the rules engine.
"""

from __future__ import annotations

from pathlib import Path

from .duck import DuckDBStore
from .duck_repository import DuckDBRepository
from .memory import MemoryRepository, MemoryStore
from .records import (
    FactsWrite,
    GamePlayer,
    GameRecord,
    LogEntry,
    NewGame,
    Player,
    Stammtisch,
    StoredResponse,
)
from .repository import MigrationError, Repository, StorageConflict, StorageUnavailable
from .sqlite import SQLiteRepository, SQLiteStore

__all__ = [
    "DuckDBRepository",
    "DuckDBStore",
    "FactsWrite",
    "GamePlayer",
    "GameRecord",
    "LogEntry",
    "MemoryRepository",
    "MemoryStore",
    "MigrationError",
    "NewGame",
    "Player",
    "Repository",
    "SQLiteRepository",
    "SQLiteStore",
    "Stammtisch",
    "StorageConflict",
    "StorageUnavailable",
    "StoredResponse",
    "open_store",
]

Store = DuckDBStore | MemoryStore | SQLiteStore


def open_store(
    storage: str, path: str | Path | None, threads: int | None = None, writers: int = 2
) -> Store:
    """``storage`` is ``"duckdb"`` (needs ``path``; ``threads``: DuckDB's; ``writers``: threads
    of the group commit), ``"sqlite"`` (needs the path of a file) or ``"memory"``."""
    if storage == "memory":
        return MemoryStore()
    if storage == "duckdb":
        if path is None:
            raise ValueError("DuckDB storage needs a database path")
        return DuckDBStore(path, threads, writers)
    if storage == "sqlite":
        if path is None:
            raise ValueError("SQLite storage needs a database path")
        return SQLiteStore(path)
    raise ValueError(f"unknown storage {storage!r} (duckdb, sqlite or memory)")
