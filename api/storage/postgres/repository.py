"""The PostgreSQL adapter of :class:`~api.storage.repository.Repository`: one pooled connection
per request (taken on its first statement, given back by :meth:`PostgresRepository.close`).

Writes run in a transaction (a use case's ``transaction()`` or the write method's own; nesting
is flat) at PostgreSQL's default isolation, READ COMMITTED. Writes to one game go in turn: in a
write transaction the first read of a game (its version, its record) or an append to its log
locks the game's row (``SELECT … FOR UPDATE``) until the commit, so a second writer of the game
— in this process or on another server — waits, then reads the version the first one wrote.
The primary key (game_id, seq) of ``game_log`` stays the backstop: an append of a taken entry
inserts nothing (``ON CONFLICT DO NOTHING``, the transaction stays usable) and raises
:class:`StorageConflict`, as does a taken slug or idempotency key. ``reading()`` is a
REPEATABLE READ, READ ONLY transaction: several reads as one moment, without locks.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, cast

import psycopg
from psycopg.pq import TransactionStatus
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
from ..repository import Repository, StorageConflict, StorageUnavailable, stats_changed
from ..sql import queries as named_queries
from ..sqlite.rows import to_json
from .abandon import AbandonMixin
from .counters import CountersMixin
from .events import EventsMixin
from .readmodel import ReadModelMixin
from .rows import Kinds, encode, mapped, naive
from .sessions import WebSessionsMixin
from .webhooks import WebhooksMixin


def _game_record(row: Sequence[Any], players: tuple[GamePlayer, ...]) -> GameRecord:
    """A row of the queries get_game / list_games as a record."""
    return GameRecord(
        id=row[0], stammtisch_id=row[1], header=row[2], rules=row[3], options=row[4],
        played_at=row[5], played_at_utc=row[6], year=row[7], source=row[8],
        created_at=row[9], players=players, played_local=row[13], status=row[10],
        phase=row[11], loser=row[12], number=int(row[14] or 0),
    )  # fmt: skip


@functools.cache
def _insert_sql(table: str) -> str:
    """``INSERT`` of a fact table (names from records.py); game_facts holds one row per
    game: it is replaced."""
    columns = FACT_COLUMNS[table]
    sql = (
        f"INSERT INTO {table} ({', '.join(columns)}) "  # noqa: S608 - names from records.py
        f"VALUES ({', '.join(['%s'] * len(columns))})"
    )
    if table == "game_facts":
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns[1:])
        sql += f" ON CONFLICT (game_id) DO UPDATE SET {updates}"
    return sql


class PostgresRepository(
    CountersMixin,
    WebSessionsMixin,
    AbandonMixin,
    EventsMixin,
    WebhooksMixin,
    ReadModelMixin,
    Repository,
):
    """Repository on a pooled PostgreSQL connection."""

    def __init__(self, pool: Engine, kinds: Kinds, url: str) -> None:
        self._pool = pool
        self._url = url  # for the statistics' Arrow feed (a connection of its own)
        self._taken: PoolProxiedConnection | None = None  # the pool's handle of _conn
        self._kinds = kinds  # table -> ((column, type), …), from the schema
        self._q = named_queries(__package__)
        self._conn: psycopg.Connection[Any] | None = None
        self._depth = 0
        self._writing = False  # in a write transaction (not a reading())
        self._locked: set[int] = set()  # games whose row this write transaction locked
        self._pending: list[Callable[[], None]] | None = None  # on_commit, in a write
        self.disconnected = False

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None:
            with mapped():
                self._taken = take(self._pool)
            self._conn = cast(psycopg.Connection[Any], self._taken.dbapi_connection)
        return self._conn

    def close(self) -> None:
        """End of a request: an open transaction is rolled back, the connection goes back to
        the pool (which drops it if it broke)."""
        self._depth, self._writing, self._pending = 0, False, None
        conn, self._conn, taken, self._taken = self._conn, None, self._taken, None
        if conn is not None and taken is not None:
            if conn.info.transaction_status != TransactionStatus.IDLE:
                with contextlib.suppress(psycopg.Error):
                    conn.rollback()
            with contextlib.suppress(psycopg.Error):
                taken.close()  # a broken one is dropped

    def disconnect(self) -> None:
        """End for good (the store closes)."""
        if not self.disconnected:
            self.disconnected = True
            with contextlib.suppress(Exception):
                self.close()

    def _run(self, name: str, params: Any = None) -> psycopg.Cursor[Any]:
        return self._sql(self._q[name], params)

    def _sql(self, sql: str, params: Any = None) -> psycopg.Cursor[Any]:
        with mapped():
            return self._connection().execute(sql, params)

    def _all(self, name: str, params: Any = None) -> list[Any]:
        with mapped():
            return self._run(name, params).fetchall()

    def _many(self, sql: str, rows: Sequence[Any]) -> None:
        if rows:
            with mapped():
                self._connection().cursor().executemany(sql, rows)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self._sql("BEGIN")
        self._depth, self._writing, self._pending, self._locked = 1, True, [], set()
        try:
            yield
        except BaseException:
            self._depth, self._writing, self._pending = 0, False, None
            self._rollback()
            raise
        self._depth, self._writing, (actions, self._pending) = 0, False, (self._pending, None)
        try:
            self._sql("COMMIT")
        except BaseException:
            self._rollback()
            raise
        for action in actions:
            action()

    def on_commit(self, action: Callable[[], None]) -> None:
        if self._pending is None:
            action()
        else:
            self._pending.append(action)

    def _rollback(self) -> None:
        conn = self._conn
        if conn is not None and conn.info.transaction_status != TransactionStatus.IDLE:
            with contextlib.suppress(psycopg.Error):
                conn.execute("ROLLBACK")

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Several reads as one consistent moment (REPEATABLE READ, READ ONLY: no lock)."""
        if self._depth:
            yield
            return
        self._sql("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        self._depth = 1
        try:
            yield
        finally:
            self._depth = 0
            self._rollback()

    def probe(self) -> None:
        """Can the server take writes now? Raises :class:`StorageUnavailable` if not (one
        cheap query: a standby, or a server refusing writes, is read-only)."""
        if self._depth:
            return
        self._connection()  # a server that is down: said at once (a new connection fails)
        row = self._sql("SELECT pg_is_in_recovery(), current_setting('transaction_read_only')")
        recovery, read_only = row.fetchone() or (False, "off")
        if recovery or read_only == "on":
            raise StorageUnavailable("PostgreSQL: the server is read-only")

    def _lock_game(self, game_id: int) -> None:
        """Lock the game's row until the write transaction ends (once per transaction)."""
        if self._writing and game_id not in self._locked:
            self._run("lock_game", {"game_id": game_id})
            self._locked.add(game_id)

    def game_version(self, game_id: int) -> int:
        # the lock first, the version in a statement of its own: at READ COMMITTED each
        # statement reads what was committed when it started, so after the wait it sees the
        # version the previous writer committed
        self._lock_game(game_id)
        row = self._run("game_version", {"game_id": game_id}).fetchone()
        return int(row[0]) if row else 0

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
            "slug": slug, "name": name, "rules": to_json(rules), "private": private,
            "token_hash": token_hash, "created_at": naive(now),
        }  # fmt: skip
        with self.transaction():
            rows = self._all("insert_stammtisch", params)
            if not rows:
                raise StorageConflict(f"slug {slug!r} taken")
        return Stammtisch(int(rows[0][0]), slug, name, rules, private, token_hash, now)

    def get_stammtisch(self, slug: str) -> Stammtisch | None:
        rows = self._all("get_stammtisch", {"slug": slug})
        if not rows:
            return None
        r = rows[0]
        return Stammtisch(r[0], r[1], r[2], r[3], bool(r[4]), r[5], r[6])

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
        params = {"stammtisch_id": stammtisch_id, "name": name, "created_at": naive(now)}
        with self.transaction():
            (row,) = self._all("insert_player", params)
        return Player(int(row[0]), stammtisch_id, name, False, now, None)

    def list_players(self, stammtisch_id: int) -> list[Player]:
        return [
            Player(r[0], r[1], r[2], bool(r[3]), r[4], r[5])
            for r in self._all("list_players", {"stammtisch_id": stammtisch_id})
        ]

    def update_player(
        self, player_id: int, name: str, retired: bool, retired_at: datetime | None
    ) -> None:
        params = {
            "id": player_id, "name": name, "retired": retired,
            "retired_at": None if retired_at is None else naive(retired_at),
        }  # fmt: skip
        with self.transaction():
            self._run("update_player", params)
            self._run("mark_player", {"id": player_id})

    # Games
    def add_game(self, game: NewGame) -> int:
        params = {
            "stammtisch_id": game.stammtisch_id, "header": to_json(game.header),
            "rules": to_json(game.rules), "options": to_json(game.options),
            "played_at": game.played_at, "played_at_utc": naive(game.played_at_utc),
            "played_local": naive(game.played_local), "year": game.year,
            "source": game.source, "created_at": naive(game.created_at),
        }  # fmt: skip
        with self.transaction():
            (row,) = self._all("insert_game", params)
            game_id = int(row[0])
            seats = [
                {"game_id": game_id, "seat": p.seat, "player_id": p.player_id,
                 "name": p.name, "starter": p.starter}
                for p in game.players
            ]  # fmt: skip
            self._many(self._q["insert_game_player"], seats)
            self._locked.add(game_id)  # new: no other transaction sees it yet
        return game_id

    def _records(self, rows: list[Any]) -> list[GameRecord]:
        if not rows:
            return []
        seats: dict[int, list[GamePlayer]] = {}
        ids = [int(row[0]) for row in rows]
        for game_id, seat, player_id, name, starter in self._all("game_players", {"game_ids": ids}):
            seats.setdefault(game_id, []).append(GamePlayer(seat, player_id, name, bool(starter)))
        return [_game_record(row, tuple(seats.get(row[0], ()))) for row in rows]

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
        params: dict[str, Any] = {
            "stammtisch_id": stammtisch_id, "year": year, "status": status,
            "player_id": player_id,
        }  # fmt: skip
        with self.reading():
            ((count,),) = self._all("count_games", params)
            rows = self._all("list_games", {**params, "offset": offset, "limit": limit})
            return self._records(rows), int(count)

    def game_ids(self) -> list[int]:
        return [int(row[0]) for row in self._all("game_ids")]

    # The log
    def load_log(self, game_id: int) -> list[LogEntry]:
        return [
            LogEntry(r[0], r[1], r[2], r[3], r[4])
            for r in self._all("load_log", {"game_id": game_id})
        ]

    @staticmethod
    def _log_params(entry: LogEntry) -> dict[str, Any]:
        return {
            "game_id": entry.game_id, "seq": entry.seq, "kind": entry.kind,
            "body": to_json(entry.body), "recorded_at": naive(entry.recorded_at),
        }  # fmt: skip

    def append_log(self, entry: LogEntry) -> None:
        with self.transaction():
            self._lock_game(entry.game_id)
            if not self._all("append_log", self._log_params(entry)):
                raise StorageConflict(f"game {entry.game_id}: entry {entry.seq} exists")

    def append_log_many(self, entries: list[LogEntry]) -> None:
        if not entries:
            return
        with self.transaction(), mapped("log entries taken"):
            for game_id in sorted({e.game_id for e in entries}):
                self._lock_game(game_id)
            self._many(self._q["append_log_many"], [self._log_params(e) for e in entries])

    # Facts
    def _insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        if rows:
            kinds = dict(self._kinds[table])
            columns = FACT_COLUMNS[table]
            values = [[encode(kinds[c], row[c]) for c in columns] for row in rows]
            self._many(_insert_sql(table), values)

    def write_facts(self, game_id: int, write: FactsWrite) -> None:
        with self.transaction():
            if write.game is not None:
                self._insert("game_facts", [write.game])  # an upsert
            for table, rows in write.replace.items():
                if table not in FACT_COLUMNS:
                    raise ValueError(f"no fact table {table}")
                self._sql(f"DELETE FROM {table} WHERE game_id = %s", [game_id])  # noqa: S608
                self._insert(table, rows)
            for table, rows in write.append.items():
                self._insert(table, rows)
            if stats_changed(write):
                self._run("mark_game", {"game_id": game_id})

    def read_facts(self, game_id: int) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        order = {
            "game_facts": "game_id", "turn_facts": "turn_no", "round_facts": "round_no",
            "deckel_moves": "move_no", "half_facts": "half", "player_game_facts": "player_id",
        }  # fmt: skip
        with self.reading():
            for table in ("game_facts", *ROW_TABLES):
                columns = FACT_COLUMNS[table]
                sql = (
                    f"SELECT {', '.join(columns)} FROM {table} "  # noqa: S608 - records.py
                    f"WHERE game_id = %s ORDER BY {order[table]}"
                )
                rows = self._sql(sql, [game_id]).fetchall()
                out[table] = [dict(zip(columns, row, strict=True)) for row in rows]
        return out

    # Responses of idempotent writes
    def get_response(self, stammtisch_id: int, key_hash: str) -> StoredResponse | None:
        """In a write transaction the key is locked first (until the commit): a request with
        the same key, on any server, waits here and then finds this one's stored answer."""
        if self._writing:
            name = hashlib.blake2b(f"{stammtisch_id}:{key_hash}".encode(), digest_size=8)
            lock = int.from_bytes(name.digest(), signed=True)
            self._sql("SELECT pg_advisory_xact_lock(%s)", [lock])
        rows = self._all("get_response", {"stammtisch_id": stammtisch_id, "key_hash": key_hash})
        if not rows:
            return None
        r = rows[0]
        return StoredResponse(r[0], r[1], r[2], r[3], r[4], bytes(r[5]), r[6])

    def save_response(self, response: StoredResponse) -> None:
        params = {
            "stammtisch_id": response.stammtisch_id, "key_hash": response.key_hash,
            "fingerprint": response.fingerprint, "status": response.status,
            "content_type": response.content_type, "body": response.body,
            "created_at": naive(response.created_at),
        }  # fmt: skip
        with self.transaction():
            if not self._all("insert_response", params):
                raise StorageConflict("idempotency key taken")

    def purge_responses(self, before: datetime) -> None:
        with self.transaction():
            self._run("purge_responses", {"before": naive(before)})
