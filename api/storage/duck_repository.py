"""The DuckDB repository: one per thread, on a cursor of its own.

Recording goes through the store's :class:`~api.storage.group_commit.GroupCommitter`. A few
rows go as ``INSERT … VALUES`` with bound parameters, more as one JSON parameter read with the
table's column types (``from_json``). The writer's session skips DuckDB's optimizer, which has
nothing to improve in an append.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from .duck_rows import VALUES_ROWS, log_row, param, spec_columns, to_json, values_insert
from .group_commit import GroupCommitter
from .records import (
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
from .repository import (
    Repository,
    StorageConflict,
    StorageUnavailable,
    file_fault,
    unavailable_cause,
)
from .sql import queries

#: DuckDB's errors that mean "cannot write or read now" (with a cause in their message)
_FAULTS = (
    duckdb.IOException,
    duckdb.FatalException,
    duckdb.PermissionException,
    duckdb.TransactionException,
    duckdb.InvalidInputException,
)


@contextmanager
def _unavailable() -> Iterator[None]:
    """A full disk, a read-only file, an I/O error or an invalidated database becomes
    :class:`StorageUnavailable` (at the transaction's edge, not per statement)."""
    try:
        yield
    except (duckdb.IOException, duckdb.FatalException) as exc:
        raise StorageUnavailable(f"DuckDB: {exc}") from exc
    except _FAULTS as exc:
        cause = unavailable_cause(exc)
        if cause is None:
            raise
        raise StorageUnavailable(f"DuckDB: {cause}") from exc


class DuckDBRepository(Repository):
    """Repository on one DuckDB cursor (not shared between threads)."""

    def __init__(
        self,
        cursor: duckdb.DuckDBPyConnection,
        specs: dict[str, str],
        committer: GroupCommitter | None,
        plain: bool = False,
    ) -> None:
        """``plain``: the cursor of the group commit, whose statements append a few rows.
        DuckDB's optimizer has nothing to improve in an ``INSERT … VALUES`` but costs about
        a third of its time here, so this cursor's session runs without it, except for the
        statements that filter (see :meth:`_planned`)."""
        self._cur = cursor
        self._q = queries(__package__)
        self._depth = 0
        self._specs = specs  # table -> JSON structure of its rows, for from_json
        self._committer = committer
        self._plain = plain
        self._optimizing = not plain
        if plain:
            self._plain_again()

    def close(self) -> None:
        """Per-request release: the thread keeps its cursor (the store closes it)."""

    def _run(self, name: str, params: Any = None) -> duckdb.DuckDBPyConnection:
        return self._cur.execute(self._q[name], params)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        with _unavailable():
            self._cur.begin()
            self._depth = 1
            try:
                yield
            except BaseException:
                self._depth = 0
                with contextlib.suppress(duckdb.Error):  # keep the first error
                    self._cur.rollback()
                raise
            self._depth = 0
            try:
                self._cur.commit()
            except duckdb.Error as exc:
                with contextlib.suppress(duckdb.Error):  # if the failed commit left it open
                    self._cur.rollback()
                if not isinstance(exc, duckdb.TransactionException) or unavailable_cause(exc):
                    raise  # a failed write of the commit, not a lost race
                raise StorageConflict(str(exc)) from exc

    def probe(self) -> None:
        """A read on this cursor (fails when DuckDB has invalidated the database after a
        failed write: it then refuses everything until restarted); the file, its folder and
        the disk as :func:`~api.storage.repository.file_fault` sees them."""
        if self._depth:
            return
        with _unavailable():
            self._cur.execute("SELECT 1").fetchall()
            rows = self._cur.execute("PRAGMA database_list").fetchall()
        fault = file_fault(str(rows[0][2] or "")) if rows else None
        if fault is not None:
            raise StorageUnavailable(f"DuckDB: {fault}")

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
        try:
            row = self._run(
                "insert_stammtisch",
                {
                    "slug": slug,
                    "name": name,
                    "rules": to_json(rules),
                    "private": private,
                    "token_hash": token_hash,
                    "created_at": now,
                },
            ).fetchone()
        except duckdb.ConstraintException as exc:
            raise StorageConflict(f"slug {slug!r} taken") from exc
        assert row is not None
        return Stammtisch(row[0], slug, name, rules, private, token_hash, now)

    def get_stammtisch(self, slug: str) -> Stammtisch | None:
        row = self._run("get_stammtisch", {"slug": slug}).fetchone()
        if row is None:
            return None
        return Stammtisch(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6])

    def update_stammtisch(
        self, stammtisch_id: int, name: str, rules: dict[str, Any], private: bool
    ) -> None:
        self._run(
            "update_stammtisch",
            {"id": stammtisch_id, "name": name, "rules": to_json(rules), "private": private},
        )

    # Players
    def add_player(self, stammtisch_id: int, name: str, now: datetime) -> Player:
        row = self._run(
            "insert_player", {"stammtisch_id": stammtisch_id, "name": name, "created_at": now}
        ).fetchone()
        assert row is not None
        return Player(row[0], stammtisch_id, name, False, now, None)

    def list_players(self, stammtisch_id: int) -> list[Player]:
        rows = self._run("list_players", {"stammtisch_id": stammtisch_id}).fetchall()
        return [Player(*row) for row in rows]

    def update_player(
        self, player_id: int, name: str, retired: bool, retired_at: datetime | None
    ) -> None:
        self._run(
            "update_player",
            {"id": player_id, "name": name, "retired": retired, "retired_at": retired_at},
        )

    # Games
    def add_game(self, game: NewGame) -> int:
        row = self._run(
            "insert_game",
            {
                "stammtisch_id": game.stammtisch_id,
                "header": to_json(game.header),
                "rules": to_json(game.rules),
                "options": to_json(game.options),
                "played_at": game.played_at,
                "played_at_utc": game.played_at_utc,
                "played_local": game.played_local,
                "year": game.year,
                "source": game.source,
                "created_at": game.created_at,
            },
        ).fetchone()
        assert row is not None
        game_id = int(row[0])
        self._insert(
            "game_players",
            [
                {
                    "game_id": game_id,
                    "seat": p.seat,
                    "player_id": p.player_id,
                    "name": p.name,
                    "starter": p.starter,
                }
                for p in game.players
            ],
        )
        return game_id

    def _records(self, rows: list[tuple[Any, ...]]) -> list[GameRecord]:
        if not rows:
            return []
        seats: dict[int, list[GamePlayer]] = {}
        for game_id, seat, player_id, name, starter in self._run(
            "game_players", {"game_ids": [row[0] for row in rows]}
        ).fetchall():
            seats.setdefault(game_id, []).append(GamePlayer(seat, player_id, name, starter))
        return [
            GameRecord(
                id=row[0],
                stammtisch_id=row[1],
                header=json.loads(row[2]),
                rules=json.loads(row[3]),
                options=json.loads(row[4]),
                played_at=row[5],
                played_at_utc=row[6],
                year=row[7],
                source=row[8],
                created_at=row[9],
                players=tuple(seats.get(row[0], ())),
                played_local=row[13],
                status=row[10],
                phase=row[11],
                loser=row[12],
            )
            for row in rows
        ]

    def get_game_by_id(self, game_id: int) -> GameRecord | None:
        found = self._records(self._run("get_game", {"game_id": game_id}).fetchall())
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
        count = self._run("count_games", params).fetchone()
        rows = self._run("list_games", {**params, "offset": offset, "limit": limit}).fetchall()
        return self._records(rows), int(count[0]) if count else 0

    def game_ids(self) -> list[int]:
        return [row[0] for row in self._run("game_ids").fetchall()]

    # Backups (api/domain/backup.py)
    def export_database(self, folder: Path) -> None:
        """DuckDB's ``EXPORT DATABASE`` into ``folder`` (``schema.sql``, ``load.sql``, one
        Parquet file per table), inside the current transaction: one consistent moment."""
        path = str(folder).replace("'", "''")  # EXPORT takes no bound parameter
        self._cur.execute(f"EXPORT DATABASE '{path}' (FORMAT parquet)")

    def stammtisch_slugs(self) -> dict[int, str]:
        """Every Stammtisch's slug by its id."""
        return {int(row[0]): str(row[1]) for row in self._run("stammtisch_slugs").fetchall()}

    # The log
    def load_log(self, game_id: int) -> list[LogEntry]:
        rows = self._run("load_log", {"game_id": game_id}).fetchall()
        return [LogEntry(r[0], r[1], r[2], json.loads(r[3]), r[4]) for r in rows]

    def append_log(self, entry: LogEntry) -> None:
        try:
            self._run(
                "append_log",
                {
                    "game_id": entry.game_id,
                    "seq": entry.seq,
                    "kind": entry.kind,
                    "body": to_json(entry.body),
                    "recorded_at": entry.recorded_at,
                },
            )
        except duckdb.ConstraintException as exc:
            raise StorageConflict(f"game {entry.game_id}: entry {entry.seq} exists") from exc

    def append_entry(self, entry: LogEntry, facts: FactsWrite) -> None:
        # inside an open transaction (an idempotent write) the entry commits with it
        if self._committer is None or self._depth:
            self.write_batch([(entry, facts)])
        else:
            self._committer.submit(entry, facts)

    def append_log_many(self, entries: list[LogEntry]) -> None:
        try:
            self._insert("game_log", [log_row(e) for e in entries])
        except duckdb.ConstraintException as exc:
            raise StorageConflict(f"log entries taken: {exc}") from exc

    def write_batch(self, items: list[tuple[LogEntry, FactsWrite]]) -> None:
        """Several games' entries and facts in one transaction, one INSERT per table."""
        appends: dict[str, list[dict[str, Any]]] = {}
        games = []
        for _entry, write in items:
            if write.game is not None:
                games.append(write.game)
            for table, rows in write.append.items():
                appends.setdefault(table, []).extend(rows)
        if self._plain and self._optimizing:
            self._plain_again()
        with self.transaction():
            self.append_log_many([e for e, _ in items])
            self._insert("game_facts", games)
            for entry, write in items:
                if write.replace:  # an undo or a rebuild: the game's rows are rewritten
                    with self._planned():
                        for table, rows in write.replace.items():
                            self._run(f"delete_{table}", {"game_id": entry.game_id})
                            self._insert(table, rows)
            for table, rows in appends.items():
                self._insert(table, rows)

    # Facts
    def _insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        """Append rows (dicts by column name). A few rows, as one entry brings them, go as one
        INSERT … VALUES with bound parameters (≈ 1 ms here); many rows (imports, rebuilds) as
        one JSON parameter that DuckDB unnests (its planning costs ≈ 5 ms, then scales)."""
        if not rows:
            return
        if len(rows) > VALUES_ROWS:
            self._cur.execute(self._q[f"insert_{table}"], [to_json(rows), self._specs[table]])
            return
        columns = spec_columns(self._specs[table])
        params = [param(row[c]) for row in rows for c in columns]
        self._cur.execute(values_insert(table, columns, len(rows)), params)

    def write_facts(self, game_id: int, write: FactsWrite) -> None:
        with self.transaction():
            if write.game is not None:
                self._insert("game_facts", [write.game])  # INSERT OR REPLACE
            for table, rows in write.replace.items():
                self._run(f"delete_{table}", {"game_id": game_id})
                self._insert(table, rows)
            for table, rows in write.append.items():
                self._insert(table, rows)

    @contextmanager
    def _planned(self) -> Iterator[None]:
        """Statements that filter (the deletes of a rewrite) run with the optimizer, which
        pushes the filter into the scan, also on the plain cursor of the group commit."""
        if not self._plain:
            yield
            return
        self._cur.execute("SET SESSION enable_optimizer = true")
        self._optimizing = True
        try:
            yield
        finally:
            self._plain_again()

    def _plain_again(self) -> None:
        """Back to the plain session; in a failed transaction that has to wait for the next
        write (no statement runs before the rollback)."""
        try:
            self._cur.execute("SET SESSION enable_optimizer = false")
            self._optimizing = False
        except duckdb.Error:
            pass

    def read_facts(self, game_id: int) -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for table in ("game_facts", *ROW_TABLES):
            cur = self._run(f"read_{table}", {"game_id": game_id})
            names = [d[0] for d in cur.description]
            out[table] = [
                {n: (json.loads(v) if n == "data" else v) for n, v in zip(names, row, strict=True)}
                for row in cur.fetchall()
            ]
        return out

    # Responses of idempotent writes
    def get_response(self, stammtisch_id: int, key_hash: str) -> StoredResponse | None:
        row = self._run("get_response", {"stammtisch_id": stammtisch_id, "key_hash": key_hash})
        found = row.fetchone()
        if found is None:
            return None
        stammtisch_id, key_hash, fingerprint, status, content_type, body, created_at = found
        return StoredResponse(
            stammtisch_id, key_hash, fingerprint, status, content_type, bytes(body), created_at
        )

    def save_response(self, response: StoredResponse) -> None:
        try:
            self._run(
                "insert_response",
                [
                    response.stammtisch_id,
                    response.key_hash,
                    response.fingerprint,
                    response.status,
                    response.content_type,
                    response.body,
                    response.created_at,
                ],
            )
        except duckdb.ConstraintException as exc:
            raise StorageConflict("idempotency key taken") from exc

    def purge_responses(self, before: datetime) -> None:
        self._run("purge_responses", {"before": before})
