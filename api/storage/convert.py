"""Copy a whole database into a new one, table by table, in **one** transaction of the target:

* :func:`convert`: a DuckDB file of the retired DuckDB store (the store before SQLite; nothing
  else uses it) into a new SQLite file. The file is opened **read-only** (never changed; a
  process still holding it, an old server, stops the conversion with :class:`ConvertError`)
  and must have schema version :data:`DUCKDB_VERSION`, the last one the DuckDB store wrote (a
  file of an older version: open it once with a Schocken version that still stores in DuckDB,
  up to main 6207bb1, then convert). The target is made by :class:`~.sqlite.SQLiteStore` up to
  the same version (SQLite's migrations are numbered as the DuckDB ones: the same tables), the
  rows copied, then SQLite's later migrations applied, as on any start.
  :func:`convert_on_first_start` is what the app does when it opens its default SQLite file
  for the first time and the old default DuckDB file lies beside it.
* :func:`copy`: ``copy(SOURCE, TARGET)``, each a SQLite file (a path or ``sqlite:///path``;
  ``sqlite:////abs/path``) or a PostgreSQL database (``postgresql://…``); either way, and also
  SQLite → SQLite or PostgreSQL → PostgreSQL. The source is opened with its store (migrated to
  this version, as a server start would) and read in one snapshot (SQLite: one read
  transaction; PostgreSQL: REPEATABLE READ, READ ONLY, through a server-side cursor in
  batches). A SQLite target must not exist: it is created with every migration; a PostgreSQL
  target must hold no rows (a new database, migrated here).

Every table of :data:`COPIED` (the lists of :mod:`.records`, the read model's and the rate
limit's tables: everything but the migration bookkeeping) is read with ``SELECT`` of its
columns (those the target has), parents first. Values cross as Python values (JSON parsed,
times as datetime, flags as bool) and are written as each adapter writes them (chosen by the
column's type in the target), so SQLite → PostgreSQL → SQLite gives the same rows, byte for
byte. Ids are kept: SQLite's ``INTEGER PRIMARY KEY`` (an alias of the rowid) gives a new row
``max(id) + 1``, PostgreSQL's identity sequences are set past the copied ids, so new rows
continue after them. On a failure nothing is left: a half-made SQLite file is removed (with its
``-wal``/``-shm`` files), PostgreSQL rolls back.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Collection, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from .records import EVENT_COLUMNS, LUCK_COLUMNS, RESPONSE_COLUMNS, TABLE_COLUMNS
from .sqlite import SQLiteStore
from .sqlite.repository import timestamp
from .sqlite.store import column_kinds
from .statements import decode, encode
from .webhook_records import WEBHOOK_COLUMNS

if TYPE_CHECKING:  # psycopg only where PostgreSQL is used (the extra "postgres")
    import psycopg

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
    "luck_facts": LUCK_COLUMNS,
}
# migration 0014: a game's number in its Stammtisch and when it was called off (copied as
# they are; BASE_COLUMNS keep the columns of 0001, which the retired DuckDB files have)
COPIED["games"] = (*COPIED["games"], "number", "abandoned_at")
# migration 0015: until when a webhook has an attempt in flight, or when it was last served
COPIED["webhooks"] = (*COPIED["webhooks"], "busy_until")
# migration 0016: where a Stammtisch shows the odds of a throw
COPIED["stammtische"] = (*COPIED["stammtische"], "odds_shown")
#: the tables whose ids PostgreSQL draws from an identity sequence
IDENTITIES = ("stammtische", "players", "games", "webhooks", "webhook_deliveries")
#: the schema version of every DuckDB file the DuckDB store wrote last (its migrations
#: 0001–0005); the only one converted
DUCKDB_VERSION = 5
#: rows per batch
BATCH = 5000


def is_duckdb_file(path: str | Path) -> bool:
    """Whether ``path`` is an existing DuckDB database file (``DUCK`` at byte 8 of its header)."""
    try:
        with Path(path).open("rb") as fh:
            return fh.read(12)[8:] == b"DUCK"
    except OSError:
        return False


class ConvertError(RuntimeError):
    """The conversion cannot start or was stopped; the message is meant for the user
    (German, like the CLI's)."""


class CopyError(ConvertError):
    """The copy cannot start or was stopped; the message is meant for the user."""


def convert(source: str | Path, target: str | Path) -> dict[str, int]:
    """Copy the DuckDB file ``source`` into the new SQLite file ``target``; returns the number
    of rows per table."""
    source, target = Path(source), Path(target)
    if not source.is_file():
        raise ConvertError(f"Umwandlung abgebrochen: {source} gibt es nicht.")
    if target.exists():
        raise ConvertError(f"Umwandlung abgebrochen: {target} gibt es schon.")
    with _duckdb_reader(source) as read:
        try:
            return _into_sqlite(read, target, until=DUCKDB_VERSION)
        except BaseException:
            _remove(target)
            raise


def _remove(target: Path) -> None:
    """Remove a half-made target with the WAL files SQLite keeps next to it."""
    for path in (target, Path(f"{target}-wal"), Path(f"{target}-shm")):
        path.unlink(missing_ok=True)


def convert_on_first_start(database: str | Path, old: str | Path) -> str | None:
    """When the SQLite file ``database`` does not exist yet but the old DuckDB file ``old``
    does (the default files of the instance folder), convert it, keeping ``old``; returns the
    one line to tell the user, or None when there was nothing to do.

    Several server processes may start at once: each converts into a file of its own beside
    ``database`` and links it into place only if ``database`` is still missing (``os.link``
    refuses an existing name, atomically), so exactly one conversion becomes the database and
    nobody opens a half-made one."""
    database, old = Path(database), Path(old)
    if database.exists() or not old.is_file():
        return None
    own = database.with_name(f".{database.name}.converting-{os.getpid()}-{threading.get_ident()}")
    _remove(own)
    counts = convert(old, own)
    try:
        os.link(own, database)
    except FileExistsError:
        return None  # another process was first
    finally:
        _remove(own)
    return (
        f"Alte DuckDB-Datenbank {old} nach {database} umgewandelt ({counts['games']} Spiele; "
        f"die alte Datei bleibt liegen) / converted the old DuckDB database {old} into "
        f"{database} ({counts['games']} games; the old file is kept)"
    )


@dataclass(frozen=True)
class Location:
    """A database: ``engine`` ``"sqlite"`` (``where`` a file path) or ``"postgresql"`` (a URL)."""

    engine: str
    where: str

    def __str__(self) -> str:
        if self.engine == "postgresql":  # no password in a message
            from .postgres.store import redacted

            return redacted(self.where)
        return self.where


def location(text: str) -> Location:
    """``postgresql://…`` / ``postgres://…``, ``sqlite:///relative`` / ``sqlite:////absolute``
    or a plain file path."""
    from .postgres.store import is_postgres_url, redacted

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
    with _pg_reader(src.where) if src.engine == "postgresql" else _sqlite_reader(src.where) as read:
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


@contextmanager
def _duckdb_reader(path: Path) -> Iterator[Reader]:
    try:
        duck = duckdb.connect(
            str(path), read_only=True, config={"autoinstall_known_extensions": False}
        )
    except duckdb.Error as err:
        raise ConvertError(
            f"Umwandlung abgebrochen: {path} lässt sich nicht lesen (läuft der Server noch?): {err}"
        ) from err
    try:
        _check_version(duck, path)
        kinds: dict[str, dict[str, str]] = {}
        for table, column, kind in duck.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns"
        ).fetchall():
            kinds.setdefault(table, {})[column] = kind
        yield Reader(frozenset(kinds), lambda t, columns: _batches(duck, kinds[t], t, columns))
    finally:
        duck.close()


