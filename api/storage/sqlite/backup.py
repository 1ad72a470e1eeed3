"""Copies of a SQLite database file with SQLite's online backup API (``sqlite3.Connection.backup``).

:func:`copy_database` copies a whole database in one step: the source is read in one read
transaction, so the copy is one consistent moment even while other connections (threads or
processes: a running server) go on writing – in WAL mode they are not even held up. The copy
is switched to ``journal_mode=DELETE``: one self-contained file, no ``-wal`` beside it
(:class:`~.store.SQLiteStore` turns WAL on again when it opens it). The target must not exist.
:func:`open_read_only` opens such a copy without changing it; :func:`is_sqlite_file` tells a
SQLite file from a DuckDB one by its header.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.request import pathname2url

#: the first 16 bytes of every SQLite database file
MAGIC = b"SQLite format 3\x00"


def is_sqlite_file(path: str | Path) -> bool:
    """Whether ``path`` is an existing SQLite database file (by its header)."""
    try:
        with Path(path).open("rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def open_read_only(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to the database file ``path`` (which must exist)."""
    target = Path(path).resolve()
    if not target.is_file():
        raise FileNotFoundError(f"{target}: no database file")
    uri = f"file:{pathname2url(str(target))}?mode=ro"
    return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)


def copy_database(source: sqlite3.Connection, target: str | Path) -> int:
    """Copy the database of ``source`` into the new file ``target`` (refused if it exists);
    returns the number of tables copied. A failed copy leaves no file behind."""
    target = Path(target)
    if target.exists():
        raise FileExistsError(f"{target} exists: a copy goes only into a new file")
    target.parent.mkdir(parents=True, exist_ok=True)
    dest = sqlite3.connect(str(target), isolation_level=None)
    try:
        source.backup(dest)  # pages=-1: everything in one step, one read transaction
        dest.execute("PRAGMA journal_mode = DELETE")
        tables = dest.execute("SELECT count(*) FROM sqlite_schema WHERE type = 'table'")
        count = int(tables.fetchone()[0])
        dest.close()
    except BaseException:
        dest.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        raise
    return count
