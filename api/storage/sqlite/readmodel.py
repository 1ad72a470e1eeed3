"""The statistics read model on SQLite: the port methods of
:class:`~api.storage.repository.Repository` for ``stats_periods`` and ``stats_stale``
(migration 0006), mixed into :class:`~.repository.SQLiteRepository`.

The one-refresher lock is ``flock`` on ``<database>.stats-lock`` beside the database file: it
holds across the threads and processes of a server and a ``schocken stats refresh`` run beside
it, and the kernel drops it when its holder dies.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from .locks import file_lock
from .rows import Kinds, timestamp, to_json

_MARK = (
    "INSERT INTO stats_stale (stammtisch_id, version) VALUES (?, 1) "
    "ON CONFLICT (stammtisch_id) DO UPDATE SET version = version + 1"
)
#: more ids than this are passed as one JSON array (json_each) instead of one "?" each
_MANY = 500


class ReadModelMixin:
    """Needs the repository's connection, schema kinds, ``transaction`` and ``reading``."""

    _conn: sqlite3.Connection
    _kinds: Kinds

    def transaction(self) -> Any: ...  # provided by SQLiteRepository

    def reading(self) -> Any: ...  # provided by SQLiteRepository

    def _where(self, table: str, ids: list[int] | None) -> tuple[str, list[Any]]:
        """The filter of ``table``'s rows on the Stammtische ``ids`` (None: all); a few ids
        as one bound parameter each, so that SQLite searches the index."""
        if ids is None:
            return "", []
        marks, params = _marks(ids)
        columns = {name for name, _ in self._kinds[table]}
        if table == "stammtische":
            return f" WHERE id IN ({marks})", params
        if "stammtisch_id" in columns:
            return f" WHERE stammtisch_id IN ({marks})", params
        games = f"SELECT id FROM games WHERE stammtisch_id IN ({marks})"  # noqa: S608 - marks
        return f" WHERE game_id IN ({games})", params

    def stats_rows(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> dict[str, list[tuple[Any, ...]]]:
        ids = None if stammtische is None else sorted(int(s) for s in stammtische)
        out: dict[str, list[tuple[Any, ...]]] = {}
        with self.reading():
            for table, columns in tables.items():
                self._check(table, columns)
                where, params = self._where(table, ids)
                # names checked against the schema above; the ids are bound
                sql = f"SELECT {', '.join(columns)} FROM {table}{where}"  # noqa: S608
                out[table] = [tuple(r) for r in self._conn.execute(sql, params).fetchall()]
        return out

    def stats_csv(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> dict[str, list[str]]:
        """As the port's, but SQLite renders the lines and joins them into one text per
        table (no Python object per value or row; the whole query runs without the GIL, so
        that a refresh reads the next chunk while another thread computes)."""
        ids = None if stammtische is None else sorted(int(s) for s in stammtische)
        out: dict[str, list[str]] = {}
        with self.reading():
            for table, columns in tables.items():
                self._check(table, columns)
                where, params = self._where(table, ids)
                kinds = dict(self._kinds[table])
                required = {
                    str(r[1]) for r in self._conn.execute(f"PRAGMA table_info({table})") if r[3]
                }
                # a NOT NULL integer as %d (SQLite's fastest rendering), the rest as text
                plain = {c for c in columns if c in required and _integer(kinds[c])}
                marks = ",".join("%d" if c in plain else "%s" for c in columns)
                values = ", ".join(c if c in plain else _csv_sql(c, kinds[c]) for c in columns)
                line = f"printf('{marks}', {values})"
                text = f"group_concat({line}, char(10))"
                sql = f"SELECT {text} FROM {table}{where}"  # noqa: S608 - names checked
                row = self._conn.execute(sql, params).fetchone()
                out[table] = [row[0]] if row and row[0] else []
        return out

    def _check(self, table: str, columns: Sequence[str]) -> None:
        known = {name for name, _ in self._kinds.get(table, ())}
        if not known or set(columns) - known:
            raise ValueError(f"no table {table} with columns {columns}")

    def stammtisch_ids(self) -> list[int]:
        return [int(r[0]) for r in self._conn.execute("SELECT id FROM stammtische ORDER BY id")]

    def mark_stats_stale(self, stammtisch_ids: Iterable[int]) -> None:
        with self.transaction():
            self._conn.executemany(_MARK, [(int(s),) for s in set(stammtisch_ids)])

    def _mark_game(self, game_id: int) -> None:
        self._conn.execute(
            "INSERT INTO stats_stale (stammtisch_id, version) "
            "SELECT stammtisch_id, 1 FROM games WHERE id = ? "
            "ON CONFLICT (stammtisch_id) DO UPDATE SET version = version + 1",
            [game_id],
        )

    def stale_stats(self) -> dict[int, int]:
        rows = self._conn.execute("SELECT stammtisch_id, version FROM stats_stale").fetchall()
        return {int(s): int(v) for s, v in rows}

    def write_stats(
        self,
        stammtisch_ids: Collection[int] | None,
        periods: Iterable[tuple[int, int | None, int, str]],
        versions: Mapping[int, int],
    ) -> None:
        now = timestamp(datetime.now(UTC))
        with self.transaction():
            if stammtisch_ids is None:
                self._conn.execute("DELETE FROM stats_periods")
            else:
                marks, params = _marks(sorted(stammtisch_ids))
                self._conn.execute(
                    f"DELETE FROM stats_periods WHERE stammtisch_id IN ({marks})",  # noqa: S608
                    params,
                )
            self._conn.executemany(
                "INSERT INTO stats_periods VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (st, year or 0, games, body, now, versions.get(st, 0))
                    for st, year, games, body in periods
                ],
            )
            self._conn.executemany(
                "DELETE FROM stats_stale WHERE stammtisch_id = ? AND version = ?",
                list(versions.items()),
            )

    def read_stats(self, stammtisch_id: int, year: int | None) -> str | None:
        row = self._conn.execute(
            "SELECT body FROM stats_periods WHERE stammtisch_id = ? AND year = ?",
            [stammtisch_id, year or 0],
        ).fetchone()
        return None if row is None else str(row[0])

    def stats_years(self, stammtisch_id: int | None) -> list[tuple[int, int, int]]:
        rows = self._conn.execute(
            "SELECT stammtisch_id, year, games FROM stats_periods "
            "WHERE year <> 0 AND games > 0 AND (? IS NULL OR stammtisch_id = ?) "
            "ORDER BY stammtisch_id, year DESC",
            [stammtisch_id, stammtisch_id],
        ).fetchall()
        return [(int(s), int(y), int(g)) for s, y, g in rows]

    def stats_computed(self) -> set[int]:
        rows = self._conn.execute("SELECT stammtisch_id FROM stats_periods WHERE year = 0")
        return {int(r[0]) for r in rows.fetchall()}

    @contextmanager
    def stats_lock(self, wait: bool | float = True) -> Iterator[bool]:
        path = self._conn.execute("PRAGMA database_list").fetchone()[2]
        with file_lock(f"{path}.stats-lock", wait) as taken:
            yield taken


def _marks(ids: list[int]) -> tuple[str, list[Any]]:
    """``IN (…)`` placeholders and parameters for ``ids``."""
    if len(ids) > _MANY:
        return "SELECT value FROM json_each(?)", [to_json(ids)]
    return ", ".join("?" * len(ids)) or "NULL", list(ids)


def _integer(kind: str) -> bool:
    return kind.upper() in ("INTEGER", "BIGINT", "BOOLEAN")


def _csv_sql(column: str, kind: str) -> str:
    """SQL rendering ``column`` as a value of a CSV line (see ``Repository.stats_csv``):
    integers as they are (no quote needed), other values quoted."""
    if _integer(kind):
        return f"ifnull({column}, '\\N')"
    quoted = f"'\"' || replace({column}, '\"', '\"\"') || '\"'"
    return f"CASE WHEN {column} IS NULL THEN '\\N' ELSE {quoted} END"
