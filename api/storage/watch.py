"""Watching the event log (table ``game_events``) for rows written by any server process: what
wakes the live streams of a process (api/http/hub.py).

A watch only says *which Stammtische* may have new rows; the streams then read them by
position from the store, so a lost or merged wake-up costs a little latency, never an event.

* SQLite (:class:`SQLiteWatch`): ``PRAGMA data_version`` on a connection of its own, a few
  microseconds and no page read, asked whenever a process writes to the WAL file (inotify, on
  Linux: the caller waits on its descriptor) and every :data:`POLL_SECONDS` while someone
  listens; only when another connection committed does it read the new rows' Stammtische by
  rowid (the rowid grows in commit order: one writer at a time).
* PostgreSQL (:class:`PostgresWatch`): ``LISTEN schocken_events`` on a connection of its own
  whose socket the caller waits on; the payload starts with the Stammtisch's id. When the
  connection breaks it is opened again (every :data:`RETRY_SECONDS`) and the caller told to
  look at every Stammtisch (notifications of the gap are gone).
* Anything else (the in-memory fake, one process): :class:`PollWatch`, every Stammtisch every
  :data:`POLL_SECONDS`.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from typing import Any

from .records import CHANNEL

#: how often a polling watch looks while streams are open, in seconds
POLL_SECONDS = 0.025
#: a broken LISTEN connection is opened again at most this often
RETRY_SECONDS = 1.0

log = logging.getLogger(__name__)


class PollWatch:
    """Every Stammtisch may have changed, every :data:`POLL_SECONDS`."""

    interval: float | None = POLL_SECONDS
    #: whether its descriptor must be read even while nobody listens (what it would hold
    #: otherwise piles up: PostgreSQL's notifications); else the caller waits on it only
    #: while streams are open
    must_read = False

    def fileno(self) -> int | None:
        return None

    def changed(self) -> set[int] | None:
        """The Stammtische with new rows since the last call; None: any may have."""
        return None

    def close(self) -> None:
        pass


class SQLiteWatch(PollWatch):
    """New rows of ``game_events`` in the SQLite file ``path``, by rowid. On Linux the WAL
    file's writes also wake the caller at once (:class:`WalWrites`); the poll stays, for
    what that misses (a wake-up just before the commit became visible, a WAL file made anew).
    """

    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA query_only = ON")
        self.version = self._version()
        row = self.conn.execute("SELECT coalesce(max(rowid), 0) FROM game_events").fetchone()
        self.rowid = int(row[0])
        self.wal = WalWrites(path + "-wal")

    def fileno(self) -> int | None:
        return self.wal.fileno()

    def _version(self) -> int:
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def changed(self) -> set[int] | None:
        self.wal.drain()
        version = self._version()
        if version == self.version:
            return set()
        self.version = version
        rows = self.conn.execute(
            "SELECT rowid, stammtisch_id FROM game_events WHERE rowid > ? ORDER BY rowid",
            [self.rowid],
        ).fetchall()
        if rows:
            self.rowid = int(rows[-1][0])
        return {int(st) for _, st in rows}

    def close(self) -> None:
        self.wal.close()
        self.conn.close()


class WalWrites:
    """inotify on a WAL file (Linux): its descriptor turns readable when any process writes a
    transaction into it. Nothing (None) where inotify or the file is missing."""

    IN_MODIFY, IN_NONBLOCK, IN_CLOEXEC = 0x2, 0o4000, 0o2000000

    def __init__(self, path: str) -> None:
        self.fd: int | None = None
        try:
            import ctypes
            import ctypes.util

            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            fd = int(libc.inotify_init1(self.IN_NONBLOCK | self.IN_CLOEXEC))
        except (OSError, AttributeError):
            return
        if fd < 0:
            return
        if libc.inotify_add_watch(fd, os.fsencode(path), self.IN_MODIFY) < 0:
            os.close(fd)
            return
        self.fd = fd

    def fileno(self) -> int | None:
        return self.fd

    def drain(self) -> None:
        if self.fd is None:
            return
        try:
            while os.read(self.fd, 4096):
                pass
        except OSError:  # nothing more to read
            pass

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class PostgresWatch(PollWatch):
    """``LISTEN schocken_events`` on a connection of its own to ``url``."""

    interval: float | None = None
    must_read = True

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn: Any = None
        self.retry_at = 0.0
        self._connect()

    def _connect(self) -> bool:
        import psycopg

        self.retry_at = time.monotonic() + RETRY_SECONDS
        try:
            self.conn = psycopg.connect(self.url, autocommit=True, connect_timeout=5)
            self.conn.execute(f"LISTEN {CHANNEL}")
        except psycopg.Error as err:
            log.warning("LISTEN %s: keine Verbindung (%s)", CHANNEL, err)
            self._drop()
            return False
        self.interval = None
        return True

    def _drop(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            except Exception:  # noqa: BLE001 - a broken connection may fail to close
                pass
        self.conn = None
        self.interval = RETRY_SECONDS

    def fileno(self) -> int | None:
        return None if self.conn is None else int(self.conn.fileno())

    def changed(self) -> set[int] | None:
        import psycopg

        if self.conn is None:
            if time.monotonic() < self.retry_at or not self._connect():
                return set()
            return None  # what was notified while it was away is lost: look everywhere
        found: set[int] = set()
        try:
            for note in self.conn.notifies(timeout=0):
                head = note.payload.split(" ", 1)[0]
                if head.isdigit():
                    found.add(int(head))
        except psycopg.Error as err:
            log.warning("LISTEN %s: Verbindung verloren (%s)", CHANNEL, err)
            self._drop()
            return None
        return found

    def close(self) -> None:
        self._drop()


def watch_of(store: Any) -> PollWatch:
    """The watch that fits ``store`` (by what it has: a SQLite file, a PostgreSQL URL; the
    PostgreSQL adapter imported only when it is in use, which the extra "postgres" brings)."""
    from .memory import MemoryStore
    from .sqlite import SQLiteStore

    if isinstance(store, SQLiteStore):
        return SQLiteWatch(store.path)
    if isinstance(store, MemoryStore):
        return PollWatch()
    from .postgres import PostgresStore

    if isinstance(store, PostgresStore):
        return PostgresWatch(store.url)
    return PollWatch()
