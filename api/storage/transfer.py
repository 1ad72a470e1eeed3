"""Copy a whole database between the stores of record: ``copy(SOURCE, TARGET)``, each a SQLite
file (a path or ``sqlite:///path``; ``sqlite:////abs/path``) or a PostgreSQL database
(``postgresql://…``); either way, and also SQLite → SQLite or PostgreSQL → PostgreSQL.

As :mod:`.convert` does for the retired DuckDB files, every table of :data:`COPIED` (the lists
of :mod:`.records`, the read model's and the rate limit's tables: everything but the migration
bookkeeping) is read with ``SELECT`` of its columns, in one consistent moment of the source,
and written into the target in **one** transaction, each value in the target adapter's
encoding (chosen by the column's type in the target):

* the source is opened with its store (migrated to this version, as a server start would) and
  read in a snapshot (SQLite: one read transaction; PostgreSQL: REPEATABLE READ, READ ONLY,
  through a server-side cursor in batches);
* a SQLite target must not exist: it is created with every migration; a PostgreSQL target
  must hold no rows (a new database, migrated here); ids are kept, and PostgreSQL's identity
  sequences are set past the copied ids afterwards, so new rows continue after them;
* on a failure nothing is left: the half-made SQLite file is removed, PostgreSQL rolls back.

Values cross as Python values (JSON parsed, times as datetime, flags as bool) and are written
as each adapter writes them, so SQLite → PostgreSQL → SQLite gives the same rows, byte for byte.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from .convert import ConvertError, _remove
from .postgres import PostgresStore, is_postgres_url
from .postgres.store import redacted
from .records import EVENT_COLUMNS, RESPONSE_COLUMNS, TABLE_COLUMNS
from .sqlite import SQLiteStore
from .sqlite.store import column_kinds, encode
from .statements import decode, to_json
from .statements import encode as pg_encode
from .webhook_records import WEBHOOK_COLUMNS

#: every table copied, with its columns, in load order (parents first)
COPIED: dict[str, tuple[str, ...]] = {
    **TABLE_COLUMNS,
    **RESPONSE_COLUMNS,
    **EVENT_COLUMNS,
    "stats_periods": ("stammtisch_id", "year", "games", "body", "computed_at", "version"),
    "stats_stale": ("stammtisch_id", "version"),
    "rate_limits": ("who", "tokens", "updated_at", "granted"),
    "login_failures": ("who", "failures", "last_at"),
    "web_sessions": ("id_hash", "stammtisch_id", "token_hash", "expires_at"),
    **WEBHOOK_COLUMNS,
}
# migration 0014: a game's number in its Stammtisch and when it was called off (copied as
# they are; BASE_COLUMNS keep the columns of 0001, which the retired DuckDB files have)
COPIED["games"] = (*COPIED["games"], "number", "abandoned_at")
# migration 0015: until when a webhook has an attempt in flight, or when it was last served
COPIED["webhooks"] = (*COPIED["webhooks"], "busy_until")
#: the tables whose ids PostgreSQL draws from an identity sequence
IDENTITIES = ("stammtische", "players", "games", "webhooks", "webhook_deliveries")
#: rows per batch
BATCH = 5000


class CopyError(ConvertError):
    """The copy cannot start or was stopped; the message is meant for the user."""


@dataclass(frozen=True)
class Location:
    """A database: ``engine`` ``"sqlite"`` (``where`` a file path) or ``"postgresql"`` (a URL)."""

    engine: str
    where: str

    def __str__(self) -> str:
        if self.engine == "postgresql":  # no password in a message
            return redacted(self.where)
        return self.where


def location(text: str) -> Location:
    """``postgresql://…`` / ``postgres://…``, ``sqlite:///relative`` / ``sqlite:////absolute``
    or a plain file path."""
    if is_postgres_url(text):
        return Location("postgresql", text)
    if text.startswith("sqlite://"):
        path = text.removeprefix("sqlite://").removeprefix("/")
        if not path:
            raise CopyError(f"Kopie abgebrochen: {text} nennt keine Datei.")
        return Location("sqlite", path)
    if "://" in text:
        raise CopyError(f"Kopie abgebrochen: {redacted(text)} ist weder SQLite noch PostgreSQL.")
    return Location("sqlite", text)


def copy(source: str, target: str) -> dict[str, int]:
    """Copy every row of the database ``source`` into the new database ``target``; returns
    the number of rows per table."""
    src, dst = location(source), location(target)
    if src == dst:
        raise CopyError("Kopie abgebrochen: Quelle und Ziel sind dieselbe Datenbank.")
    if src.engine == "sqlite" and not Path(src.where).is_file():
        raise CopyError(f"Kopie abgebrochen: {src} gibt es nicht.")
    if dst.engine == "sqlite" and Path(dst.where).exists():
        raise CopyError(f"Kopie abgebrochen: {dst} gibt es schon.")
    with _reader(src) as read:
        if dst.engine == "sqlite":
            try:
                return _into_sqlite(read, Path(dst.where))
            except BaseException:
                _remove(Path(dst.where))
                raise
        return _into_postgres(read, dst)


Batches = Generator[list[tuple[Any, ...]], None, None]


@dataclass(frozen=True)
class Reader:
    """The tables of the source, and its rows (batches of Python values) table by table."""

    tables: frozenset[str]
    batches: Callable[[str, tuple[str, ...]], Batches]

    def __call__(self, table: str, columns: tuple[str, ...]) -> Batches:
        return self.batches(table, columns)

    def copied(self, target: Collection[str]) -> dict[str, tuple[str, ...]]:
        """The tables of :data:`COPIED` both databases have. One that only the source has (it
        is of a newer version) stops the copy if it holds rows; one that only the target has
        stays empty."""
        for table, columns in COPIED.items():
            if table in self.tables and table not in target:
                rows = self(table, columns)
                found = next(rows, None)
                rows.close()
                if found:
                    raise CopyError(f"Kopie abgebrochen: das Ziel kennt die Tabelle {table} nicht.")
        return {t: c for t, c in COPIED.items() if t in self.tables and t in target}


def _reader(src: Location) -> Any:
    """A function reading one table's rows in batches, all in one snapshot of ``src``."""
    return _pg_reader(src.where) if src.engine == "postgresql" else _sqlite_reader(src.where)


