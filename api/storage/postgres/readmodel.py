"""The statistics read model on PostgreSQL: the port methods of
:class:`~api.storage.repository.Repository` for ``stats_periods`` and ``stats_stale``
(migration 0006), mixed into :class:`~.repository.PostgresRepository`.

The one-refresher lock is a session-level advisory lock of PostgreSQL, held on a pooled
connection of its own for the refresh: it holds across every thread and process of every
server on the database, and the server drops it when its holder's connection ends.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, cast

import psycopg
from sqlalchemy import Engine

from ..engine import take
from ..repository import StorageUnavailable
from .rows import Kinds, mapped

#: the advisory lock of the statistics refresh (any constant bigint, the same everywhere)
STATS_LOCK = 0x5C40C6E8

_MARK = (
    "INSERT INTO stats_stale (stammtisch_id, version) VALUES (%s, 1) "
    "ON CONFLICT (stammtisch_id) DO UPDATE SET version = stats_stale.version + 1"
)


class ReadModelMixin:
    """Needs the repository's pool, schema kinds, ``transaction``, ``reading`` and ``_sql``."""

    _pool: Engine
    _url: str
    _kinds: Kinds

    def transaction(self) -> Any: ...  # provided by PostgresRepository

    def reading(self) -> Any: ...  # provided by PostgresRepository

    def _sql(self, sql: str, params: Any = None) -> Any: ...  # provided by PostgresRepository

    def _many(self, sql: str, rows: Sequence[Any]) -> Any: ...  # provided by PostgresRepository

    def _where(self, table: str, ids: list[int] | None) -> tuple[str, list[Any]]:
        """The filter of ``table``'s rows on the Stammtische ``ids`` (None: all)."""
        if ids is None:
            return "", []
        columns = {name for name, _ in self._kinds[table]}
        if table == "stammtische":
            return " WHERE id = ANY(%s)", [ids]
        if "stammtisch_id" in columns:
            return " WHERE stammtisch_id = ANY(%s)", [ids]
        return " WHERE game_id IN (SELECT id FROM games WHERE stammtisch_id = ANY(%s))", [ids]

    def _check(self, table: str, columns: Sequence[str]) -> None:
        known = {name for name, _ in self._kinds.get(table, ())}
        if not known or set(columns) - known:
            raise ValueError(f"no table {table} with columns {columns}")

    def stats_rows(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> dict[str, list[tuple[Any, ...]]]:
        ids = None if stammtische is None else sorted(int(s) for s in stammtische)
        out: dict[str, list[tuple[Any, ...]]] = {}
        with self.reading():
            for table, columns in tables.items():
                self._check(table, columns)
                where, params = self._where(table, ids)
                sql = f"SELECT {', '.join(columns)} FROM {table}{where}"  # noqa: S608 - checked
                out[table] = [tuple(r) for r in self._sql(sql, params).fetchall()]
        return out

    def stats_csv(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> dict[str, list[str]]:
        """As the port's, but PostgreSQL renders each table's lines (``COPY … TO STDOUT`` as
        CSV: every value quoted, NULL as an unquoted ``\\N``, each value as the port renders it:
        see :func:`_csv_sql`), one text per table, no Python object per value."""
        ids = None if stammtische is None else sorted(int(s) for s in stammtische)
        out: dict[str, list[str]] = {}
        with self.reading():
            for table, columns in tables.items():
                self._check(table, columns)
                kinds = dict(self._kinds[table])
                where, params = self._where(table, ids)
                values = ", ".join(_csv_sql(c, kinds[c]) for c in columns)
                select = f"SELECT {values} FROM {table}{where}"  # noqa: S608 - names checked
                out[table] = _csv_lines(self._connection(), select, params)
        return out

    def _connection(self) -> Any: ...  # provided by PostgresRepository

    @contextmanager
    def stats_arrow(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int]
    ) -> Iterator[Iterator[tuple[str, Any]] | None]:
        """The rows of :meth:`stats_rows` as Arrow streams, ``(table, RecordBatchReader)`` in
        the order of ``tables``, each to be read to its end before the next is taken: ADBC's
        PostgreSQL driver (binary COPY → Arrow in C++, no Python object per row or value) on a
        connection of its own, all tables in one REPEATABLE READ, READ ONLY transaction (one
        moment, as ``reading()``). None when ``adbc-driver-postgresql`` is not installed: the
        caller takes :meth:`stats_csv`. Measured at ``stats_bench`` full scale (1,000
        Stammtische, 3.7 M summary rows): the feed of a full refresh 5.9 s against 10-11 s by
        CSV chunks (PostgreSQL's own CPU about the same; the CSV's Python bytes → text → file
        and DuckDB's CSV parser are what it saves)."""
        try:
            import adbc_driver_postgresql.dbapi as adbc
        except ImportError:  # the optional extra is not installed
            yield None
            return
        literal = "'{" + ",".join(str(int(s)) for s in sorted(stammtische)) + "}'::bigint[]"
        try:
            conn = adbc.connect(self._url)
        except adbc.Error as exc:  # as the pool's connections: the server cannot be reached
            raise StorageUnavailable(f"PostgreSQL: {exc}") from exc
        try:
            cursor = conn.cursor()
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield _arrow_tables(cursor, self._kinds, tables, literal)
        finally:
            conn.rollback()
            conn.close()

    def table_rows(self, tables: Mapping[str, Sequence[str]]) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of each table, the given columns in that order, one consistent moment."""
        return self.stats_rows(tables, None)

    def stammtisch_ids(self) -> list[int]:
        return [int(r[0]) for r in self._sql("SELECT id FROM stammtische ORDER BY id")]

    def mark_stats_stale(self, stammtisch_ids: Iterable[int]) -> None:
        with self.transaction():
            self._many(_MARK, [(int(s),) for s in sorted(set(stammtisch_ids))])

    def stale_stats(self) -> dict[int, int]:
        rows = self._sql("SELECT stammtisch_id, version FROM stats_stale").fetchall()
        return {int(s): int(v) for s, v in rows}

    def write_stats(
        self,
        stammtisch_ids: Collection[int] | None,
        periods: Iterable[tuple[int, int | None, int, str]],
        versions: Mapping[int, int],
    ) -> None:
        now = datetime.now(UTC).replace(tzinfo=None)
        with self.transaction():
            if stammtisch_ids is None:
                self._sql("DELETE FROM stats_periods")
            else:
                ids = sorted(int(s) for s in stammtisch_ids)
                self._sql("DELETE FROM stats_periods WHERE stammtisch_id = ANY(%s)", [ids])
            self._many(
                "INSERT INTO stats_periods VALUES (%s, %s, %s, %s, %s, %s)",
                [
                    (st, year or 0, games, body, now, versions.get(st, 0))
                    for st, year, games, body in periods
                ],
            )
            self._many(
                "DELETE FROM stats_stale WHERE stammtisch_id = %s AND version = %s",
                sorted(versions.items()),
            )

    def read_stats(self, stammtisch_id: int, year: int | None) -> str | None:
        row = self._sql(
            "SELECT body FROM stats_periods WHERE stammtisch_id = %s AND year = %s",
            [stammtisch_id, year or 0],
        ).fetchone()
        return None if row is None else str(row[0])

    def stats_years(self, stammtisch_id: int | None) -> list[tuple[int, int, int]]:
        rows = self._sql(
            "SELECT stammtisch_id, year, games FROM stats_periods "
            "WHERE year <> 0 AND games > 0 AND (%s::bigint IS NULL OR stammtisch_id = %s::bigint) "
            "ORDER BY stammtisch_id, year DESC",
            [stammtisch_id, stammtisch_id],
        ).fetchall()
        return [(int(s), int(y), int(g)) for s, y, g in rows]

    def stats_computed(self) -> set[int]:
        rows = self._sql("SELECT stammtisch_id FROM stats_periods WHERE year = 0")
        return {int(r[0]) for r in rows.fetchall()}

    @contextmanager
    def stats_lock(self, wait: bool | float = True) -> Iterator[bool]:
        with mapped():
            taken = take(self._pool)
        conn = cast(psycopg.Connection[Any], taken.dbapi_connection)
        try:
            if not _advisory_lock(conn, wait):
                yield False
                return
            try:
                yield True
            finally:
                with mapped():
                    conn.execute("SELECT pg_advisory_unlock(%s)", [STATS_LOCK])
        finally:
            taken.close()


def _arrow_tables(
    cursor: Any, kinds: Kinds, tables: Mapping[str, Sequence[str]], ids: str
) -> Iterator[tuple[str, Any]]:
    """Each table's rows of the Stammtische ``ids`` (an SQL array literal) as a stream."""
    for table, columns in tables.items():
        known = {name for name, _ in kinds.get(table, ())}
        if not known or set(columns) - known:
            raise ValueError(f"no table {table} with columns {columns}")
        if table == "stammtische":
            where = f"id = ANY({ids})"
        elif "stammtisch_id" in known:
            where = f"stammtisch_id = ANY({ids})"
        else:
            where = f"game_id IN (SELECT id FROM games WHERE stammtisch_id = ANY({ids}))"
        cursor.execute(f"SELECT {', '.join(columns)} FROM {table} WHERE {where}")  # noqa: S608
        yield table, cursor.fetch_record_batch()


def _csv_sql(column: str, kind: str) -> str:
    """``column`` as the port's CSV renders it: a flag as 0/1, a time as Python's isoformat
    (microseconds only when there are any), the rest as PostgreSQL writes it."""
    if kind == "boolean":
        return f"{column}::int"
    if kind.startswith("timestamp"):
        whole = f"to_char({column}, 'YYYY-MM-DD HH24:MI:SS')"
        return (
            f"CASE WHEN mod(date_part('microseconds', {column})::bigint, 1000000) = 0 "
            f"THEN {whole} ELSE to_char({column}, 'YYYY-MM-DD HH24:MI:SS.US') END"
        )
    return column


def _csv_lines(conn: psycopg.Connection[Any], select: str, params: list[Any]) -> list[str]:
    """The rows of ``select`` as one text of CSV lines (none: an empty list)."""
    sql = f"COPY ({select}) TO STDOUT (FORMAT csv, FORCE_QUOTE *, NULL '\\N')"
    with mapped(), conn.cursor() as cursor, cursor.copy(sql, params or None) as copy:
        text = b"".join(bytes(chunk) for chunk in copy).decode("utf-8")
    return [text.removesuffix("\n")] if text else []


def _advisory_lock(conn: psycopg.Connection[Any], wait: bool | float) -> bool:
    """Take the refresh's advisory lock on ``conn``: waiting (True), not (False) or up to
    ``wait`` seconds; whether it was taken."""
    with mapped():
        if wait is True:
            conn.execute("SELECT pg_advisory_lock(%s)", [STATS_LOCK])
            return True
        deadline = time.monotonic() + float(wait)
        while True:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", [STATS_LOCK]).fetchone()
            if row and row[0]:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
