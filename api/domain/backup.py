"""Backups of a database: a backup folder, and a new database file made from one.

A backup (:func:`backup_folder`) is a folder with

* ``schocken.sqlite3``: a copy of the database in one consistent moment, taken beside running
  servers (even several processes) without going through them: of a SQLite database with
  SQLite's online backup API (:meth:`SQLiteStore.backup_to`, page for page), of a PostgreSQL
  database by :func:`api.storage.convert.copy` (one REPEATABLE READ snapshot, every table
  into a new SQLite file, the same rows);
* ``logs/<stammtisch>/<game>.json``: every game as a game log (schemas/GAMELOG.md v1), written from
  that copy, readable by ``schocken replay`` and importable into another Stammtisch.

:func:`restore_sqlite` makes a new database file from it, page for page the copied one;
:func:`restore_postgres` fills an empty PostgreSQL database with its rows. So a backup taken
on either store restores onto either. (A PostgreSQL operator also has ``pg_dump``: README.)

An export folder of the retired DuckDB store (``schema.sql``, ``load.sql`` and one Parquet file
per table) is still restored: :func:`import_duckdb_export` loads it into a temporary DuckDB
file with plain DuckDB SQL and converts that into the new SQLite file
(:mod:`api.storage.convert`).

The entrypoints: ``schocken export`` / ``import`` / ``backup`` (api/cli/backup.py) and
``POST /api/v1/admin/backup`` (api/resources/admin.py), which answers with the folder as
``.tar.gz`` (:func:`tar_folder`; :func:`untar_into` unpacks it). No Flask here.
"""

from __future__ import annotations

import io
import json
import os
import re
import secrets
import tarfile
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import duckdb

from ..storage import MemoryStore, SQLiteRepository, SQLiteStore
from ..storage.convert import convert
from .runtime import GameRuntime, effective_entries, header_of

if TYPE_CHECKING:  # PostgreSQL's packages are imported only when it is used (extra "postgres")
    from ..storage import PostgresStore

#: the file in the instance folder that holds the generated admin token
ADMIN_TOKEN_FILE = "admin_token"
#: the database file in a SQLite backup folder
SQLITE_FILE = "schocken.sqlite3"

_COPY = re.compile(r"COPY (\S+) FROM '([^']+)'")


class ExportCounts(TypedDict):
    games: int
    tables: int


def _new_folder(out: Path) -> Path:
    """``out`` made (resolved) if it does not exist; refused if it holds anything."""
    out = Path(out).resolve()
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    return out


def backup_folder(store: SQLiteStore | PostgresStore | MemoryStore, out: Path) -> ExportCounts:
    """The backup of ``store`` into ``out`` (an in-memory store has none: :class:`TypeError`)."""
    if isinstance(store, SQLiteStore):
        return backup_sqlite(store, out)
    if not isinstance(store, MemoryStore):
        return backup_postgres(store.url, out)
    raise TypeError("only a SQLite or PostgreSQL database can be backed up")


def backup_sqlite(store: SQLiteStore, out: Path) -> ExportCounts:
    """Copy the SQLite database of ``store`` into ``out/schocken.sqlite3`` (SQLite's online
    backup: one moment, while others write) and write every game's log from that copy."""
    out = _new_folder(out)
    return _with_logs(out, store.backup_to(out / SQLITE_FILE))


def backup_postgres(url: str, out: Path) -> ExportCounts:
    """Copy the PostgreSQL database ``url`` into ``out/schocken.sqlite3`` (one snapshot, while
    servers write) and write every game's log from that copy."""
    from ..storage.convert import copy

    out = _new_folder(out)  # a failed copy leaves it empty (the copy removes its file)
    return _with_logs(out, len(copy(url, str(out / SQLITE_FILE))))


def _with_logs(out: Path, tables: int) -> ExportCounts:
    """Write every game's log from the copy ``out/schocken.sqlite3``."""
    repo = SQLiteStore.open_copy(out / SQLITE_FILE)
    try:
        slugs = repo.stammtisch_slugs()
        games = [_write_log(repo, game_id, out / "logs", slugs) for game_id in repo.game_ids()]
    finally:
        repo.disconnect()
    return {"games": len(games), "tables": tables}


def is_sqlite_backup(folder: Path) -> bool:
    """Whether ``folder`` is a SQLite backup (else an export of the retired DuckDB store)."""
    return (Path(folder) / SQLITE_FILE).is_file()


def restore_sqlite(folder: Path, db: Path) -> None:
    """Create the new SQLite file ``db`` from the backup folder ``folder`` (refuses an existing
    file): the copied database, page for page, in WAL mode."""
    if Path(db).exists():
        raise FileExistsError(f"{db} exists: import only into a new database file")
    SQLiteStore.restore(Path(folder) / SQLITE_FILE, db)


def restore_postgres(folder: Path, url: str) -> dict[str, int]:
    """Fill the empty PostgreSQL database ``url`` with the rows of the backup folder
    ``folder`` (one transaction; refused if it holds rows); rows per table."""
    from ..storage.convert import copy

    return copy(str(Path(folder) / SQLITE_FILE), url)


def _write_log(repo: SQLiteRepository, game_id: int, logs: Path, slugs: dict[int, str]) -> Path:
    """Write one game as a game log (its effective entries replayed into the export form)."""
    record = repo.get_game_by_id(game_id)
    if record is None:
        raise LookupError(f"game {game_id} vanished during the export")
    log = repo.load_log(game_id)
    rt = GameRuntime.replay(header_of(record), effective_entries(log), log[-1].seq if log else 0)
    doc = {**record.header, "events": [dict(e) for e in rt.export]}
    path = logs / slugs[record.stammtisch_id] / f"{game_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")


def import_duckdb_export(folder: Path, db: Path) -> None:
    """Create the new SQLite file ``db`` from an export folder of the retired DuckDB store:
    loaded into a temporary DuckDB file, then converted (every table, one transaction)."""
    if Path(db).exists():
        raise FileExistsError(f"{db} exists: import only into a new database file")
    with tempfile.TemporaryDirectory(prefix="schocken-import-") as tmp:
        old = Path(tmp) / "export.duckdb"
        _load_duckdb_export(Path(folder).resolve(), old)
        convert(old, db)


def _load_duckdb_export(folder: Path, db: Path) -> None:
    """Create the DuckDB file ``db`` from a DuckDB export folder (``EXPORT DATABASE``)."""
    schema = (folder / "schema.sql").read_text(encoding="utf-8")
    load = _COPY.sub(
        lambda m: f"COPY {m[1]} FROM '{_sql_path(folder / Path(m[2]).name)}'",
        (folder / "load.sql").read_text(encoding="utf-8"),
    )
    conn = duckdb.connect(str(db), config={"autoinstall_known_extensions": False})
    try:
        conn.begin()
        conn.execute(schema)
        if load.strip():
            conn.execute(load)
        conn.commit()
    finally:
        conn.close()


def tar_folder(folder: Path) -> bytes:
    """The folder as ``.tar.gz`` (paths relative to it)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    return buf.getvalue()


def untar_into(data: bytes, folder: Path) -> None:
    """Unpack a ``.tar.gz`` of :func:`tar_folder` into ``folder`` (nothing outside it)."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")


def stored_admin_token(instance: Path, create: bool = False) -> str | None:
    """The admin token kept in ``<instance>/admin_token``; ``create``: generate it first if
    missing (readable only by its owner)."""
    path = Path(instance) / ADMIN_TOKEN_FILE
    if create and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(32))
    return path.read_text().strip() if path.exists() else None