@contextmanager
def _pg_reader(url: str) -> Iterator[Reader]:
    store = PostgresStore(url, pool_size=1)
    conn = store.connect()
    try:
        conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        tables = frozenset(store.kinds)
        yield Reader(tables, lambda table, columns: _pg_batches(conn, table, columns))
    finally:
        conn.close()
        store.close()


@contextmanager
def _sqlite_reader(path: str) -> Iterator[Reader]:
    lite = SQLiteStore(path)
    conn = lite.connect()
    try:
        kinds = {t: dict(c) for t, c in column_kinds(conn).items()}
        conn.execute("BEGIN")  # one snapshot of the WAL for every table
        yield Reader(
            frozenset(kinds),
            lambda table, columns: _sqlite_batches(conn, kinds[table], table, columns),
        )
    finally:
        conn.close()
        lite.close()


def _select(table: str, columns: tuple[str, ...]) -> str:
    order = ", ".join(columns[:2])
    return f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}"  # noqa: S608


def _pg_batches(conn: psycopg.Connection[Any], table: str, columns: tuple[str, ...]) -> Batches:
    with conn.cursor(name=f"copy_{table}") as cursor:
        cursor.execute(_select(table, columns))
        while rows := cursor.fetchmany(BATCH):
            yield rows


def _sqlite_batches(
    conn: sqlite3.Connection, kinds: dict[str, str], table: str, columns: tuple[str, ...]
) -> Batches:
    declared = [kinds[c] for c in columns]
    cursor = conn.execute(_select(table, columns))
    while rows := cursor.fetchmany(BATCH):
        yield [tuple(map(decode, declared, row)) for row in rows]


def _sqlite_value(kind: str, value: Any) -> Any:
    """A Python value as the SQLite adapter stores it in a column declared ``kind``."""
    if value is None:
        return None
    if kind == "JSON":
        return to_json(value)
    if kind == "BOOLEAN":
        return int(bool(value))
    if kind == "BLOB":
        return bytes(value)
    return encode(value)


def _into_sqlite(read: Reader, target: Path) -> dict[str, int]:
    store = SQLiteStore(target)
    conn = store.connect()
    try:
        kinds = {t: dict(c) for t, c in column_kinds(conn).items()}
        counts: dict[str, int] = {}
        conn.execute("BEGIN IMMEDIATE")
        try:
            for table, columns in read.copied(kinds).items():
                declared = [kinds[table][c] for c in columns]
                marks = ", ".join("?" * len(columns))
                insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"  # noqa: S608
                counts[table] = 0
                for rows in read(table, columns):
                    conn.executemany(
                        insert, [tuple(map(_sqlite_value, declared, row)) for row in rows]
                    )
                    counts[table] += len(rows)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return counts
    finally:
        conn.close()
        store.close()


def _into_postgres(read: Reader, dst: Location) -> dict[str, int]:
    store = PostgresStore(dst.where, pool_size=1)
    try:
        kinds = {t: dict(c) for t, c in store.kinds.items()}
        with store.connect() as conn, conn.transaction():
            for table in set(COPIED) & set(kinds):
                if conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone():  # noqa: S608
                    raise CopyError(f"Kopie abgebrochen: {dst} ist nicht leer ({table}).")
            counts = {
                table: _copy_rows(conn, read, table, columns, kinds[table])
                for table, columns in read.copied(kinds).items()
            }
            for table in IDENTITIES:
                conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "  # noqa: S608
                    f"coalesce(max(id), 0) + 1, false) FROM {table}"
                )
        return counts
    finally:
        store.close()


def _copy_rows(
    conn: psycopg.Connection[Any],
    read: Reader,
    table: str,
    columns: tuple[str, ...],
    kinds: dict[str, str],
) -> int:
    """One table through COPY … FROM STDIN; its number of rows."""
    declared = [kinds[c] for c in columns]
    count = 0
    with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as pipe:
        for rows in read(table, columns):
            for row in rows:
                pipe.write_row(tuple(map(pg_encode, declared, row)))
            count += len(rows)
    return count
