"""SQLite's part of the relational adapter (:mod:`api.storage.relational`): the store of
record by default, one database file, a pool of connections per process, migrations at start.

Settings of every connection, and why:

* ``journal_mode=WAL`` (kept in the file): readers never wait for the writer nor the writer for
  them, and several processes can open the file at once.
* ``synchronous=NORMAL`` plus an ``fsync`` of the WAL file after every commit, before the
  transaction returns (:meth:`Writing.sync`): a write is acknowledged only once the WAL holds it
  on disk, so it survives a kill -9 *and* a power loss, as with FULL. The difference: FULL
  syncs inside COMMIT, while the write lock is held, so every writer waits for the previous
  one's fsync. Here the lock is released at COMMIT and the fsync follows outside it; fsyncs of
  writers that commit close together are done by one flush of the file system's journal (a
  group commit made by the kernel). NORMAL syncs the WAL before each checkpoint and the
  database after it, so a checkpoint never loses a frame.
* ``busy_timeout``: a writer waits up to that long for another writer instead of failing.
* ``foreign_keys=ON``: SQLite checks the schema's references only when asked, per connection.
* Writes run in ``BEGIN IMMEDIATE`` transactions: the write lock is taken first, so a
  transaction that reads and then writes never fails halfway because another one committed.

Writers queue before ``BEGIN IMMEDIATE`` (:class:`Writing`): the threads of a process on a
lock, the processes on an ``flock`` of ``<database>-writers`` (the kernel wakes the next one),
instead of sleeping in SQLite's busy handler. The rate limit's counters (:class:`Counters`)
only read a bucket when a request asks; the take is the first statement of the request's own
write transaction (so it commits and is synced with the turn it paid for) or, for a request
that writes nothing, at its end on a connection of the counters' own with ``synchronous=OFF``
that never checkpoints (an fsync per request would halve the write rate; a counter lost in a
crash only lets a client write once more).

The one-refresher lock and the one-sender lock are ``flock``s of files beside the database
(:func:`file_lock`): they hold across threads and processes, and the kernel drops them when
the holder dies. Backups use SQLite's online backup API (:func:`copy_database`): one
consistent moment while others go on writing; the copy is one file in ``journal_mode=DELETE``.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any
from urllib.request import pathname2url

from ...startup import check_database
from ..engine import sqlite_engine
from ..migrate import current, upgrade
from ..relational import RelationalStore
from ..statements import Kinds
from ..statements import encode as encode_as
from .repository import SQLiteRepository, Writing, timestamp

#: how long a writer waits for the lock of another writer, in seconds
BUSY_TIMEOUT = 10.0
#: connections of a process's requests in use at once (more wait), and kept unused
POOL_SIZE, POOL_IDLE = 32, 8


def encode(value: Any) -> Any:
    """A value as SQLite keeps it: JSON as compact text, a time as :func:`timestamp`."""
    return encode_as("", value, timestamp)


def column_kinds(conn: sqlite3.Connection) -> Kinds:
    """Every table's columns with their declared types (upper case), read from the schema."""
    tables = conn.execute(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    info = "SELECT name, type FROM pragma_table_info(?)"
    return {
        str(t): tuple((str(n), str(k).upper()) for n, k in conn.execute(info, [t]).fetchall())
        for (t,) in tables
    }


def open_read_only(path: str | Path) -> sqlite3.Connection:
    """A read-only connection to the database file ``path`` (which must exist)."""
    target = Path(path).resolve()
    if not target.is_file():
        raise FileNotFoundError(f"{target}: no database file")
    uri = f"file:{pathname2url(str(target))}?mode=ro"
    return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)


def copy_database(source: sqlite3.Connection, target: str | Path) -> int:
    """Copy the database of ``source`` into the new file ``target`` (refused if it exists),
    one read transaction; the number of tables copied. A failed copy leaves no file behind."""
    target = Path(target)
    if target.exists():
        raise FileExistsError(f"{target} exists: a copy goes only into a new file")
    target.parent.mkdir(parents=True, exist_ok=True)
    dest = sqlite3.connect(str(target), isolation_level=None)
    try:
        source.backup(dest)  # pages=-1: everything in one step, one read transaction
        dest.execute("PRAGMA journal_mode = DELETE")
        count = dest.execute("SELECT count(*) FROM sqlite_schema WHERE type = 'table'")
        tables = int(count.fetchone()[0])
        dest.close()
    except BaseException:
        dest.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            Path(f"{target}{suffix}").unlink(missing_ok=True)
        raise
    return tables


