"""Connections of one kind, shared by the requests of a process: a repository takes one on its
first statement and gives it back at the end of its request (:meth:`SQLiteRepository.close
<.repository.SQLiteRepository.close>`), so that a server whose requests are many short tasks
(gevent's greenlets, threads) neither opens a connection per request nor keeps one per task.

At most ``size`` connections are in use at once (more tasks wait for one: under gevent
cooperatively, its monkey-patched semaphore; after ``wait`` seconds without one,
:class:`~api.storage.StorageUnavailable`, a 503), at most ``idle`` wait unused; a connection
given back beyond that, or after :meth:`Pool.close`, is closed. A request takes its
connection only after its body has arrived (api/http/limits.py reads it first): a client that
sends slowly holds no connection. Each connection holds two open
files (the database and its WAL), which ``schocken serve`` keeps in its reserve of open files
(api/cli/serving.py).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..repository import StorageUnavailable


class Pool:
    """Connections made by ``connect``: at most ``size`` in use, ``idle`` kept unused."""

    def __init__(
        self, connect: Callable[[], sqlite3.Connection], size: int, idle: int, wait: float
    ) -> None:
        self._connect = connect
        self._wait = wait
        self._slots = threading.BoundedSemaphore(size)
        self._idle: list[sqlite3.Connection] = []
        self._keep = idle
        self._lock = threading.Lock()
        self.closed = False

    def take(self) -> sqlite3.Connection:
        """A connection (an idle one, else a new one); waits while ``size`` are in use."""
        if not self._slots.acquire(timeout=self._wait):
            raise StorageUnavailable(f"SQLite: no connection free after {self._wait:.0f} s")
        try:
            with self._lock:
                conn = self._idle.pop() if self._idle else None
            return conn if conn is not None else self._new()
        except BaseException:
            self._slots.release()
            raise

    def _new(self) -> sqlite3.Connection:
        try:
            return self._connect()
        except sqlite3.OperationalError as exc:  # out of open files, say: a 503, not a 500
            raise StorageUnavailable(f"SQLite: no new connection ({exc})") from exc

    def give(self, conn: sqlite3.Connection) -> None:
        """Back from use: kept for the next task (closed when the pool keeps enough, is
        closed, or the connection is inside a transaction still)."""
        try:
            with self._lock:
                keep = not self.closed and not conn.in_transaction and len(self._idle) < self._keep
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()
        finally:
            self._slots.release()

    @contextmanager
    def using(self) -> Iterator[sqlite3.Connection]:
        """A connection for one statement or a few."""
        conn = self.take()
        try:
            yield conn
        finally:
            self.give(conn)

    def close(self) -> None:
        """Close the idle connections, and each one given back from now on."""
        with self._lock:
            self.closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
