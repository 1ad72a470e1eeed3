"""SQLite's part of the relational adapter's repository (:mod:`api.storage.relational`):
``BEGIN IMMEDIATE``, the writers' queue and the WAL's sync (:class:`Writing`), the rate
limit's counters (:class:`Counters`), the error mapping, file locks beside the database, the
claim of webhook deliveries under the write lock and the statistics' CSV rendered by SQLite.
Why each is so: :mod:`.store`."""

from __future__ import annotations

import fcntl
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from typing import Any, ClassVar

from sqlalchemy import Engine
from sqlalchemy.dialects.sqlite import pysqlite

from ..relational import pooled
from ..relational_outbox import RelationalRepository, outgoing, stored_events
from ..repository import (
    RateLimited,
    StorageConflict,
    StorageUnavailable,
    file_fault,
    unavailable_cause,
)
from ..statements import Kinds, naive, named, to_json
from ..webhook_records import Outgoing

log = logging.getLogger(__name__)

#: the constraint errors that mean "taken": a primary key or a unique column
TAKEN = frozenset({"SQLITE_CONSTRAINT_PRIMARYKEY", "SQLITE_CONSTRAINT_UNIQUE"})
#: more ids than this are passed as one JSON array (json_each) instead of one parameter each
_MANY = 500


def timestamp(value: datetime) -> str:
    """A time as stored: naive UTC, ISO 8601 with a space, microseconds only when there are
    any (both sort by time as text)."""
    return naive(value).isoformat(sep=" ")


@contextmanager
def file_lock(path: str, wait: bool | float) -> Iterator[bool]:
    """The exclusive flock of the file ``path`` (created if missing): waiting for it (True),
    not (False) or up to ``wait`` seconds; yields whether it was taken."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + (0.0 if wait is True else float(wait))
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if wait is True else fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.01)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class Writing:
    """The writers' queue and the WAL's sync of one database file, shared by the process."""

    def __init__(self, path: str) -> None:
        self.path = path
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
        """Put the WAL on disk (after a commit). The first time, the folder as well: the WAL
        file's name must survive a power loss too."""
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


class Counters:
    """Token buckets and failed logins: a take reads the bucket on the request's connection and
    is written by its next write transaction (:meth:`begin`) or at its end (:meth:`settle`), on
    connections of their own (``pool``, one per statement: a counter is never waited for while
    a request's connection is held)."""

    def __init__(self, writing: Writing | None, pool: Engine | None, sql: Mapping[str, str]):
        self._writing, self._pool, self._sql = writing, pool, sql
        self._pending: dict[str, Any] | None = None  # read, not yet written
        self._written: dict[str, Any] | None = None  # written by an uncommitted transaction

    @contextmanager
    def _connection(self, write: bool) -> Iterator[sqlite3.Connection]:
        if self._writing is None or self._pool is None:
            raise NotImplementedError("a read-only copy keeps no counters")
        with pooled(self._pool) as conn, self._writing.queued() if write else nullcontext():
            yield conn

    def take(
        self, who: str, now: float, per_second: float, burst: int, conn: sqlite3.Connection
    ) -> float:
        """0.0 when ``who`` has a token (taken by the request's write transaction or at its
        end), else the seconds until the next one; the bucket read on ``conn``."""
        if self._writing is None or self._pool is None:
            raise NotImplementedError("a read-only copy keeps no counters")
        self.settle()  # a take of an earlier request not written yet (it ended abnormally)
        params = {"who": who, "now": now, "rate": per_second, "burst": float(burst)}
        row = conn.execute(self._sql["peek_token"], params).fetchone()
        tokens = float(burst) if row is None else float(row[0])
        if tokens < 1.0:  # nothing to write: the stored bucket refills to the same tokens
            return (1.0 - tokens) / per_second
        self._pending = params
        return 0.0

    def begin(self, conn: sqlite3.Connection, on_commit: list[Callable[[], None]]) -> None:
        """``BEGIN IMMEDIATE`` on ``conn``, then the pending token taken in it. Raises
        :class:`RateLimited` when none is left (the caller rolls back)."""
        conn.execute("BEGIN IMMEDIATE")
        params, self._pending = self._pending, None
        if params is None:
            return
        tokens, granted = conn.execute(self._sql["take_token"], params).fetchone()
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
                self.run("take_token", params)
            except (sqlite3.Error, NotImplementedError):
                log.warning("rate limit: a token could not be taken", exc_info=True)

    def run(self, name: str, params: dict[str, Any]) -> Any:
        """One statement, committed at once (a read does not queue); its first row."""
        with self._connection(name != "failures") as conn:
            cursor = conn.execute(self._sql[name], params)
            return cursor.fetchone() if cursor.description else None