class SQLiteStore(RelationalStore[SQLiteRepository]):
    """The process-wide handle of one SQLite database file."""

    def __init__(
        self, path: str | Path, busy_timeout: float = BUSY_TIMEOUT, until: int | None = None
    ) -> None:
        """Open (or create) the database file ``path`` and apply pending migrations (those up
        to version ``until`` only, if given: the converter of old DuckDB files)."""
        path = str(path)
        if path == ":memory:" or path.startswith("file:"):
            raise ValueError(
                "SQLite storage needs a database file (WAL and several connections): "
                f"{path!r} is none"
            )
        check_database(path)  # its folder made; an unusable file or folder: StartupError
        super().__init__()
        self.path, self.busy_timeout = path, busy_timeout
        self._writing = Writing(path)  # writers' queue, WAL sync
        self._pool = sqlite_engine(self._open, self._settings, POOL_SIZE, POOL_IDLE, busy_timeout)
        self._counters = sqlite_engine(self._open, self._counter_settings, POOL_SIZE,
                                       POOL_IDLE, busy_timeout)  # fmt: skip
        conn = self.connect()
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise RuntimeError(f"{path}: SQLite refused WAL mode (got {mode!r})")
        finally:
            conn.close()
        self.migrate(until)
        conn = self.connect()
        try:
            self._kinds = column_kinds(conn)
        finally:
            conn.close()

    def connect(self) -> sqlite3.Connection:
        """A new connection with the settings of the module's text (outside the pool)."""
        conn = self._open()
        try:
            self._settings(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open(self) -> sqlite3.Connection:
        """A new connection without settings. Transactions are explicit
        (``isolation_level=None``); it may be closed from another thread than its own."""
        return sqlite3.connect(
            self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )

    def _settings(self, conn: sqlite3.Connection) -> None:
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        conn.execute("PRAGMA synchronous = NORMAL")  # + sync() after every commit
        conn.execute("PRAGMA foreign_keys = ON")

    def _counter_settings(self, conn: sqlite3.Connection) -> None:
        """The counters' connections: no sync, and never a checkpoint (with OFF it would not
        sync the database file, and the WAL it empties may hold acknowledged turns)."""
        self._settings(conn)
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA wal_autocheckpoint = 0")

    def migrate(self, until: int | None = None) -> list[int]:
        """Apply every pending migration (up to version ``until``) with Alembic
        (:mod:`api.storage.migrate`); returns the versions applied now."""
        return upgrade(self.connect, "sqlite", self.path, until)

    def applied(self) -> list[tuple[int, str]]:
        """``(version, name)`` of every migration the database has applied."""
        return current(self.connect, "sqlite", self.path)

    def backup_to(self, path: str | Path) -> int:
        """Copy the database into the new file ``path`` (one consistent moment, even while
        others write); returns the number of tables."""
        conn = self.connect()
        try:
            return copy_database(conn, path)
        finally:
            conn.close()

    @classmethod
    def restore(cls, backup: str | Path, path: str | Path) -> None:
        """Create the new database file ``path`` from the copy ``backup`` (of
        :meth:`backup_to`), in WAL mode with every migration applied; refuses an existing
        ``path``."""
        source = open_read_only(backup)
        try:
            copy_database(source, path)
        finally:
            source.close()
        cls(path).close()

    @staticmethod
    def open_copy(path: str | Path) -> SQLiteRepository:
        """A read-only repository on the copy ``path``; its ``disconnect`` closes it."""
        conn = open_read_only(path)
        try:
            kinds = column_kinds(conn)
        except BaseException:
            conn.close()
            raise
        return SQLiteRepository(conn, kinds)

    def _new_repository(self, own: Any = None) -> SQLiteRepository:
        pool = None if own is not None else self._pool
        return SQLiteRepository(own, self._kinds, self._writing, pool, self._counters)

    def open_repository(self) -> SQLiteRepository:
        """A repository on a new connection of its own; its ``disconnect`` (or :meth:`close`
        of the store) closes it."""
        return self._register(self._new_repository(self.connect()))

    def close(self) -> None:
        super().close()
        self._counters.dispose()
        self._writing.close()