def _check_version(duck: duckdb.DuckDBPyConnection, path: Path) -> None:
    """The DuckDB file must have this program's newest schema (the tables copied as they are)."""
    try:
        row = duck.execute("SELECT max(version) FROM schema_migrations").fetchone()
    except duckdb.Error as err:
        raise ConvertError(
            f"Umwandlung abgebrochen: {path} ist keine Schocken-Datenbank ({err})."
        ) from err
    version = row[0] if row else None
    if version != DUCKDB_VERSION:
        raise ConvertError(
            f"Umwandlung abgebrochen: {path} hat die Schema-Version {version}, umwandeln lässt "
            f"sich nur Version {DUCKDB_VERSION} (die letzte des DuckDB-Speichers). Eine ältere "
            "Datei einmal mit einer Schocken-Version öffnen, die noch in DuckDB speichert "
            "(bis main 6207bb1), dann erneut umwandeln."
        )


@contextmanager
def _pg_reader(url: str) -> Iterator[Reader]:
    from .postgres import PostgresStore

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
            frozenset(kinds), lambda table, columns: _batches(conn, kinds[table], table, columns)
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


def _batches(conn: Any, kinds: dict[str, str], table: str, columns: tuple[str, ...]) -> Batches:
    """The rows of a SQLite or DuckDB table as Python values (by the columns' types)."""
    declared = [kinds[c] for c in columns]
    cursor = conn.execute(_select(table, columns))
    while rows := cursor.fetchmany(BATCH):
        yield [tuple(map(decode, declared, row)) for row in rows]


def _into_sqlite(read: Reader, target: Path, until: int | None = None) -> dict[str, int]:
    """Create ``target`` (migrated up to version ``until``, if given), copy every table in one
    transaction, then apply the later migrations."""

    def as_stored(kind: str, value: Any) -> Any:  # as the SQLite adapter stores it
        return encode(kind, value, timestamp)

    store = SQLiteStore(target, until=until)
    conn = store.connect()
    try:
        kinds = {t: dict(c) for t, c in column_kinds(conn).items()}
        counts: dict[str, int] = {}
        conn.execute("BEGIN IMMEDIATE")
        try:
            for table, every in read.copied(kinds).items():
                columns = tuple(c for c in every if c in kinds[table])  # at version ``until``
                declared = [kinds[table][c] for c in columns]
                marks = ", ".join("?" * len(columns))
                insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"  # noqa: S608
                counts[table] = 0
                for rows in read(table, columns):
                    conn.executemany(insert, [tuple(map(as_stored, declared, row)) for row in rows])
                    counts[table] += len(rows)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
        store.close()
    if until is not None:
        SQLiteStore(target).close()  # the migrations after version ``until``
    return counts


def _into_postgres(read: Reader, dst: Location) -> dict[str, int]:
    from .postgres import PostgresStore

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
                pipe.write_row(tuple(map(encode, declared, row)))
            count += len(rows)
    return count
