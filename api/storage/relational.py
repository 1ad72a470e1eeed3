"""The one relational adapter of :class:`~.repository.Repository`, for both SQL stores of
record: every query is written once (``queries.sql``, compiled once per dialect:
:mod:`.statements`), and this module holds its core: connections, statements, transactions and
what a turn writes (the other methods: :mod:`.relational_tables`, :mod:`.relational_outbox`).
What differs is a small named part of each store (:mod:`.sqlite.repository`,
:mod:`.postgres.store`): its subclass overrides the hooks of :class:`RelationalCore` and adds
what only it has (SQLite's file locks, WAL sync and rate-limit connections; PostgreSQL's row
and advisory locks, LISTEN/NOTIFY, SKIP LOCKED).

Transactions are explicit on a connection in autocommit mode (``_begin``: ``BEGIN IMMEDIATE``
on SQLite, ``BEGIN`` on PostgreSQL; nesting is flat); ``reading()`` is a read-only one. A
repository takes a pooled connection on its first statement and gives it back at the end of
its request. Taken keys insert nothing (``ON CONFLICT DO NOTHING``: the transaction stays
usable) and raise :class:`StorageConflict`; other driver errors become the port's (``_fault``).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar

from sqlalchemy import Engine, QueuePool
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.pool import PoolProxiedConnection

from .records import (
    FACT_COLUMNS,
    FactsWrite,
    GamePlayer,
    GameRecord,
    LogEntry,
    Stammtisch,
    StoredResponse,
)
from .repository import (
    Background,
    Repository,
    StorageConflict,
    StorageUnavailable,
    StorageUnreachable,
)
from .statements import (
    IDS,
    PLAIN,
    SQL,
    Kinds,
    compiled,
    doc,
    encode,
    fact_columns,
    fact_insert,
    moment,
    naive,
    stats_changed,
    to_json,
)


def take(engine: Engine) -> PoolProxiedConnection:
    """A connection of the pool (give it back with its ``close()``); none free in time:
    :class:`StorageUnavailable` (SQLite) or :class:`StorageUnreachable` (PostgreSQL)."""
    try:
        return engine.raw_connection()
    except PoolTimeout as exc:
        pool = engine.pool
        wait = (
            f"no connection free after {pool.timeout() if isinstance(pool, QueuePool) else 0:g} s"
        )
        if engine.dialect.name == "sqlite":
            raise StorageUnavailable(f"SQLite: {wait}") from exc
        raise StorageUnreachable(f"PostgreSQL unreachable: {wait}") from exc


@contextmanager
def pooled(engine: Engine) -> Iterator[Any]:
    """A pooled connection (the driver's own) for a statement or a few."""
    conn = take(engine)
    try:
        yield conn.dbapi_connection
    finally:
        conn.close()


def _record(row: Sequence[Any], players: tuple[GamePlayer, ...]) -> GameRecord:
    """A row of get_game / list_games as a record."""
    return GameRecord(
        id=row[0], stammtisch_id=row[1], header=doc(row[2]), rules=doc(row[3]),
        options=doc(row[4]), played_at=row[5], played_at_utc=moment(row[6]), year=row[7],
        source=row[8], created_at=moment(row[9]), players=players,
        played_local=moment(row[13]), number=int(row[14] or 0), status=row[10],
        phase=row[11], loser=row[12],
    )  # fmt: skip


class RelationalCore(Repository):
    """The repository of a SQL store, on one connection at a time: ``own`` (a connection of
    its own) or, when None, one taken from ``pool`` on its first statement and given back at
    the end of its request (:meth:`close`). Subclasses name their dialect's parts."""

    #: SQLAlchemy's dialect the statements are compiled for
    _DIALECT: ClassVar[Dialect]
    #: the driver's errors (:meth:`_fault` turns them into the port's)
    _DRIVER_ERROR: ClassVar[type[Exception]]
    #: begins a read-only transaction (one consistent moment, no lock)
    _BEGIN_READ: ClassVar[str] = "BEGIN"
    #: the dialect's names of the least and the greatest of two values
    _FUNCTIONS: ClassVar[dict[str, str]] = {"least": "least", "greatest": "greatest"}
    #: the dialect's own statements (as :data:`SQL`'s, by name)
    _OWN_SQL: ClassVar[dict[str, str]] = {}
    _sql_of: ClassVar[dict[str, str]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_DIALECT" in cls.__dict__:  # the dialect's statements, compiled once
            least, greatest = cls._FUNCTIONS["least"], cls._FUNCTIONS["greatest"]
            cls._sql_of = {
                name: compiled(
                    cls._DIALECT, sql.replace("{least}", least).replace("{greatest}", greatest)
                )
                for name, sql in {**SQL, **cls._OWN_SQL}.items()
            }

    def __init__(self, own: Any, kinds: Kinds, pool: Engine | None = None) -> None:
        if own is None and pool is None:
            raise ValueError("a repository needs a connection or a pool")
        self._own, self._held, self._pool = own, own, pool
        self._taken: PoolProxiedConnection | None = None  # the pool's handle of _held
        self._kinds = kinds  # table -> ((column, declared type), …), from the schema
        self._depth = 0
        self._writing = False  # in a write transaction (not a reading())
        self._locked: set[int] = set()  # games whose row this write transaction locked
        self._pending: list[Callable[[], None]] | None = None  # on_commit, in a write
        self.disconnected = False

    def _begin(self) -> None:
        """Begin a write transaction."""
        self._x("BEGIN")

    def _queued(self) -> AbstractContextManager[Any]:
        """Held around a write transaction (SQLite: the writers' queue)."""
        return nullcontext()

    def _committed(self) -> None:
        """After a commit, before the on-commit actions (SQLite: the WAL's sync)."""

    def _busy(self, conn: Any) -> bool:
        """Whether ``conn`` is in a transaction."""
        raise NotImplementedError

    def _fault(self, exc: Exception, conflict: str | None) -> Exception | None:
        """The port's error for the driver's ``exc`` (None: it stays what it is)."""
        return None

    def _lock_game(self, game_id: int) -> None:
        """Writers of one game go in turn (PostgreSQL: its row locked until the commit)."""

    def _time(self, value: datetime) -> Any:
        """A time as the store keeps it."""
        return naive(value)

    def _in(self, ids: Sequence[int]) -> tuple[str, dict[str, Any]]:
        """``IN (…)``'s inside for ``ids`` (one JSON array), and its parameters."""
        return IDS[self._DIALECT.name], {"ids": to_json(list(ids))}

    # connections and statements
    @property
    def _conn(self) -> Any:
        """The connection of this request (taken from the pool now if it has none)."""
        conn = self._held
        if conn is None:
            if self.disconnected or self._pool is None:
                raise RuntimeError("Cannot operate on a closed database.")
            self._taken = self._take()
            conn = self._held = self._taken.dbapi_connection
        return conn

    def _take(self) -> PoolProxiedConnection:
        assert self._pool is not None
        return take(self._pool)

    def _x(
        self, name: str, params: Any = None, conflict: str | None = None, many: bool = False
    ) -> Any:
        """Run the statement ``name`` (of :data:`SQL`, or SQL text) with ``params`` (``many``:
        once for each of them)."""
        sql = self._sql_of.get(name) or compiled(self._DIALECT, name)
        try:
            if many:
                return self._conn.cursor().executemany(sql, params) if params else None
            return self._conn.execute(sql, {} if params is None else params)
        except self._DRIVER_ERROR as exc:
            mapped = self._fault(exc, conflict)
            if mapped is None:
                raise
            raise mapped from exc

    def _many(self, name: str, rows: Sequence[Any], conflict: str | None = None) -> None:
        self._x(name, rows, conflict, many=True)

    def _all(self, name: str, params: Any = None) -> list[Any]:
        return list(self._x(name, params).fetchall())

    def _one(self, name: str, params: Any = None) -> Any:
        return self._x(name, params).fetchone()

    def close(self) -> None:
        """End of a request: an open transaction is rolled back; a pooled connection goes
        back to the pool (which drops a broken one), one of its own stays."""
        self._depth, self._writing, self._pending = 0, False, None
        if not self.disconnected:
            self._rollback()
            self._give_back()

    def _give_back(self) -> None:
        taken, self._taken = self._taken, None
        if taken is not None:
            self._held = None
            with suppress(Exception):
                taken.close()

    def disconnect(self) -> None:
        """Close the connection for good (a pooled one goes back to the pool)."""
        if not self.disconnected:
            self.close()
            self.disconnected = True
            if self._own is not None:
                self._own.close()

    def _rollback(self) -> None:
        # some errors end the transaction themselves; a rollback that fails as well must not
        # hide the first error
        conn = self._held
        if conn is not None:
            with suppress(Exception):
                if self._busy(conn):
                    conn.execute("ROLLBACK")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self._depth:  # nesting is flat: the outermost block commits or rolls back
            yield
            return
        with self._queued():
            self._depth, self._writing, self._pending, self._locked = 1, True, [], set()
            try:
                self._begin()
                yield
            except BaseException:
                self._depth, self._writing, self._pending = 0, False, None
                self._rollback()
                raise
            self._depth, self._writing = 0, False
            actions, self._pending = self._pending, None
            try:
                self._x("COMMIT")
            except BaseException:
                self._rollback()
                raise
        self._committed()
        for action in actions:
            action()

    def on_commit(self, action: Callable[[], None]) -> None:
        if self._pending is None:
            action()
        else:
            self._pending.append(action)

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Several reads as one consistent moment (no lock taken)."""
        if self._depth:
            yield
            return
        self._x(self._BEGIN_READ)
        self._depth = 1
        try:
            yield
        finally:
            self._depth = 0
            self._rollback()

    def get_stammtisch(self, slug: str) -> Stammtisch | None:
        r = self._one("get_stammtisch", {"slug": slug})
        if r is None:
            return None
        return Stammtisch(r[0], r[1], r[2], doc(r[3]), bool(r[4]), r[5], moment(r[6]), r[7])

    def _records(self, rows: list[Any]) -> list[GameRecord]:
        if not rows:
            return []
        seats: dict[int, list[GamePlayer]] = {}
        marks, params = self._in([int(row[0]) for row in rows])
        for game_id, seat, player_id, name, starter in self._all(
            SQL["seats"].format(ids=marks), params
        ):
            seats.setdefault(game_id, []).append(GamePlayer(seat, player_id, name, bool(starter)))
        return [_record(row, tuple(seats.get(row[0], ()))) for row in rows]

    def get_game_by_id(self, game_id: int) -> GameRecord | None:
        self._lock_game(game_id)
        with self.reading():
            found = self._records(self._all("get_game", {"game_id": game_id}))
        return found[0] if found else None

    def game_version(self, game_id: int) -> int:
        # the lock first, the version in a statement of its own: at READ COMMITTED each
        # statement reads what was committed when it started (after the lock's wait)
        self._lock_game(game_id)
        row = self._one("version", {"game_id": game_id})
        return int(row[0]) if row else 0

    def game_state(self, game_id: int) -> tuple[int, bool]:
        self._lock_game(game_id)
        row = self._one("state", {"game_id": game_id})
        return (0, False) if row is None else (int(row[0] or 0), row[1] is not None)

    def _entry(self, entry: LogEntry) -> dict[str, Any]:
        return {"game_id": entry.game_id, "seq": entry.seq, "kind": entry.kind,
                "body": to_json(entry.body), "recorded_at": self._time(entry.recorded_at)}  # fmt: skip

    def append_log(self, entry: LogEntry) -> None:
        with self.transaction():
            self._lock_game(entry.game_id)
            self._x("append", self._entry(entry), f"game {entry.game_id}: entry {entry.seq} exists")

    def append_entry(self, entry: LogEntry, facts: FactsWrite) -> None:
        with self.transaction():
            self.append_log(entry)
            self.write_facts(entry.game_id, facts)

    def _insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            columns, time = fact_columns(self._kinds[table], table), self._time
            self._many(fact_insert(table), [
                {c: row[c] if plain and type(row[c]) in PLAIN else encode(k, row[c], time)
                 for c, k, plain in columns} for row in rows
            ])  # fmt: skip

    def write_facts(self, game_id: int, write: FactsWrite) -> None:
        with self.transaction():
            if write.game is not None:
                self._insert("game_facts", [write.game])  # an upsert
            for table, rows in write.replace.items():
                if table not in FACT_COLUMNS:
                    raise ValueError(f"no fact table {table}")
                self._x(f"DELETE FROM {table} WHERE game_id = :id", {"id": game_id})  # noqa: S608
                self._insert(table, rows)
            for table, rows in write.append.items():
                self._insert(table, rows)
            if stats_changed(write):
                self._x("mark_game", {"id": game_id})

    def get_response(self, stammtisch_id: int, key_hash: str) -> StoredResponse | None:
        r = self._one("get_response", {"stammtisch_id": stammtisch_id, "key_hash": key_hash})
        if r is None:
            return None
        return StoredResponse(r[0], r[1], r[2], r[3], r[4], bytes(r[5]), moment(r[6]))

    def save_response(self, response: StoredResponse) -> None:
        params = {
            "stammtisch_id": response.stammtisch_id, "key_hash": response.key_hash,
            "fingerprint": response.fingerprint, "status": response.status,
            "content_type": response.content_type, "body": response.body,
            "created_at": self._time(response.created_at),
        }  # fmt: skip
        with self.transaction():
            if self._one("save_response", params) is None:
                raise StorageConflict("idempotency key taken")

    # the outbox of domain events
    def append_events(
        self, stammtisch_id: int, game_id: int, seq: int, events: list[dict[str, Any]], at: datetime
    ) -> int:
        with self.transaction():
            (position,) = self._one("next_position", {"st": stammtisch_id})
            row = {"st": stammtisch_id, "position": position, "game": game_id, "seq": seq,
                   "events": to_json(events), "at": self._time(at)}  # fmt: skip
            self._x("add_events", row)
            self._announce(row, [e["kind"] for e in events])
        return int(position)

    def _announce(self, row: dict[str, Any], kinds: list[str]) -> None:
        """The entry stored as ``row`` (of add_events) is told: its webhooks' deliveries."""
        self.enqueue_deliveries(row["st"], row["position"], kinds, row["at"])

    def enqueue_deliveries(
        self, stammtisch_id: int, position: int, kinds: Sequence[str], at: Any
    ) -> int:
        params = {"st": stammtisch_id, "position": position, "kinds": to_json(list(kinds)),
                  "at": at if not isinstance(at, datetime) else self._time(at)}  # fmt: skip
        return int(self._x("enqueue", params).rowcount)


Repo = TypeVar("Repo", bound=RelationalCore)


class RelationalStore(Generic[Repo]):
    """What both SQL stores' handles share: each task's repository (a thread's or a
    greenlet's), the threads beside the requests, and closing it all."""

    _pool: Engine
    _kinds: Kinds

    def __init__(self) -> None:
        self.background = Background()
        self._local = threading.local()
        self._repos: weakref.WeakSet[RelationalCore] = weakref.WeakSet()
        self._lock = threading.Lock()

    @property
    def kinds(self) -> Kinds:
        """Every table's columns with their declared types, read from the schema."""
        return self._kinds

    def _new_repository(self, own: Any = None) -> Repo:
        raise NotImplementedError

    def repository(self) -> Repo:
        """This task's repository: it takes a pooled connection on its first statement and
        gives it back when closed at the end of a request."""
        repo: Repo | None = getattr(self._local, "repo", None)
        if repo is None or repo.disconnected:
            repo = self._local.repo = self._register(self._new_repository())
        return repo

    def _register(self, repo: Repo) -> Repo:
        with self._lock:
            self._repos.add(repo)
        return repo

    def close(self) -> None:
        """Stop the threads running beside the requests, then give back or close every
        connection this store handed out, and close the pool."""
        self.background.stop()
        with self._lock:
            repos = list(self._repos)
            self._repos.clear()
        for repo in repos:
            repo.disconnect()
        self._pool.dispose()
