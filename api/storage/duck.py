"""The DuckDB adapter: one connection per process, one cursor per thread.

:class:`DuckDBStore` opens (and creates) the database file, applies pending migrations in
version order, each in its own transaction, and refuses a file written by a newer version.
:meth:`DuckDBStore.repository` hands out the calling thread's :class:`DuckDBRepository` (its
own cursor, reused by the thread's later requests); the Flask app keeps it on ``g``.

Recording goes through :class:`GroupCommitter`: every DuckDB statement costs about a
millisecond or two on a small machine whatever it carries, so the log entries and fact rows of
turns that arrive together are written with one multi-row INSERT per table in one transaction.
A few rows go as ``INSERT … VALUES`` with bound parameters, more as one JSON parameter read
with the table's column types (``from_json``). The writer's session skips DuckDB's optimizer,
which has nothing to improve in an append.
"""

from __future__ import annotations

import functools
import json
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

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
    StoredResponse,
)
from .repository import Repository, StorageConflict
from .sql import migrations, queries


class MigrationError(RuntimeError):
    """The database cannot be brought to this version's schema."""


class DuckDBStore:
    """The process-wide connection to one DuckDB file (or ``":memory:"``)."""

    def __init__(self, path: str | Path, threads: int | None = None, writers: int = 2) -> None:
        """``threads``: DuckDB's worker threads (None: one per core, for bulk work);
        ``writers``: threads of the group commit, each with its own cursor."""
        path = str(path)
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        config: dict[str, Any] = {"autoinstall_known_extensions": False}
        if threads:
            config["threads"] = threads
        self._conn = duckdb.connect(path, config=config)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        try:
            self.migrate()
        except BaseException:
            self._conn.close()
            raise
        self._specs = self._row_specs()
        self._committer = GroupCommitter(
            [
                DuckDBRepository(self._conn.cursor(), self._specs, None, plain=True)
                for _ in range(max(1, writers))
            ]
        )

    def migrate(self) -> list[int]:
        """Apply every pending migration; returns the versions applied now."""
        conn = self._conn
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
        )
        done = {row[0] for row in conn.execute("SELECT version FROM schema_migrations").fetchall()}
        known = migrations()
        newest = max((v for v, _, _ in known), default=0)
        if done and max(done) > newest:
            raise MigrationError(
                f"database {self.path} has schema version {max(done)}, newer than this "
                f"program's {newest}: refusing to touch it"
            )
        applied = []
        for version, name, sql in known:
            if version in done:
                continue
            conn.begin()
            try:
                conn.execute(sql)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, now()::TIMESTAMP)",
                    [version, name],
                )
                conn.commit()
            except Exception:
                conn.rollback()
                raise
            applied.append(version)
        return applied

    def repository(self) -> DuckDBRepository:
        """This thread's repository: one cursor per thread, reused across its requests
        (a cursor must not be shared between threads; opening one per request costs time)."""
        repo: DuckDBRepository | None = getattr(self._local, "repo", None)
        if repo is None:
            with self._lock:  # cursor() on one connection from many threads
                cursor = self._conn.cursor()
            repo = DuckDBRepository(cursor, self._specs, self._committer)
            self._local.repo = repo
            self._cursors.append(cursor)
        return repo

    def _row_specs(self) -> dict[str, str]:
        """Per fact table, the JSON structure ``[{column: type}]`` its rows are read with."""
        specs = {}
        for table in ("game_log", "game_players", *FACT_COLUMNS):
            rows = self._conn.execute(queries()["column_types"], [table]).fetchall()
            specs[table] = _json([{name: kind for name, kind in rows}])
        return specs

    def close(self) -> None:
        self._committer.stop()
        for cursor in self._cursors:
            cursor.close()
        self._conn.close()


class _Pending:
    __slots__ = ("entry", "facts", "done", "error")

    def __init__(self, entry: LogEntry, facts: FactsWrite) -> None:
        self.entry = entry
        self.facts = facts
        self.done = threading.Event()
        self.error: BaseException | None = None


