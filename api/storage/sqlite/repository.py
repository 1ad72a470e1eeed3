"""The SQLite adapter of :class:`~api.storage.repository.Repository`: one connection, used by
one thread at a time (see :mod:`.store`).

Every write runs in a ``BEGIN IMMEDIATE`` transaction (a use case's ``transaction()`` or the
write method's own; nesting is flat), which takes the database's write lock at its start:
other writers, in this process or another, queue for it (:mod:`.counters`). Reads outside a
transaction see the last commit. The primary key (game_id, seq) of ``game_log`` is the backstop
against two appends of one entry (:class:`StorageConflict`).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Engine
from sqlalchemy.pool import PoolProxiedConnection

from ..engine import take
from ..records import (
    FACT_COLUMNS,
    ROW_TABLES,
    FactsWrite,
    GamePlayer,
    GameRecord,
    LogEntry,
    NewGame,
    Player,
    Stammtisch,
    StoredResponse,
)
from ..repository import (
    Repository,
    StorageUnavailable,
    file_fault,
    stats_changed,
)
from .abandon import AbandonMixin
from .counters import Counters, Writing, probe_write_lock
from .errors import taken as _taken
from .errors import unavailable as _unavailable
from .events import EventsMixin
from .readmodel import ReadModelMixin
from .rows import Kinds, decode, decode_row, encode, moment, timestamp, to_json
from .rows import game_record as _game_record
from .rows import insert_sql as _insert_sql
from .sessions import WebSessionsMixin
from .sql import queries
from .webhooks import WebhooksMixin


class SQLiteRepository(
    ReadModelMixin, WebSessionsMixin, AbandonMixin, EventsMixin, WebhooksMixin, Repository
):
    """Repository on one SQLite connection: ``conn``, its own, or (None) one taken from
    ``pool`` on its first statement and given back at the end of its request (:meth:`close`).
    The rate limit's counters use connections of ``counters`` (see .counters)."""

    def __init__(
        self,
        conn: sqlite3.Connection | None,
        kinds: Kinds,
        writing: Writing | None = None,
        pool: Engine | None = None,
        counters: Engine | None = None,
    ) -> None:
        if conn is None and pool is None:
            raise ValueError("a repository needs a connection or a pool")
        self._own, self._held, self._pool = conn, conn, pool
        self._taken: PoolProxiedConnection | None = None  # the pool's handle of _held
        self._kinds = kinds  # table -> ((column, declared type), …), from the schema
        self._q = queries()
        self._depth = 0
        self._pending: list[Callable[[], None]] | None = None  # on_commit, in a write
        self._writing = writing  # the writers' queue, the WAL's sync (see .counters)
        self.counters = Counters(writing, counters)  # rate limits
        self.disconnected = False

    @property
    def _conn(self) -> sqlite3.Connection:
        """The connection of this request (taken from the pool now if it has none)."""
        conn = self._held
        if conn is None:
            if self.disconnected or self._pool is None:
                raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
            self._taken = take(self._pool)
            conn = self._held = cast(sqlite3.Connection, self._taken.dbapi_connection)
        return conn

    @_conn.setter
    def _conn(self, conn: sqlite3.Connection) -> None:  # the mixins declare an attribute
        self._held = conn

    def close(self) -> None:
        """End of a request: an open transaction is rolled back; a pooled connection goes
        back to the pool, one of its own stays."""
        self._depth = 0
        if not self.disconnected:
            if self._held is not None:
                self._rollback()
            self.counters.settle()  # a rate-limit token no committed write took (.counters)
            self._give_back()

    def _give_back(self) -> None:
        taken, self._taken = self._taken, None
        if taken is not None:
            self._held = None
            taken.close()

    def disconnect(self) -> None:
        """Close the connection for good (a pooled one goes back to the pool)."""
        if not self.disconnected:
            self.disconnected = True
            self._give_back()
            if self._own is not None:
                self._own.close()

    def _run(self, name: str, params: Any = ()) -> sqlite3.Cursor:
        return self._conn.execute(self._q[name], params)

    def _all(self, name: str, params: Any = ()) -> list[Any]:
        return self._run(name, params).fetchall()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        queued = self._writing.queued() if self._writing else contextlib.nullcontext()
        with _unavailable():
            with queued:
                self._depth, self._pending = 1, []
                try:  # BEGIN IMMEDIATE, then the request's rate-limit token (see .counters)
                    self.counters.begin(self._conn, self._pending)
                    yield
                except BaseException:
                    self._depth, self._pending = 0, None
                    self._rollback()
                    raise
                self._depth, (actions, self._pending) = 0, (self._pending, None)
                try:
                    self._conn.execute("COMMIT")
                except BaseException:
                    self._rollback()
                    raise
            if self._writing is not None:
                self._writing.sync()  # outside the queue: the next writer goes on meanwhile
        for action in actions:
            action()

    def on_commit(self, action: Callable[[], None]) -> None:
        if self._pending is None:
            action()
        else:
            self._pending.append(action)

    def game_version(self, game_id: int) -> int:
        row = self._run("game_version", {"game_id": game_id}).fetchone()
        return int(row[0]) if row else 0

    def take_token(self, who: str, now: float, per_second: float, burst: int) -> float:
        with _unavailable():  # a full disk: 503 here already
            return self.counters.take(who, now, per_second, burst)

    def purge_tokens(self, before: float) -> None:
        with _unavailable():
            self.counters.purge(before)

    def settle_tokens(self) -> None:
        self.counters.settle()

    def failed_attempts(self, who: str, now: float, outcome: bool | None) -> tuple[int, float]:
        with _unavailable():
            return self.counters.failed_attempts(who, now, outcome)

    def _rollback(self) -> None:
        # some errors (a full disk, I/O) end the transaction themselves; a rollback that
        # fails as well must not hide the first error
        if self._conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    def probe(self) -> None:
        """Can the database take the write lock, and are its file and folder writable with
        room on the disk? Raises :class:`StorageUnavailable` if not (cheap: no page is
        written, and it never waits for a writer)."""
        if self._depth:
            return
        with _unavailable():
            probe_write_lock(self._conn)
        path = self._conn.execute("PRAGMA database_list").fetchone()[2]
        fault = file_fault(path)
        if fault is not None:
            raise StorageUnavailable(f"SQLite: {fault}")

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Several reads as one consistent moment (a deferred transaction: no lock taken)."""
        if self._depth:
            yield
            return
        self._conn.execute("BEGIN")
        self._depth = 1
        try:
            yield
        finally:
            self._depth = 0
            self._rollback()

    # Stammtische
    def add_stammtisch(
        self,
        slug: str,
        name: str,
        rules: dict[str, Any],
        private: bool,
        token_hash: str,
        now: datetime,
    ) -> Stammtisch:
        params = {
            "slug": slug,
            "name": name,
            "rules": to_json(rules),
            "private": private,
            "token_hash": token_hash,
            "created_at": timestamp(now),
        }
        with self.transaction(), _taken(f"slug {slug!r} taken"):
            (row,) = self._all("insert_stammtisch", params)
        return Stammtisch(row[0], slug, name, rules, private, token_hash, now)

    def get_stammtisch(self, slug: str) -> Stammtisch | None:
        rows = self._all("get_stammtisch", {"slug": slug})
        if not rows:
            return None
        r = rows[0]
        return Stammtisch(
            r[0], r[1], r[2], decode("JSON", r[3]), bool(r[4]), r[5],
            datetime.fromisoformat(r[6]),
        )  # fmt: skip

    def stammtisch_slugs(self) -> dict[int, str]:
        """Every Stammtisch's slug by its id."""
        return {int(r[0]): str(r[1]) for r in self._all("stammtisch_slugs")}

    def update_stammtisch(
        self, stammtisch_id: int, name: str, rules: dict[str, Any], private: bool
    ) -> None:
        params = {"id": stammtisch_id, "name": name, "rules": to_json(rules), "private": private}
        with self.transaction():
            self._run("update_stammtisch", params)
            self.mark_stats_stale([stammtisch_id])

    # Players
    def add_player(self, stammtisch_id: int, name: str, now: datetime) -> Player:
        params = {"stammtisch_id": stammtisch_id, "name": name, "created_at": timestamp(now)}
        with self.transaction():
            (row,) = self._all("insert_player", params)
        return Player(row[0], stammtisch_id, name, False, now, None)

    def list_players(self, stammtisch_id: int) -> list[Player]:
        return [
            Player(r[0], r[1], r[2], bool(r[3]), datetime.fromisoformat(r[4]), moment(r[5]))
            for r in self._all("list_players", {"stammtisch_id": stammtisch_id})
        ]

    def update_player(
        self, player_id: int, name: str, retired: bool, retired_at: datetime | None
    ) -> None:
        params = {
            "id": player_id,
            "name": name,
            "retired": retired,
            "retired_at": None if retired_at is None else timestamp(retired_at),
        }
        with self.transaction():
            self._run("update_player", params)
            self._conn.executemany(
                "INSERT INTO stats_stale (stammtisch_id, version) "
                "SELECT stammtisch_id, 1 FROM players WHERE id = ? "
                "ON CONFLICT (stammtisch_id) DO UPDATE SET version = version + 1",
                [(player_id,)],
            )

    # Games
    def add_game(self, game: NewGame) -> int:
        params = {
            "stammtisch_id": game.stammtisch_id,
            "header": to_json(game.header),
            "rules": to_json(game.rules),
            "options": to_json(game.options),
            "played_at": game.played_at,
            "played_at_utc": timestamp(game.played_at_utc),
            "played_local": timestamp(game.played_local),
            "year": game.year,
            "source": game.source,
            "created_at": timestamp(game.created_at),
        }
        with self.transaction():
            (row,) = self._all("insert_game", params)
            game_id = int(row[0])
            seats = [
                {"game_id": game_id, "seat": p.seat, "player_id": p.player_id,
                 "name": p.name, "starter": p.starter}
                for p in game.players
            ]  # fmt: skip
            self._conn.executemany(self._q["insert_game_player"], seats)
        return game_id

    def _records(self, rows: list[Any]) -> list[GameRecord]:
        if not rows:
            return []
        seats: dict[int, list[GamePlayer]] = {}
        ids = to_json([row[0] for row in rows])
        for game_id, seat, player_id, name, starter in self._all("game_players", [ids]):
            seats.setdefault(game_id, []).append(GamePlayer(seat, player_id, name, bool(starter)))
        return [_game_record(row, tuple(seats.get(row[0], ()))) for row in rows]

    def get_game_by_id(self, game_id: int) -> GameRecord | None:
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
        params: dict[str, Any] = {
            "stammtisch_id": stammtisch_id,
            "year": year,
            "status": status,
            "player_id": player_id,
        }
        with self.reading():
            ((count,),) = self._all("count_games", params)
            rows = self._all("list_games", {**params, "offset": offset, "limit": limit})
            return self._records(rows), int(count)

    def game_ids(self) -> list[int]:
        return [int(row[0]) for row in self._all("game_ids")]

    # The log
    def load_log(self, game_id: int) -> list[LogEntry]:
        return [
            LogEntry(r[0], r[1], r[2], decode("JSON", r[3]), datetime.fromisoformat(r[4]))
            for r in self._all("load_log", {"game_id": game_id})
        ]

    @staticmethod
    def _log_params(entry: LogEntry) -> dict[str, Any]:
        return {
            "game_id": entry.game_id,
            "seq": entry.seq,
            "kind": entry.kind,
            "body": to_json(entry.body),
            "recorded_at": timestamp(entry.recorded_at),
        }

    def append_log(self, entry: LogEntry) -> None:
        message = f"game {entry.game_id}: entry {entry.seq} exists"
        with self.transaction(), _taken(message):
            self._run("append_log", self._log_params(entry))

    def append_log_many(self, entries: list[LogEntry]) -> None:
        if not entries:
            return
        with self.transaction(), _taken("log entries taken"):
            self._conn.executemany(self._q["append_log"], map(self._log_params, entries))

    # Facts
    def _insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            columns = FACT_COLUMNS[table]
            values = [[encode(row[c]) for c in columns] for row in rows]
            self._conn.executemany(_insert_sql(table), values)

    def write_facts(self, game_id: int, write: FactsWrite) -> None:
        with self.transaction():
            if write.game is not None:
                self._insert("game_facts", [write.game])  # INSERT OR REPLACE
            for table, rows in write.replace.items():
                self._run(f"delete_{table}", {"game_id": game_id})
                self._insert(table, rows)
            for table, rows in write.append.items():
                self._insert(table, rows)
            if stats_changed(write):
                self._mark_game(game_id)

    def read_facts(self, game_id: int) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        with self.reading():
            for table in ("game_facts", *ROW_TABLES):
                kinds = self._kinds[table]
                rows = self._all(f"read_{table}", {"game_id": game_id})
                out[table] = [decode_row(kinds, row) for row in rows]
        return out

    def table_rows(self, tables: Mapping[str, Sequence[str]]) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of each table (those columns), one consistent moment: :meth:`stats_rows`
        of every Stammtisch. Values as stored (JSON and timestamps as text, flags 0/1)."""
        return self.stats_rows(tables, None)

    # Responses of idempotent writes
    def get_response(self, stammtisch_id: int, key_hash: str) -> StoredResponse | None:
        rows = self._all("get_response", {"stammtisch_id": stammtisch_id, "key_hash": key_hash})
        if not rows:
            return None
        *r, at = rows[0]
        return StoredResponse(r[0], r[1], r[2], r[3], r[4], bytes(r[5]), datetime.fromisoformat(at))

    def save_response(self, response: StoredResponse) -> None:
        params = {
            "stammtisch_id": response.stammtisch_id,
            "key_hash": response.key_hash,
            "fingerprint": response.fingerprint,
            "status": response.status,
            "content_type": response.content_type,
            "body": response.body,
            "created_at": timestamp(response.created_at),
        }
        with self.transaction(), _taken("idempotency key taken"):
            self._run("insert_response", params)

    def purge_responses(self, before: datetime) -> None:
        with self.transaction():
            self._run("purge_responses", {"before": timestamp(before)})
