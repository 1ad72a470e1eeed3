"""What runs beside the game transactions: the queue of writers, the sync of the WAL after a
commit, the rate limit's counters and the health probe.

Writers (:class:`Writing`): SQLite lets one transaction write at a time; one that finds the
lock taken sleeps in SQLite's busy handler (1, 2, 5, 10 … ms) and tries again, which costs
latency and leaves the lock idle. So writers queue before ``BEGIN IMMEDIATE``: the threads of a
process on a lock, the processes on an ``flock`` of the file ``<database>-writers`` (the
kernel wakes the next one when it is released, and releases it when a process dies). This is
only a queue: the write lock of ``BEGIN IMMEDIATE`` stays what makes writes exclusive (a
program that does not queue, such as ``schocken rebuild``, just waits in the busy handler).
After COMMIT the queue is left and the WAL is synced (:meth:`Writing.sync`, see .store).

Counters (:class:`Counters`): every server process takes a client's tokens from the one table
``rate_limits`` (migration 0007) with one ``INSERT … ON CONFLICT DO UPDATE … RETURNING``
statement, atomic across processes. A write request does not pay a transaction of its own for
it: :meth:`Counters.take` only reads the bucket (an empty one is refused at once) and leaves
the take to the first statement of the request's own write transaction (:meth:`Counters.begin`,
right after ``BEGIN IMMEDIATE``), so it commits and is synced with the turn it paid for. Should
the bucket have run dry since the read (another request of the client, in any process), that
transaction is refused with :class:`RateLimited` and rolls back. A request that writes nothing
(refused before its transaction, say) or whose transaction rolled back takes its token at its
end (:meth:`Counters.settle`), on a connection of the counters' own with ``synchronous=OFF``,
not synced: an fsync per request would halve the write rate. A counter lost in a crash of the
machine only lets a client write once more; the next sync after a turn puts the whole WAL on
disk, counters included. That connection never checkpoints (an unsynced checkpoint could
empty a WAL whose turns are not in a synced database file yet); the turns' connections do,
syncing as ``synchronous=NORMAL`` does.
"""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine

from ..engine import pooled
from ..repository import RateLimited
from .sql import queries

log = logging.getLogger(__name__)


class Writing:
    """The writers' queue and the WAL's sync of one database file, shared by the process."""

    def __init__(self, path: str, connect: Callable[[], sqlite3.Connection]) -> None:
        self.path = path
        self.connect = connect
        self._lock = threading.RLock()
        self._depth = 0  # changed only by the thread holding _lock
        self._queue: int | None = None  # the file descriptor of <database>-writers
        self._wal: int | None = None

    @contextmanager
    def queued(self) -> Iterator[None]:
        """First in this process, then among the processes (re-entrant in a thread)."""
        with self._lock:
            if self._depth == 0 and self._queue_fd() >= 0:
                fcntl.flock(self._queue_fd(), fcntl.LOCK_EX)
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._queue_fd() >= 0:
                    fcntl.flock(self._queue_fd(), fcntl.LOCK_UN)

    def _queue_fd(self) -> int:
        if self._queue is None:
            try:
                self._queue = os.open(self.path + "-writers", os.O_RDWR | os.O_CREAT, 0o600)
            except OSError:  # a read-only folder: queue in this process only
                self._queue = -1
        return self._queue

    def sync(self) -> None:
        """Put the WAL on disk (after a commit; see .store). The first time, the folder as
        well: the WAL file's name must survive a power loss too."""
        if self._wal is None:
            with self._lock:
                if self._wal is None:
                    folder = os.open(os.path.dirname(os.path.abspath(self.path)), os.O_RDONLY)
                    try:
                        os.fsync(folder)
                    finally:
                        os.close(folder)
                    self._wal = os.open(self.path + "-wal", os.O_RDONLY)
        os.fdatasync(self._wal)  # the data and the size: what a reader needs after a crash

    def close(self) -> None:
        with self._lock:
            for fd in (self._queue, self._wal):
                if fd is not None and fd >= 0:
                    os.close(fd)
            self._queue = self._wal = None


#: the tokens in ``who``'s bucket now (no row: a full bucket)
_PEEK = (
    "SELECT min(:burst, tokens + max(0.0, :now - updated_at) * :rate) "
    "FROM rate_limits WHERE who = :who"
)