class SQLiteRepository(RelationalRepository):
    """The relational repository on SQLite: ``own`` connection, or (None) one taken from
    ``pool``; the rate limit's counters on connections of ``counters``."""

    _DIALECT = pysqlite.dialect(paramstyle="named")
    _DRIVER_ERROR = sqlite3.Error
    _FUNCTIONS: ClassVar[dict[str, str]] = {"least": "min", "greatest": "max"}
    _OWN_SQL: ClassVar[dict[str, str]] = named(__package__)

    def __init__(
        self,
        own: sqlite3.Connection | None,
        kinds: Kinds,
        writing: Writing | None = None,
        pool: Engine | None = None,
        counters: Engine | None = None,
    ) -> None:
        super().__init__(own, kinds, pool)
        self._queue = writing  # the writers' queue, the WAL's sync
        self.counters = Counters(writing, counters, self._sql_of)

    @contextmanager
    def _mapped(self) -> Iterator[None]:
        """The driver's errors of statements run beside :meth:`_x` as the port's."""
        try:
            yield
        except sqlite3.Error as exc:
            port = self._fault(exc, None)
            if port is None:
                raise
            raise port from exc

    def _begin(self) -> None:
        assert self._pending is not None
        try:
            self.counters.begin(self._conn, self._pending)
        except sqlite3.Error as exc:  # as _mapped, without its generator on every write
            port = self._fault(exc, None)
            if port is None:
                raise
            raise port from exc

    def _queued(self) -> AbstractContextManager[Any]:
        return self._queue.queued() if self._queue is not None else nullcontext()

    def _committed(self) -> None:
        if self._queue is not None:
            self._queue.sync()  # outside the queue: the next writer goes on meanwhile

    def _busy(self, conn: Any) -> bool:
        return bool(conn.in_transaction)

    def _time(self, value: Any) -> Any:
        return timestamp(value)

    def _fault(self, exc: Exception, conflict: str | None) -> Exception | None:
        if isinstance(exc, sqlite3.IntegrityError):
            taken = getattr(exc, "sqlite_errorname", "") in TAKEN
            return StorageConflict(conflict or str(exc)) if taken else None
        cause = unavailable_cause(exc) if isinstance(exc, sqlite3.OperationalError) else None
        return None if cause is None else StorageUnavailable(f"SQLite: {cause}")

    def _in(self, ids: Sequence[int]) -> tuple[str, dict[str, Any]]:
        """A few ids as one parameter each, so that SQLite searches the index."""
        if len(ids) > _MANY:
            return super()._in(ids)
        return ", ".join(f":i{n}" for n in range(len(ids))) or "NULL", {
            f"i{n}": i for n, i in enumerate(ids)
        }

    def close(self) -> None:
        super().close()
        if not self.disconnected:
            self.counters.settle()  # a rate-limit token no committed write took

    def _path(self) -> str:
        return str(self._conn.execute("PRAGMA database_list").fetchone()[2])

    def probe(self) -> None:
        """Can the database take the write lock (given back at once, never waited for: one
        held by another writer shows it can), and are its file and folder writable with room
        on the disk? Raises :class:`StorageUnavailable` if not."""
        if self._depth:
            return
        conn = self._conn
        wait = conn.execute("PRAGMA busy_timeout").fetchone()[0]
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            self._x("BEGIN IMMEDIATE")
            conn.execute("ROLLBACK")
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(wait)}")
        fault = file_fault(self._path())
        if fault is not None:
            raise StorageUnavailable(f"SQLite: {fault}")

    def _counted(self, name: str, params: dict[str, Any]) -> Any:
        with self._mapped():
            return self.counters.run(name, params)

    def take_token(self, who: str, now: float, per_second: float, burst: int) -> float:
        with self._mapped():  # a full disk: 503 here already
            return self.counters.take(who, now, per_second, burst, self._conn)

    def purge_tokens(self, before: float) -> None:
        self._counted("purge_tokens", {"before": before})

    def settle_tokens(self) -> None:
        self.counters.settle()

    def events_since_rowid(self, rowid: int, limit: int) -> tuple[int, list[Any]]:
        """Rows of every Stammtisch after ``rowid`` (one writer at a time: the rowid grows in
        commit order), for the event streams' pollers; the last rowid and the rows."""
        rows = self._all("since", {"rowid": rowid, "limit": limit})
        return (int(rows[-1][0]), [stored_events(r[1:]) for r in rows]) if rows else (rowid, [])

    def claim_deliveries(self, now: Any, lease_until: Any, limit: int) -> list[Outgoing]:
        at, lease = timestamp(now), timestamp(lease_until)
        if self._one("any_due", {"now": at}) is None:
            return []
        with self.transaction():
            picked = self._all("pick", {"now": at, "limit": limit})
            if not picked:
                return []
            ids, hooks = to_json([r[0] for r in picked]), to_json([r[1] for r in picked])
            self._x("busy", {"lease": lease, "hooks": hooks})
            self._x("claim", {"now": at, "lease": lease, "ids": ids})
            rows = self._all("claimed", {"ids": ids})
        return outgoing(rows)

    def stats_csv(
        self, tables: Mapping[str, Sequence[str]], stammtische: Any
    ) -> dict[str, list[str]]:
        """As the port's, but SQLite renders the lines and joins them into one text per
        table (no Python object per value or row; the query runs without the GIL, so that a
        refresh reads the next chunk while another thread computes)."""
        out: dict[str, list[str]] = {}
        with self.reading():
            for table, columns, where, params in self._selects(tables, stammtische):
                kinds = dict(self._kinds[table])
                required = {str(r[1]) for r in self._conn.execute(f"PRAGMA table_info({table})")
                            if r[3]}  # fmt: skip
                # a NOT NULL integer as %d (SQLite's fastest rendering), the rest as text
                plain = {c for c in columns if c in required and _integer(kinds[c])}
                marks = ",".join("%d" if c in plain else "%s" for c in columns)
                values = ", ".join(c if c in plain else _csv_sql(c, kinds[c]) for c in columns)
                sql = f"SELECT group_concat(printf('{marks}', {values}), char(10)) FROM {table}"  # noqa: S608
                row = self._one(sql + where, params)
                out[table] = [row[0]] if row and row[0] else []
        return out

    @contextmanager
    def stats_lock(self, wait: bool | float = True) -> Iterator[bool]:
        with file_lock(f"{self._path()}.stats-lock", wait) as taken:
            yield taken

    @contextmanager
    def sender_lock(self) -> Iterator[bool]:
        """One sender per database file: an flock of ``<file>.webhooks-lock`` (given up at
        once when another sender holds it)."""
        path = self._path()
        if not path:
            yield True
            return
        with file_lock(f"{path}.webhooks-lock", False) as taken:
            yield taken


def _integer(kind: str) -> bool:
    return kind.upper() in ("INTEGER", "BIGINT", "BOOLEAN")


def _csv_sql(column: str, kind: str) -> str:
    """SQL rendering ``column`` as a value of a CSV line (see ``Statistics.stats_csv``):
    integers as they are, other values quoted."""
    if _integer(kind):
        return f"ifnull({column}, '\\N')"
    quoted = f"'\"' || replace({column}, '\"', '\"\"') || '\"'"
    return f"CASE WHEN {column} IS NULL THEN '\\N' ELSE {quoted} END"
