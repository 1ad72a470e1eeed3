"""``schocken export DIR``, ``schocken import DIR``, ``schocken backup DIR``.

The export and the import are api/domain/backup.py. A DuckDB file is held by its server (one
process per file): ``backup`` asks the running server for an export (``POST
/api/v1/admin/backup``, api/resources/admin.py) and unpacks it into DIR. A SQLite database is
backed up beside the server, running or not, without going through it: ``backup`` (with
``--db`` or ``SCHOCKEN_STORAGE=sqlite``) and ``export`` copy it with SQLite's online backup
API into ``DIR/schocken.sqlite3`` plus the game logs; ``import`` restores either kind of
folder into a new file.
"""

from __future__ import annotations

import sqlite3
import sys
import urllib.error
import urllib.request
from pathlib import Path

import click

from .base import command
from .server import DB_HELP, open_app

#: where ``schocken backup`` finds the server when no ``--server`` is given
DEFAULT_SERVER = "http://127.0.0.1:5000"


def _sqlite_database(db: str | None) -> str | None:
    """The SQLite file a command works on, or None for DuckDB: ``--db`` when it is a SQLite
    file (or is missing and STORAGE is ``sqlite``); without ``--db`` the configured database
    when STORAGE is ``sqlite``."""
    from ..config import default_database, settings
    from ..storage.sqlite.backup import is_sqlite_file

    configured = settings()["STORAGE"] == "sqlite"
    if db:
        exists = Path(db).exists()
        return db if is_sqlite_file(db) or (configured and not exists) else None
    return default_database() if configured else None


def _backup_sqlite(db: str, folder: str, verb: str) -> int:
    """Back the SQLite file ``db`` up into ``folder`` (SQLite's online backup, beside a
    running server) with the game logs."""
    from ..domain.backup import backup_sqlite
    from ..storage import MigrationError, SQLiteStore

    if not Path(db).is_file():
        print(f"{verb} abgebrochen: keine Datenbank {db}.", file=sys.stderr)
        return 1
    try:
        store = SQLiteStore(db)
    except (MigrationError, sqlite3.Error) as err:
        print(f"{verb} abgebrochen: {err}", file=sys.stderr)
        return 1
    try:
        counts = backup_sqlite(store, Path(folder))
    except (FileExistsError, sqlite3.Error) as err:
        print(f"{verb} abgebrochen: {err}", file=sys.stderr)
        return 1
    finally:
        store.close()
    print(f"backed up {db} ({counts['tables']} tables, {counts['games']} game logs) to {folder}")
    return 0


@command("export", "export the database: Parquet files (SQLite: a copy) and game logs")
@click.argument("folder", metavar="DIR")
@click.option("--db", metavar="PATH", help=DB_HELP)
def export(folder: str, db: str | None) -> int:
    """Export the database into the new (or empty) folder DIR: every table as Parquet plus
    every game as a game log. The server must not be running (it holds the file). A SQLite
    database is copied instead (DIR/schocken.sqlite3), also while its server runs."""
    from ..domain.backup import export_database
    from ..storage import DuckDBStore

    sqlite = _sqlite_database(db)
    if sqlite is not None:
        return _backup_sqlite(sqlite, folder, "Export")
    app = open_app(db)
    if app is None:
        return 1
    store = app.extensions["schocken"].store
    try:
        if not isinstance(store, DuckDBStore):
            print(
                "Export abgebrochen: nur eine DuckDB-Datenbank lässt sich sichern.", file=sys.stderr
            )
            return 1
        counts = export_database(store, Path(folder))
    except FileExistsError as err:
        print(f"Export abgebrochen: {err}", file=sys.stderr)
        return 1
    finally:
        store.close()
    print(f"exported {counts['tables']} tables and {counts['games']} game logs to {folder}")
    return 0


