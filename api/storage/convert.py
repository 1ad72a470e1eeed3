"""Convert a DuckDB database file (the transactional store before SQLite) into a new SQLite file.

``convert(duckdb_path, sqlite_path)``:

The DuckDB store is retired: nothing here uses it. The old file is read with plain
``duckdb.connect(path, read_only=True)`` and ``SELECT``s of the columns listed in
:mod:`~.records` (the one list of every table's columns).

* opens the DuckDB file **read-only** (it is never changed; a process still holding it, an old
  server, stops the conversion with :class:`ConvertError`) and refuses a file whose schema
  version is not :data:`DUCKDB_VERSION`, the last one the DuckDB store wrote (a file of an
  older version: open it once with a Schocken version that still stores in DuckDB, up to main
  6207bb1, then convert);
* refuses a target that exists; creates it with :class:`~.sqlite.SQLiteStore` migrated up to
  the same version (SQLite's migrations are numbered as the DuckDB ones: the same tables), so
  the rows fit as they are;
* copies every table of :data:`~.records.TABLE_COLUMNS` and :data:`~.records.RESPONSE_COLUMNS`
  (parents first) in **one** immediate transaction, each value in the SQLite adapter's encoding
  (:func:`~.sqlite.store.encode`: JSON as compact text, timestamps as ISO 8601 text, booleans as
  0/1), chosen by the column's declared type in the new file;
* then applies SQLite's later migrations (if any) to the copied data, as on any start;
* on any failure removes the half-made target (and its ``-wal``/``-shm`` files).

:func:`convert_on_first_start` is what the app does when it opens its default SQLite file for
the first time and the old default DuckDB file lies beside it.

Ids: Stammtische, players and games have ``INTEGER PRIMARY KEY`` in SQLite (an alias of the
rowid, no AUTOINCREMENT), so they are copied as they are and a new row gets ``max(id) + 1``:
new ids continue after the copied ones, as DuckDB's sequences did.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

from .records import RESPONSE_COLUMNS, TABLE_COLUMNS
from .sqlite import SQLiteStore
from .sqlite.store import column_kinds, encode
from .statements import to_json

#: every table copied, with its columns, in load order (parents first)
COPIED: dict[str, tuple[str, ...]] = {**TABLE_COLUMNS, **RESPONSE_COLUMNS}

#: the schema version of every DuckDB file the DuckDB store wrote last (its migrations
#: 0001–0005); the only one converted
DUCKDB_VERSION = 5

#: rows read from DuckDB per batch
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


def convert(source: str | Path, target: str | Path) -> dict[str, int]:
    """Copy the DuckDB file ``source`` into the new SQLite file ``target``; returns the number
    of rows per table."""
    source, target = Path(source), Path(target)
    if not source.is_file():
        raise ConvertError(f"Umwandlung abgebrochen: {source} gibt es nicht.")
    if target.exists():
        raise ConvertError(f"Umwandlung abgebrochen: {target} gibt es schon.")
    duck = _open_duckdb(source)
    try:
        _check_version(duck, source)
        try:
            return _copy_into(duck, target)
        except BaseException:
            _remove(target)
            raise
    finally:
        duck.close()


def _open_duckdb(path: Path) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(
            str(path), read_only=True, config={"autoinstall_known_extensions": False}
        )
    except duckdb.Error as err:
        raise ConvertError(
            f"Umwandlung abgebrochen: {path} lässt sich nicht lesen (läuft der Server noch?): {err}"
        ) from err


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


def _copy_into(duck: duckdb.DuckDBPyConnection, target: Path) -> dict[str, int]:
    """Create ``target`` (schema and migration bookkeeping up to :data:`DUCKDB_VERSION`), copy
    every table in one transaction, then apply the later migrations."""
    store = SQLiteStore(target, until=DUCKDB_VERSION)
    conn = store.connect()
    try:
        kinds = {
            table: dict(columns) for table, columns in column_kinds(conn).items() if table in COPIED
        }
        conn.execute("BEGIN IMMEDIATE")
        try:
            counts = {
                table: _copy_table(duck, conn, table, columns, kinds[table])
                for table, columns in COPIED.items()
            }
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
        store.close()
    SQLiteStore(target).close()  # SQLite's migrations after the DuckDB store's last one
    return counts


def _copy_table(
    duck: duckdb.DuckDBPyConnection,
    conn: sqlite3.Connection,
    table: str,
    columns: tuple[str, ...],
    kinds: dict[str, str],
) -> int:
    """Copy one table batch by batch; returns its number of rows."""
    missing = [c for c in columns if c not in kinds]
    if missing:
        raise ConvertError(f"Umwandlung abgebrochen: {table} hat in SQLite keine Spalte {missing}.")
    declared = [kinds[c] for c in columns]
    insert = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    count = 0
    for rows in _batches(duck, table, columns):
        conn.executemany(insert, [_row(declared, row) for row in rows])
        count += len(rows)
    return count


def _batches(
    duck: duckdb.DuckDBPyConnection, table: str, columns: tuple[str, ...]
) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of a DuckDB table in a stable order (its leading key columns), in batches."""
    order = ", ".join(columns[:2])
    cursor = duck.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {order}")
    while rows := cursor.fetchmany(BATCH):
        yield rows


def _row(kinds: list[str], row: tuple[Any, ...]) -> tuple[Any, ...]:
    return tuple(_value(kind, value) for kind, value in zip(kinds, row, strict=True))


def _value(kind: str, value: Any) -> Any:
    """A DuckDB value in the SQLite adapter's encoding for a column of declared type ``kind``
    (DuckDB hands JSON columns out as text: parsed and written again compactly)."""
    if value is None:
        return None
    if kind == "JSON":
        return to_json(json.loads(value) if isinstance(value, str) else value)
    if kind == "BOOLEAN":
        return int(bool(value))
    if kind == "BLOB":
        return bytes(value)
    return encode(value)


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
