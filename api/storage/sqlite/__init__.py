"""The SQLite adapter, the store of record (standard library ``sqlite3``, WAL,
``synchronous=NORMAL`` plus an fsync of the WAL after each commit): :class:`SQLiteStore`
opens and migrates a database file and hands out
:class:`SQLiteRepository` objects, one connection each. Durability and locking are explained in
:mod:`.store` and :mod:`.repository`; files of the retired DuckDB store are converted by
:mod:`api.storage.convert`."""

from __future__ import annotations

from .repository import SQLiteRepository
from .store import SQLiteStore

__all__ = ["SQLiteRepository", "SQLiteStore"]
