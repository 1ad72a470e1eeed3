"""The one relational adapter of :class:`~.repository.Repository`, for both SQL stores of
record: every query is written once here, with ``:name`` parameters, and compiled once per
dialect by SQLAlchemy (:func:`compiled`: ``:name`` for sqlite3, ``%(name)s`` for psycopg) into
the text the driver runs. What differs between SQLite and PostgreSQL is a small named part of
each store (:mod:`.sqlite.store`, :mod:`.postgres.store`): its subclass of
:class:`RelationalRepository` overrides the hooks below and adds what only it has (SQLite's
file locks, WAL sync and rate-limit connections; PostgreSQL's row and advisory locks,
LISTEN/NOTIFY, SKIP LOCKED).

Transactions are explicit on a connection in autocommit mode: ``transaction()`` begins with
:meth:`RelationalRepository._begin` (``BEGIN IMMEDIATE`` on SQLite, ``BEGIN`` on PostgreSQL) and
commits at its end (nesting is flat); ``reading()`` is a read-only transaction, one consistent
moment. A repository takes a pooled connection on its first statement and gives it back at the
end of its request (:meth:`RelationalRepository.close`). Taken keys (a slug, a log entry, an
idempotency key) insert nothing (``ON CONFLICT DO NOTHING``: the transaction stays usable) and
raise :class:`StorageConflict`; the driver's other errors become the port's in :meth:`_fault`.

Values are bound as the stores keep them (:meth:`RelationalRepository._time`): JSON as compact
text, times naive in UTC (SQLite: ISO 8601 text). Rows come back as the driver gives them and
are read with :func:`doc` and :func:`moment`, which take both the text and the parsed value.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from datetime import UTC, datetime
from functools import cache, lru_cache
from typing import Any, ClassVar

from sqlalchemy import Engine, text
from sqlalchemy.engine import Dialect
from sqlalchemy.pool import PoolProxiedConnection

from .engine import take
from .records import (
    FACT_COLUMNS,
    ROW_TABLES,
    FactsWrite,
    GamePlayer,
    GameRecord,
    LogEntry,
    NewGame,
    Player,
    Stammtisch,
    StoredEvents,
    StoredResponse,
    WebSession,
)
from .repository import Background, Repository, StorageConflict
from .sql import queries
from .webhook_records import (
    Backlog,
    Delivery,
    Outgoing,
    Webhook,
    delivery_of,
    event_of,
)

#: a table's columns in table order, each with its declared type
Kinds = dict[str, tuple[tuple[str, str], ...]]


@lru_cache(maxsize=1024)
def compiled(dialect: Dialect, sql: str) -> str:
    """``sql`` (``:name`` parameters) as the driver of ``dialect`` takes it (cached)."""
    return str(text(sql).compile(dialect=dialect))


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_iso)


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def naive(value: datetime) -> datetime:
    """A time as stored: naive, an aware time converted to UTC first."""
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo is not None else value


def moment(value: Any) -> Any:
    """A stored time (ISO text or the driver's datetime) as a datetime; None stays."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def doc(value: Any) -> Any:
    """A stored JSON document (text or the driver's parsed value) as Python values."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def decode(kind: str, value: Any) -> Any:
    """A stored value as the Python value of its column's declared type."""
    kind = kind.lower()
    if value is None:
        return None
    if kind == "boolean":
        return bool(value)
    if kind.startswith("timestamp"):
        return moment(value)
    if kind in ("json", "jsonb"):
        return doc(value)
    return value


def encode(kind: str, value: Any, time: Callable[[datetime], Any] = naive) -> Any:
    """A value for a column of type ``kind`` (``time``: how the store keeps a time)."""
    kind = kind.lower()
    if value is None:
        return None
    if isinstance(value, datetime):
        return time(value)
    if kind in ("json", "jsonb") or isinstance(value, dict | list):
        return to_json(value)
    if isinstance(value, bool) and kind != "boolean":
        return int(value)
    return bool(value) if kind == "boolean" and isinstance(value, int) else value


def stats_changed(write: FactsWrite) -> bool:
    """Whether a facts write changes the statistics: the per-player summary rows of a game
    appear (it finished) or go (its finish was undone; a rebuild rewrites them)."""
    return "player_game_facts" in write.replace or bool(write.append.get("player_game_facts"))


#: a fact table's rows in their natural order
_ORDER = {
    "game_facts": "game_id", "turn_facts": "turn_no", "round_facts": "round_no",
    "deckel_moves": "move_no", "half_facts": "half", "player_game_facts": "player_id",
}  # fmt: skip


def named(package: str) -> dict[str, str]:
    """The named statements of ``package``'s ``queries.sql``, by name."""
    return {name: sql.rstrip(";") for name, sql in queries(package).items()}


#: the statements written once (``{least}``/``{greatest}``: the dialect's functions), and
#: the seats of games (``{ids}``: :meth:`RelationalRepository._in`)
SQL = named(__package__)


def _webhook(row: Sequence[Any]) -> Webhook:
    return Webhook(
        int(row[0]), int(row[1]), str(row[2]), tuple(doc(row[3])), str(row[4]), bool(row[5]),
        str(row[6]), moment(row[7]),
    )  # fmt: skip


def _delivery(row: Sequence[Any]) -> Delivery:
    values = list(row)
    values[5] = doc(values[5])
    for index in (8, 11, 12, 13):
        values[index] = moment(values[index])
    return delivery_of(tuple(values))


def outgoing(rows: Iterable[Sequence[Any]]) -> list[Outgoing]:
    """Claimed deliveries (their columns, then url, secret, slug and the entry's game, seq,
    events and time) as the sender's :class:`Outgoing`."""
    claimed = []
    for row in rows:
        delivery = _delivery(row[:15])
        url, secret, slug, game_id, seq, events, at = row[15:]
        event = event_of(delivery, game_id, seq, doc(events), moment(at))
        claimed.append(Outgoing(delivery, str(url), str(secret), str(slug), event))
    return claimed


def stored_events(row: Sequence[Any]) -> StoredEvents:
    return StoredEvents(
        int(row[0]), int(row[1]), int(row[2]), int(row[3]), doc(row[4]), moment(row[5])
    )  # fmt: skip


def _record(row: Sequence[Any], players: tuple[GamePlayer, ...]) -> GameRecord:
    """A row of get_game / list_games as a record."""
    return GameRecord(
        id=row[0], stammtisch_id=row[1], header=doc(row[2]), rules=doc(row[3]),
        options=doc(row[4]), played_at=row[5], played_at_utc=moment(row[6]), year=row[7],
        source=row[8], created_at=moment(row[9]), players=players,
        played_local=moment(row[13]), number=int(row[14] or 0), status=row[10],
        phase=row[11], loser=row[12],
    )  # fmt: skip


class RelationalRepository(Repository):
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

    # the dialect's hooks
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
        return _IDS[self._DIALECT.name], {"ids": to_json(list(ids))}

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
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
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

    # Stammtische and players
    def add_stammtisch(
        self,
        slug: str,
        name: str,
        rules: dict[str, Any],
        private: bool,
        token_hash: str,
        now: datetime,
    ) -> Stammtisch:
        params = {"slug": slug, "name": name, "rules": to_json(rules), "private": private,
                  "token_hash": token_hash, "created_at": self._time(now)}  # fmt: skip
        with self.transaction():
            row = self._one("add_stammtisch", params)
            if row is None:
                raise StorageConflict(f"slug {slug!r} taken")
        return Stammtisch(int(row[0]), slug, name, rules, private, token_hash, now)

    def get_stammtisch(self, slug: str) -> Stammtisch | None:
        r = self._one("get_stammtisch", {"slug": slug})
        if r is None:
            return None
        return Stammtisch(r[0], r[1], r[2], doc(r[3]), bool(r[4]), r[5], moment(r[6]))

    def stammtisch_slugs(self) -> dict[int, str]:
        """Every Stammtisch's slug by its id."""
        return {int(r[0]): str(r[1]) for r in self._all("slugs")}

    def update_stammtisch(
        self, stammtisch_id: int, name: str, rules: dict[str, Any], private: bool
    ) -> None:
        params = {"id": stammtisch_id, "name": name, "rules": to_json(rules), "private": private}
        with self.transaction():
            self._x("update_stammtisch", params)
            self.mark_stats_stale([stammtisch_id])

    def replace_key(self, stammtisch_id: int, token_hash: str) -> None:
        with self.transaction():
            self._x("new_key", {"id": stammtisch_id, "token_hash": token_hash})
            self._x("old_logins", {"id": stammtisch_id, "token_hash": token_hash})

    def add_player(self, stammtisch_id: int, name: str, now: datetime) -> Player:
        params = {"stammtisch_id": stammtisch_id, "name": name, "retired": False,
                  "created_at": self._time(now)}  # fmt: skip
        with self.transaction():
            row = self._one("add_player", params)
        return Player(int(row[0]), stammtisch_id, name, False, now, None)

    def list_players(self, stammtisch_id: int) -> list[Player]:
        return [
            Player(r[0], r[1], r[2], bool(r[3]), moment(r[4]), moment(r[5]))
            for r in self._all("list_players", {"stammtisch_id": stammtisch_id})
        ]

    def update_player(
        self, player_id: int, name: str, retired: bool, retired_at: datetime | None
    ) -> None:
        at = None if retired_at is None else self._time(retired_at)
        with self.transaction():
            self._x("update_player",
                    {"id": player_id, "name": name, "retired": retired, "retired_at": at})  # fmt: skip
            self._x("mark_player", {"id": player_id})

    # games
    def add_game(self, game: NewGame) -> int:
        params = {
            "stammtisch_id": game.stammtisch_id, "header": to_json(game.header),
            "rules": to_json(game.rules), "options": to_json(game.options),
            "played_at": game.played_at, "played_at_utc": self._time(game.played_at_utc),
            "played_local": self._time(game.played_local), "year": game.year,
            "source": game.source, "created_at": self._time(game.created_at),
        }  # fmt: skip
        with self.transaction():
            game_id = int(self._one("add_game", params)[0])
            seats = [{"game_id": game_id, "seat": p.seat, "player_id": p.player_id,
                      "name": p.name, "starter": p.starter} for p in game.players]  # fmt: skip
            self._many("add_seat", seats)
            self._locked.add(game_id)  # new: no other transaction sees it yet
        return game_id

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

    def list_games(
        self,
        stammtisch_id: int,
        *,
        year: int | None,
        status: str | None,
        player_id: int | None,
        offset: int,
        limit: int,
    ) -> tuple[list[GameRecord], int]:
        params: dict[str, Any] = {"stammtisch_id": stammtisch_id, "year": year,
                                  "status": status, "player_id": player_id}  # fmt: skip
        with self.reading():
            (count,) = self._one("count_games", params)
            rows = self._all("list_games", {**params, "offset": offset, "limit": limit})
            return self._records(rows), int(count)

    def game_ids(self) -> list[int]:
        return [int(row[0]) for row in self._all("game_ids")]

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

    def abandon_game(self, game_id: int, at: datetime) -> bool:
        with self.transaction():
            return bool(
                self._x("abandon", {"at": self._time(at), "game_id": game_id}).rowcount == 1
            )

    # the log and its facts
    def load_log(self, game_id: int) -> list[LogEntry]:
        return [
            LogEntry(r[0], r[1], r[2], doc(r[3]), moment(r[4]))
            for r in self._all("load_log", {"game_id": game_id})
        ]

    def _entry(self, entry: LogEntry) -> dict[str, Any]:
        return {"game_id": entry.game_id, "seq": entry.seq, "kind": entry.kind,
                "body": to_json(entry.body), "recorded_at": self._time(entry.recorded_at)}  # fmt: skip

    def append_log(self, entry: LogEntry) -> None:
        with self.transaction():
            self._lock_game(entry.game_id)
            self._x("append", self._entry(entry), f"game {entry.game_id}: entry {entry.seq} exists")

    def append_log_many(self, entries: list[LogEntry]) -> None:
        if not entries:
            return
        with self.transaction():
            for game_id in sorted({e.game_id for e in entries}):
                self._lock_game(game_id)
            self._many("append", [self._entry(e) for e in entries], "log entries taken")

    def append_entry(self, entry: LogEntry, facts: FactsWrite) -> None:
        with self.transaction():
            self.append_log(entry)
            self.write_facts(entry.game_id, facts)

    def _insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            kinds = dict(self._kinds[table])
            columns = FACT_COLUMNS[table]
            values = [{c: encode(kinds[c], row[c], self._time) for c in columns} for row in rows]
            self._many(_fact_insert(table), values)

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

    def read_facts(self, game_id: int) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        with self.reading():
            for table in ("game_facts", *ROW_TABLES):
                columns, kinds = FACT_COLUMNS[table], dict(self._kinds[table])
                sql = (f"SELECT {', '.join(columns)} FROM {table} "  # noqa: S608 - records.py
                       f"WHERE game_id = :id ORDER BY {_ORDER[table]}")  # fmt: skip
                out[table] = [
                    {c: decode(kinds[c], v) for c, v in zip(columns, row, strict=True)}
                    for row in self._all(sql, {"id": game_id})
                ]
        return out

    # responses of idempotent writes
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

    def purge_responses(self, before: datetime) -> None:
        with self.transaction():
            self._x("purge_responses", {"before": self._time(before)})

    # logins of the pub form
    def add_web_session(self, login: WebSession) -> None:
        params = {"id_hash": login.id_hash, "stammtisch_id": login.stammtisch_id,
                  "token_hash": login.token_hash, "expires_at": self._time(login.expires_at)}  # fmt: skip
        with self.transaction():
            self._x("add_login", params)

    def get_web_session(self, id_hash: str) -> WebSession | None:
        row = self._one("get_login", {"id_hash": id_hash})
        if row is None:
            return None  # stored as naive UTC
        return WebSession(str(row[0]), int(row[1]), str(row[2]), moment(row[3]).replace(tzinfo=UTC))

    def delete_web_session(self, id_hash: str) -> None:
        with self.transaction():
            self._x("delete_login", {"id_hash": id_hash})

    def purge_web_sessions(self, before: datetime) -> None:
        with self.transaction():
            self._x("purge_logins", {"before": self._time(before)})

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

    def stammtisch_events(self, stammtisch_id: int, after: int, limit: int) -> list[StoredEvents]:
        params = {"id": stammtisch_id, "after": after, "limit": limit}
        return [stored_events(row) for row in self._all("stammtisch_events", params)]

    def game_events(self, game_id: int, after: int, limit: int) -> list[StoredEvents]:
        params = {"id": game_id, "after": after, "limit": limit}
        return [stored_events(row) for row in self._all("game_events", params)]

    def last_event_position(self, stammtisch_id: int) -> int:
        row = self._one("last_position", {"id": stammtisch_id})
        return int(row[0]) if row else 0

    # the statistics read model
    def _where(self, table: str, ids: list[int] | None) -> tuple[str, dict[str, Any]]:
        """The filter of ``table``'s rows on the Stammtische ``ids`` (None: all)."""
        if ids is None:
            return "", {}
        marks, params = self._in(ids)
        if table == "stammtische":
            return f" WHERE id IN ({marks})", params
        if "stammtisch_id" in {name for name, _ in self._kinds[table]}:
            return f" WHERE stammtisch_id IN ({marks})", params
        return f" WHERE game_id IN (SELECT id FROM games WHERE stammtisch_id IN ({marks}))", params

    def _check(self, table: str, columns: Sequence[str]) -> None:
        known = {name for name, _ in self._kinds.get(table, ())}
        if not known or set(columns) - known:
            raise ValueError(f"no table {table} with columns {columns}")

    def _selects(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> Iterator[tuple[str, Sequence[str], str, dict[str, Any]]]:
        """Each table checked against the schema, its columns, filter and parameters."""
        ids = None if stammtische is None else sorted(int(s) for s in stammtische)
        for table, columns in tables.items():
            self._check(table, columns)
            yield (table, columns, *self._where(table, ids))

    def stats_rows(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> dict[str, list[tuple[Any, ...]]]:
        out: dict[str, list[tuple[Any, ...]]] = {}
        with self.reading():
            for table, columns, where, params in self._selects(tables, stammtische):
                sql = f"SELECT {', '.join(columns)} FROM {table}{where}"  # noqa: S608 - checked
                out[table] = [tuple(r) for r in self._all(sql, params)]
        return out

    def table_rows(self, tables: Mapping[str, Sequence[str]]) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of each table (those columns), one consistent moment: :meth:`stats_rows`
        of every Stammtisch, values as stored."""
        return self.stats_rows(tables, None)

    def stammtisch_ids(self) -> list[int]:
        return [int(r[0]) for r in self._all("stammtisch_ids")]

    def mark_stats_stale(self, stammtisch_ids: Iterable[int]) -> None:
        with self.transaction():
            self._many("mark", [{"id": int(s)} for s in sorted(set(stammtisch_ids))])

    def stale_stats(self) -> dict[int, int]:
        return {int(s): int(v) for s, v in self._all("stale")}

    def write_stats(
        self,
        stammtisch_ids: Collection[int] | None,
        periods: Iterable[tuple[int, int | None, int, str]],
        versions: Mapping[int, int],
    ) -> None:
        now = self._time(datetime.now(UTC))
        with self.transaction():
            if stammtisch_ids is None:
                self._x("DELETE FROM stats_periods")
            else:
                where, params = self._where("stats_periods", sorted(stammtisch_ids))
                self._x(f"DELETE FROM stats_periods{where}", params)  # noqa: S608
            self._many("add_period", [
                {"st": st, "year": year or 0, "games": games, "body": body, "at": now,
                 "version": versions.get(st, 0)} for st, year, games, body in periods
            ])  # fmt: skip
            marks = [{"st": st, "version": v} for st, v in sorted(versions.items())]
            self._many("clear_mark", marks)

    def read_stats(self, stammtisch_id: int, year: int | None) -> str | None:
        row = self._one("read_stats", {"id": stammtisch_id, "year": year or 0})
        return None if row is None else str(row[0])

    def stats_years(self, stammtisch_id: int | None) -> list[tuple[int, int, int]]:
        rows = self._all("stats_years", {"id": stammtisch_id})
        return [(int(s), int(y), int(g)) for s, y, g in rows]

    def stats_computed(self) -> set[int]:
        return {int(r[0]) for r in self._all("stats_computed")}

    # the rate limits' and failed logins' statements (each dialect runs them its own way)
    def _counted(self, name: str, params: dict[str, Any]) -> Any:
        raise NotImplementedError

    def failed_attempts(self, who: str, now: float, outcome: bool | None) -> tuple[int, float]:
        if outcome:
            self._counted("clear_failures", {"who": who})
            return 0, 0.0
        name = "failures" if outcome is None else "note_failure"
        row = self._counted(name, {"who": who, "now": now})
        return (int(row[0]), float(row[1])) if row else (0, 0.0)

    # webhooks and their outbox
    def add_webhook(
        self,
        stammtisch_id: int,
        url: str,
        kinds: Sequence[str],
        secret: str,
        description: str,
        now: datetime,
    ) -> Webhook:
        params = {"st": stammtisch_id, "url": url, "kinds": to_json(list(kinds)),
                  "secret": secret, "active": True, "description": description,
                  "at": self._time(now)}  # fmt: skip
        with self.transaction():
            return _webhook(self._one("add_webhook", params))

    def list_webhooks(self, stammtisch_id: int) -> list[Webhook]:
        return [_webhook(r) for r in self._all("list_webhooks", {"st": stammtisch_id})]

    def get_webhook(self, stammtisch_id: int, webhook_id: int) -> Webhook | None:
        row = self._one("get_webhook", {"id": webhook_id, "st": stammtisch_id})
        return None if row is None else _webhook(row)

    def update_webhook(self, webhook: Webhook) -> None:
        w = webhook
        params = {"url": w.url, "kinds": to_json(list(w.kinds)), "secret": w.secret,
                  "active": w.active, "description": w.description, "id": w.id}  # fmt: skip
        with self.transaction():
            self._x("update_webhook", params)

    def delete_webhook(self, webhook_id: int) -> None:
        with self.transaction():
            self._x("delete_webhook", {"id": webhook_id})

    def enqueue_deliveries(
        self, stammtisch_id: int, position: int, kinds: Sequence[str], at: Any
    ) -> int:
        params = {"st": stammtisch_id, "position": position, "kinds": to_json(list(kinds)),
                  "at": at if not isinstance(at, datetime) else self._time(at)}  # fmt: skip
        return int(self._x("enqueue", params).rowcount)

    def add_ping(self, webhook: Webhook, payload: dict[str, Any], now: datetime) -> Delivery:
        params = {"id": webhook.id, "st": webhook.stammtisch_id, "payload": to_json(payload),
                  "at": self._time(now)}  # fmt: skip
        with self.transaction():
            return _delivery(self._one("add_ping", params))

    def list_deliveries(
        self, webhook_id: int, offset: int, limit: int
    ) -> tuple[list[Delivery], int]:
        with self.reading():
            rows = self._all("deliveries", {"id": webhook_id, "limit": limit, "offset": offset})
            (total,) = self._one("count_deliveries", {"id": webhook_id})
        return [_delivery(r) for r in rows], int(total)

    def get_delivery(self, webhook_id: int, delivery_id: int) -> Delivery | None:
        row = self._one("get_delivery", {"id": delivery_id, "webhook": webhook_id})
        return None if row is None else _delivery(row)

    def redeliver(self, delivery_id: int, now: datetime) -> None:
        with self.transaction():
            self._x("redeliver", {"at": self._time(now), "id": delivery_id})

    def delivery_backlog(self, now: datetime) -> Backlog:
        with self.reading():
            count, oldest, waiting = self._one("backlog", {"now": self._time(now)})
        return Backlog(int(count), moment(oldest), moment(waiting))

    def finish_delivery(
        self,
        delivery_id: int,
        state: str,
        next_attempt_at: datetime,
        status: int | None,
        error: str | None,
        delivered_at: datetime | None,
    ) -> None:
        done = None if delivered_at is None else self._time(delivered_at)
        params = {"state": state, "next": self._time(next_attempt_at), "status": status,
                  "error": error, "delivered": done, "id": delivery_id}  # fmt: skip
        with self.transaction():
            self._x("free", {"id": delivery_id})
            self._x("finish", params)

    def purge_deliveries(self, before: datetime) -> int:
        with self.transaction():
            return int(self._x("purge_deliveries", {"before": self._time(before)}).rowcount)


#: the ids of an ``IN`` list passed as one JSON array, per dialect
_IDS = {
    "sqlite": "SELECT value FROM json_each(:ids)",
    "postgresql": "SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(:ids AS JSON))",
}


@cache
def _fact_insert(table: str) -> str:
    """The ``INSERT`` of a fact table (names from records.py); game_facts holds one row per
    game: it is replaced."""
    columns = FACT_COLUMNS[table]
    sql = (f"INSERT INTO {table} ({', '.join(columns)}) "  # noqa: S608 - names from records.py
           f"VALUES ({', '.join(':' + c for c in columns)})")  # fmt: skip
    if table == "game_facts":
        sets = ", ".join(f"{c} = excluded.{c}" for c in columns[1:])
        sql += f" ON CONFLICT (game_id) DO UPDATE SET {sets}"
    return sql


class RelationalStore:
    """What both SQL stores' process-wide handles share: the repository of each task (a
    thread's or a greenlet's), repositories of their own, the threads beside the requests,
    and closing it all."""

    _pool: Engine
    _kinds: Kinds

    def __init__(self) -> None:
        self.background = Background()
        self._local = threading.local()
        self._repos: weakref.WeakSet[RelationalRepository] = weakref.WeakSet()
        self._lock = threading.Lock()

    @property
    def kinds(self) -> Kinds:
        """Every table's columns with their declared types, read from the schema."""
        return self._kinds

    def _new_repository(self, own: Any = None) -> Any:
        raise NotImplementedError

    def repository(self) -> Any:
        """This task's repository: it takes a pooled connection on its first statement and
        gives it back when closed at the end of a request."""
        repo = getattr(self._local, "repo", None)
        if repo is None or repo.disconnected:
            repo = self._local.repo = self._register(self._new_repository())
        return repo

    def _register(self, repo: Any) -> Any:
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
