"""How the SQLite driver's errors become the port's: a duplicate key is
:class:`~api.storage.StorageConflict`, a database that cannot write (a full disk, a read-only
file or folder, an I/O error) :class:`~api.storage.StorageUnavailable`."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from ..repository import StorageConflict, StorageUnavailable, unavailable_cause

#: the constraint errors that mean "taken": a primary key or a unique column
TAKEN = frozenset({"SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_CONSTRAINT_UNIQUE"})


@contextmanager
def taken(message: str) -> Iterator[None]:
    """A duplicate key becomes :class:`StorageConflict`; other errors (a missing parent) stay."""
    try:
        yield
    except sqlite3.IntegrityError as exc:
        if getattr(exc, "sqlite_errorname", "") in TAKEN:
            raise StorageConflict(message) from exc
        raise


@contextmanager
def unavailable() -> Iterator[None]:
    """A full disk, a read-only database or folder, an I/O error becomes
    :class:`StorageUnavailable` (at the transaction's edge, not per statement)."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        cause = unavailable_cause(exc)
        if cause is None:
            raise
        raise StorageUnavailable(f"SQLite: {cause}") from exc