def counters_settings(
    settings: Callable[[sqlite3.Connection], None],
) -> Callable[[sqlite3.Connection], None]:
    """The settings of a connection of the counters (see the module's text): ``settings``,
    then no sync."""

    def counters(conn: sqlite3.Connection) -> None:
        settings(conn)
        conn.execute("PRAGMA synchronous = OFF")
        # never a checkpoint here: with OFF it would not sync the database file, and the WAL it
        # empties may hold acknowledged turns (the other connections checkpoint)
        conn.execute("PRAGMA wal_autocheckpoint = 0")

    return counters


class Counters:
    """Token buckets in the database, on connections of their own (``pool``, one taken per
    statement: a counter is never waited for while a request's connection is held); a take is
    written by the request's next write transaction (:meth:`begin`) or at its end
    (:meth:`settle`)."""

    def __init__(self, writing: Writing | None, pool: Engine | None = None) -> None:
        self._writing = writing
        self._pool = pool
        self._q = queries()
        self._pending: dict[str, Any] | None = None  # read, not yet written
        self._written: dict[str, Any] | None = None  # written by an uncommitted transaction

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        if self._writing is None or self._pool is None:
            raise NotImplementedError("a read-only copy keeps no counters")
        with pooled(self._pool) as conn:
            yield conn

    def take(self, who: str, now: float, per_second: float, burst: int) -> float:
        """0.0 when ``who`` has a token (taken by the request's write transaction or at its
        end), else the seconds until the next one."""
        self.settle()  # a take of an earlier request not written yet (it ended abnormally)
        params = {"who": who, "now": now, "rate": per_second, "burst": float(burst)}
        with self._connection() as conn:
            row = conn.execute(_PEEK, params).fetchone()
        tokens = float(burst) if row is None else float(row[0])
        if tokens < 1.0:  # nothing to write: the stored bucket refills to the same tokens
            return (1.0 - tokens) / per_second
        self._pending = params
        return 0.0

    def begin(self, conn: sqlite3.Connection, on_commit: list[Callable[[], None]]) -> None:
        """Begin the request's write transaction on ``conn`` (``BEGIN IMMEDIATE``) and take
        the pending token in it first. Raises :class:`RateLimited` when none is left (the
        caller rolls back)."""
        conn.execute("BEGIN IMMEDIATE")
        params, self._pending = self._pending, None
        if params is None:
            return
        tokens, granted = conn.execute(self._q["take_token"], params).fetchone()
        if not granted:
            raise RateLimited((1.0 - float(tokens)) / params["rate"])
        self._written = params
        on_commit.append(self._committed)

    def _committed(self) -> None:
        self._written = None

    def settle(self) -> None:
        """At the end of a request: a token not taken by a committed transaction is taken now
        (a failure is logged, not raised: the answer is out)."""
        params = self._pending or self._written
        self._pending = self._written = None
        if params is not None:
            try:
                self._write(params)
            except (sqlite3.Error, NotImplementedError):
                log.warning("rate limit: a token could not be taken", exc_info=True)

    def _write(self, params: dict[str, Any]) -> None:
        assert self._writing is not None
        with self._connection() as conn, self._writing.queued():
            conn.execute(self._q["take_token"], params).fetchone()

    def purge(self, before: float) -> None:
        assert self._writing is not None
        with self._connection() as conn, self._writing.queued():
            conn.execute(self._q["purge_tokens"], {"before": before})

    def failed_attempts(self, who: str, now: float, outcome: bool | None) -> tuple[int, float]:
        """See :meth:`api.storage.Repository.failed_attempts`."""
        assert self._writing is not None
        params = {"who": who, "now": now}
        with self._connection() as conn:
            if outcome is None:
                row = conn.execute(self._q["failures"], params).fetchone()
            else:
                with self._writing.queued():
                    name = "clear_failures" if outcome else "note_failure"
                    row = conn.execute(self._q[name], params).fetchone()
        return (int(row[0]), float(row[1])) if row else (0, 0.0)


def probe_write_lock(conn: sqlite3.Connection) -> None:
    """Take the write lock and give it back at once, without waiting (busy timeout 0): a lock
    held by another writer shows the database can write. Raises the driver's error otherwise
    (a read-only database refuses the lock)."""
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