@command("import", "create a database file from an export or backup folder")
@click.argument("folder", metavar="DIR")
@click.option(
    "--db",
    metavar="PATH",
    help="new database file (default: instance/schocken.duckdb, for a SQLite backup "
    "instance/schocken.sqlite3)",
)
def import_(folder: str, db: str | None) -> int:
    """Create a new database file from the folder DIR written by export or backup (a SQLite
    backup becomes a SQLite file, an export a DuckDB file)."""
    from ..config import database_file, instance_path
    from ..domain.backup import import_database, is_sqlite_backup, restore_sqlite
    from ..storage import MigrationError

    sqlite = is_sqlite_backup(Path(folder))
    kind = "sqlite" if sqlite else "duckdb"
    target = Path(db) if db else Path(database_file(instance_path(), kind))
    try:
        if sqlite:
            restore_sqlite(Path(folder), target)
        else:
            import_database(Path(folder), target)
    except (FileExistsError, FileNotFoundError, MigrationError, sqlite3.Error) as err:
        print(f"Import abgebrochen: {err}", file=sys.stderr)
        return 1
    print(f"imported {folder} into {target}")
    return 0


@command("backup", "back up the database of a running server")
@click.argument("folder", metavar="DIR")
@click.option(
    "--db",
    metavar="PATH",
    help="SQLite file to copy directly, server running or not (default with "
    "SCHOCKEN_STORAGE=sqlite: instance/schocken.sqlite3)",
)
@click.option(
    "--server", metavar="URL", default=None, help=f"the server's address (default {DEFAULT_SERVER})"
)
@click.option(
    "--token",
    metavar="TOKEN",
    envvar="SCHOCKEN_ADMIN_TOKEN",
    help="admin token (default: SCHOCKEN_ADMIN_TOKEN or instance/admin_token)",
)
@click.option("--timeout", type=float, default=300, help="seconds to wait for the server")
def backup(
    folder: str, db: str | None, server: str | None, token: str | None, timeout: float
) -> int:
    """Back up into the new (or empty) folder DIR. A SQLite database (--db, or
    SCHOCKEN_STORAGE=sqlite) is copied directly with SQLite's online backup API, one
    consistent moment while its server goes on writing. Otherwise (or with --server) ask the
    running server for a backup (POST /api/v1/admin/backup with the admin token)."""
    if server is None:
        sqlite = _sqlite_database(db)
        if sqlite is not None:
            return _backup_sqlite(sqlite, folder, "Backup")
        if db:
            print(
                f"Backup abgebrochen: {db} ist keine SQLite-Datei. Eine DuckDB-Datenbank "
                "sichert ihr Server (--server) oder, wenn er steht, schocken export.",
                file=sys.stderr,
            )
            return 1
    return _backup_through(folder, server or DEFAULT_SERVER, token, timeout)


def _backup_through(folder: str, server: str, token: str | None, timeout: float) -> int:
    """``schocken backup`` through the running server, unpacked into ``folder``."""
    from ..config import instance_path
    from ..domain.backup import stored_admin_token, untar_into

    token = token or stored_admin_token(Path(instance_path()))
    if not token:
        print("Kein Admin-Schlüssel: --token oder SCHOCKEN_ADMIN_TOKEN.", file=sys.stderr)
        return 1
    out = Path(folder)
    if out.exists() and any(out.iterdir()):
        print(f"Backup abgebrochen: {out} ist nicht leer.", file=sys.stderr)
        return 1
    try:
        data = _fetch_backup(server, token, timeout)
    except urllib.error.HTTPError as err:
        print(f"Der Server lehnt ab ({err.code}): {err.read().decode()[:300]}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"Server nicht erreichbar: {err}", file=sys.stderr)
        return 1
    untar_into(data, out)
    print(f"backup of {server} written to {out}")
    return 0


def _fetch_backup(server: str, token: str, timeout: float) -> bytes:
    req = urllib.request.Request(
        server.rstrip("/") + "/api/v1/admin/backup",
        method="POST",
        headers={"Authorization": f"Bearer {token}"},
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - user's URL
        data: bytes = resp.read()
    return data


COMMANDS = (export, import_, backup)
