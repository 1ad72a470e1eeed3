"""The SQLite adapter (standard library ``sqlite3``, WAL): :class:`SQLiteStore` opens and
migrates a database file and hands out :class:`SQLiteRepository` objects, one connection each.
Durability and locking are explained in :mod:`.store` and :mod:`.repository`."""

from __future__ import annotations

from .repository import SQLiteRepository
from .store import SQLiteStore

__all__ = ["SQLiteRepository", "SQLiteStore"]
