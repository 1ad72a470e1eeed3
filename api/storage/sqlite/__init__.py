"""SQLite's part of the relational adapter (:mod:`.store`) and its migrations (``migrations/``):
the store of record by default."""

from __future__ import annotations

from .repository import SQLiteRepository
from .store import SQLiteStore

__all__ = ["SQLiteRepository", "SQLiteStore"]
