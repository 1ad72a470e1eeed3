"""The SQLite store: one database file, a pool of connections per process, migrations at start.

Settings of every connection, and why:

* ``journal_mode=WAL`` (kept in the file): readers never wait for the writer nor the writer for
  them, and several processes can open the file at once.
* ``synchronous=NORMAL`` plus an ``fsync`` of the WAL file after every commit, before the
  transaction returns (``Writing.sync`` in :mod:`.counters`): a write is acknowledged only once the WAL
  holds it on disk, so it survives a kill -9 *and* a power loss or a kernel crash, as with
  FULL. The difference: FULL syncs inside COMMIT, while the write lock is held, so every
  writer of every process waits for the previous one's fsync (about 2–3 ms on this machine's
  disk: ~400 commits/s in all). Here the lock is released at COMMIT and the fsync follows
  outside it; the fsyncs of writers that commit close together overlap and are done by one
  flush of the file system's journal (a group commit made by the kernel). One fsync covers the
  whole file, so earlier commits of other connections are synced with it (``fdatasync``, as
  SQLite's own syncs on Linux: the frames and the file's size, not its times). NORMAL syncs the WAL
  before each checkpoint and the database after it, so a checkpoint never loses a frame.
* ``busy_timeout``: a writer waits up to that long for another writer (thread or process)
  instead of failing at once.
* ``foreign_keys=ON``: SQLite checks the schema's references only when asked, per connection.
* Writes run in ``BEGIN IMMEDIATE`` transactions (see :class:`~.repository.SQLiteRepository`):
  the write lock is taken first, so a transaction that reads and then writes never fails
  halfway because another one committed in between.

:meth:`SQLiteStore.repository` hands out the calling task's repository (a thread's, or a
greenlet's under ``schocken serve``'s gevent worker), which takes a connection from the
store's engine (:mod:`api.storage.engine`, at most :data:`POOL_SIZE` in use) on its first statement and gives
it back at the end of the request: a server of many short tasks neither opens a connection per
request nor keeps one per task. The writers of a process queue on a lock (:mod:`.counters`),
one at a time, as before; a write transaction is never left open across a request's end.
:meth:`SQLiteStore.open_repository` opens one with a connection of its own. Migrations are the
files of ``migrations/`` (numbered as the DuckDB ones, so the versions line up), run by Alembic
(:mod:`api.storage.migrate`) in one immediate transaction, which also makes two processes
starting at once apply each migration once; a database that is up to date is opened without
taking the write lock. A database written by a newer version is refused untouched.

Backups (:mod:`.backup`): :meth:`SQLiteStore.backup_to` copies the database into a new file
with SQLite's online backup API, one consistent moment while the server (this process or
another) goes on writing; :meth:`SQLiteStore.restore` makes a new database file from such a
copy; :meth:`SQLiteStore.open_copy` reads a copy without changing it.
"""

from __future__ import annotations

import sqlite3
import threading
import weakref
from pathlib import Path

from ...startup import check_database
from ..engine import sqlite_engine
from ..migrate import current, upgrade
from ..repository import Background
from .backup import copy_database, open_read_only
from .counters import Writing, counters_settings
from .repository import SQLiteRepository
from .rows import Kinds, column_kinds

#: how long a writer waits for the lock of another writer, in seconds
BUSY_TIMEOUT = 10.0
#: connections of a process's requests in use at once (more wait), and kept unused
POOL_SIZE, POOL_IDLE = 32, 8


class SQLiteStore:
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
        self.path = path
        self.busy_timeout = busy_timeout
        self._local = threading.local()
        self._repos: weakref.WeakSet[SQLiteRepository] = weakref.WeakSet()
        self._lock = threading.Lock()
        self.background = Background()
        self._writing = Writing(path, self.connect)  # writers' queue, WAL sync, counters
        self._pool = sqlite_engine(self._open, self._settings, POOL_SIZE, POOL_IDLE, busy_timeout)
        counters = sqlite_engine(self._open, counters_settings(self._settings), POOL_SIZE,
                                 POOL_IDLE, busy_timeout)  # fmt: skip
        self._counters = counters
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
            self._kinds: Kinds = column_kinds(conn)
        finally:
            conn.close()

    def connect(self) -> sqlite3.Connection:
        """A new connection with the settings of the module's text (the pooled ones get them
        from the engine's ``connect`` listener)."""
        conn = self._open()
        try:
            self._settings(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open(self) -> sqlite3.Connection:
        """A new connection without settings. Transactions are explicit
        (``isolation_level=None``); it may be closed from another thread than its own
        (:meth:`close`), but is used by one thread at a time."""
        return sqlite3.connect(
            self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
        )

    def _settings(self, conn: sqlite3.Connection) -> None:
        """The settings of every connection (see the module's text)."""
        conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        conn.execute("PRAGMA synchronous = NORMAL")  # + sync() after every commit
        conn.execute("PRAGMA foreign_keys = ON")

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
        """A read-only repository on the copy ``path``; :meth:`SQLiteRepository.disconnect`
        closes it."""
        conn = open_read_only(path)
        try:
            kinds = column_kinds(conn)
        except BaseException:
            conn.close()
            raise
        return SQLiteRepository(conn, kinds)

    def repository(self) -> SQLiteRepository:
        """This task's repository (a thread's or a greenlet's): it takes a pooled connection
        on its first statement and gives it back when closed at the end of a request."""
        repo: SQLiteRepository | None = getattr(self._local, "repo", None)
        if repo is None or repo.disconnected:
            repo = self._register(
                SQLiteRepository(None, self._kinds, self._writing, self._pool, self._counters)
            )
            self._local.repo = repo
        return repo

    def open_repository(self) -> SQLiteRepository:
        """A repository on a new connection of its own; :meth:`SQLiteRepository.disconnect`
        (or :meth:`close` of the store) closes it."""
        conn = self.connect()
        return self._register(
            SQLiteRepository(conn, self._kinds, self._writing, counters=self._counters)
        )

    def _register(self, repo: SQLiteRepository) -> SQLiteRepository:
        with self._lock:
            self._repos.add(repo)
        return repo

    def close(self) -> None:
        """Stop the threads running beside the requests, then close every connection this
        store opened that is still open."""
        self.background.stop()
        with self._lock:
            repos = list(self._repos)
            self._repos.clear()
        for repo in repos:
            repo.disconnect()
        self._pool.dispose()
        self._counters.dispose()
        self._writing.close()