class GroupCommitter:
    """Group commit: writer threads turn the log entries that arrive together (from different
    games) into one transaction with one multi-row INSERT per table.

    Every DuckDB statement costs about a millisecond here, whatever it carries, so eight
    concurrent turns cost little more than one. A caller returns only after the commit of its
    entry (acknowledged means durable). When a batch fails, its entries are retried one by one,
    so an entry fails only for its own reason. When entries arrive together (several clients),
    the writer waits ``delay`` seconds for more before it commits (PostgreSQL's
    ``commit_delay``); a lone client never waits.

    Each writer (one per repository, each its own cursor) takes the next batch while another
    one is still writing: DuckDB runs the two transactions side by side on two cores. They
    never touch the same game: a game's next entry is only sent after its last one committed
    (the service's per-game lock), and appends of different games do not conflict."""

    def __init__(
        self, repos: list[DuckDBRepository], max_batch: int = 64, delay: float = 0.002
    ) -> None:
        self._repos = repos
        self._max = max_batch
        self._delay = delay
        self._queue: queue.SimpleQueue[_Pending | None] = queue.SimpleQueue()
        self._threads = [
            threading.Thread(
                target=self._run, args=(repo,), name=f"duckdb-group-commit-{n}", daemon=True
            )
            for n, repo in enumerate(repos)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, entry: LogEntry, facts: FactsWrite) -> None:
        pending = _Pending(entry, facts)
        self._queue.put(pending)
        pending.done.wait()
        if pending.error is not None:
            raise pending.error

    def stop(self) -> None:
        """Each writer commits what it holds and ends at the first stop sentinel it takes."""
        alive = [t for t in self._threads if t.is_alive()]
        for _ in alive:
            self._queue.put(None)
        for thread in alive:
            thread.join(timeout=10)

    def _run(self, repo: DuckDBRepository) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stop = self._drain(batch)
            if not stop and len(batch) > 1 and self._delay:
                # others are writing too: wait a moment for more (PostgreSQL's commit_delay)
                time.sleep(self._delay)
                stop = self._drain(batch)
            self._commit(repo, batch)
            if stop:
                return

    def _drain(self, batch: list[_Pending]) -> bool:
        """Add what is queued to the batch; True when the stop sentinel came."""
        while len(batch) < self._max:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return False
            if item is None:
                return True
            batch.append(item)
        return False

    def _commit(self, repo: DuckDBRepository, batch: list[_Pending]) -> None:
        try:
            repo.write_batch([(p.entry, p.facts) for p in batch])
        except BaseException as exc:  # handed to the waiting request
            if len(batch) == 1:
                batch[0].error = exc
            else:
                for p in batch:
                    self._commit(repo, [p])
                return
        for p in batch:
            p.done.set()


def _log_row(entry: LogEntry) -> dict[str, Any]:
    return {
        "game_id": entry.game_id,
        "seq": entry.seq,
        "kind": entry.kind,
        "body": entry.body,
        "recorded_at": entry.recorded_at,
    }


#: up to this many rows an insert binds every value; beyond, one JSON parameter is cheaper
_VALUES_ROWS = 4


@functools.cache
def _columns(spec: str) -> tuple[str, ...]:
    """The column names of a table, in order, from its row spec ``[{column: type}]``."""
    return tuple(json.loads(spec)[0])


@functools.cache
def _values_insert(table: str, columns: tuple[str, ...], rows: int) -> str:
    """``INSERT INTO table (columns) VALUES (?, …), …``: names from the fixed schema, every
    value a bound parameter. game_facts holds one row per game: it is replaced."""
    verb = "INSERT OR REPLACE" if table == "game_facts" else "INSERT"
    one = "(" + ", ".join("?" * len(columns)) + ")"
    return f"{verb} INTO {table} ({', '.join(columns)}) VALUES {', '.join([one] * rows)}"


def _param(value: Any) -> Any:
    """JSON columns take their document as text."""
    return _json(value) if isinstance(value, dict | list) else value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_iso)


def _iso(value: Any) -> str:
    """Timestamps in JSON rows (``from_json`` reads them back with the column's type)."""
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


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
        self._q = queries()
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
        self._cur.begin()
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self._cur.rollback()
            raise
        self._depth = 0
        try:
            self._cur.commit()
        except duckdb.TransactionException as exc:
            raise StorageConflict(str(exc)) from exc

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
                    "rules": _json(rules),
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
            {"id": stammtisch_id, "name": name, "rules": _json(rules), "private": private},
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
                "header": _json(game.header),
                "rules": _json(game.rules),
                "options": _json(game.options),
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
                    "body": _json(entry.body),
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
            self._insert("game_log", [_log_row(e) for e in entries])
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
        if len(rows) > _VALUES_ROWS:
            self._cur.execute(self._q[f"insert_{table}"], [_json(rows), self._specs[table]])
            return
        columns = _columns(self._specs[table])
        params = [_param(row[c]) for row in rows for c in columns]
        self._cur.execute(_values_insert(table, columns, len(rows)), params)

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
        return None if found is None else StoredResponse(*found[:5], bytes(found[5]), found[6])

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
