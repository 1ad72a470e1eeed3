"""``schocken export DIR``, ``schocken import DIR``, ``schocken backup DIR``.

The backups are api/domain/backup.py. The SQLite database is backed up beside the server,
running or not (even several processes), without going through it: ``backup`` and ``export``
copy it with SQLite's online backup API into ``DIR/schocken.sqlite3`` plus the game logs.
``backup --server URL`` asks a running server instead (``POST /api/v1/admin/backup``,
api/resources/admin.py). ``import`` makes a new SQLite file from such a folder, or from an
export folder of the retired DuckDB store (Parquet files, converted).
"""

from __future__ import annotations

import sqlite3
import sys
import urllib.error
import urllib.request
from pathlib import Path

import click

from .base import command
from .server import DB_HELP

#: where ``schocken backup`` finds the server when no ``--server`` is given
DEFAULT_SERVER = "http://127.0.0.1:5000"


def _sqlite_database(db: str | None) -> str:
    """The SQLite file a command works on: ``--db`` or the configured database."""
    from ..config import default_database

    return db or default_database()


def _backup_sqlite(db: str, folder: str, verb: str) -> int:
    """Back the SQLite file ``db`` up into ``folder`` (SQLite's online backup, beside a
    running server) with the game logs."""
    from ..domain.backup import backup_sqlite
    from ..startup import describe
    from ..storage import MigrationError, SQLiteStore
    from ..storage.convert import is_duckdb_file

    if not Path(db).is_file():
        print(f"{verb} abgebrochen: keine Datenbank {db}.", file=sys.stderr)
        return 1
    if is_duckdb_file(db):
        print(
            f"{verb} abgebrochen: {db} ist eine DuckDB-Datei; erst umwandeln: "
            f"schocken convert --from {db} --to NEU.sqlite3",
            file=sys.stderr,
        )
        return 1
    try:
        store = SQLiteStore(db)
    except (MigrationError, sqlite3.Error) as err:
        print(f"{verb} abgebrochen: {describe(err, db)}", file=sys.stderr)
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


@command("export", "copy the database (SQLite's online backup) and write the game logs")
@click.argument("folder", metavar="DIR")
@click.option("--db", metavar="PATH", help=DB_HELP)
def export(folder: str, db: str | None) -> int:
    """Copy the SQLite database into the new (or empty) folder DIR (DIR/schocken.sqlite3) plus
    every game as a game log, also while its server runs (as backup without --server)."""
    return _backup_sqlite(_sqlite_database(db), folder, "Export")


@command("import", "create a database file from a backup or export folder")
@click.argument("folder", metavar="DIR")
@click.option(
    "--db", metavar="PATH", help="new SQLite database file (default: instance/schocken.sqlite3)"
)
def import_(folder: str, db: str | None) -> int:
    """Create a new SQLite file from the folder DIR written by backup or export, or by the
    export of the retired DuckDB store (its Parquet files are converted)."""
    import duckdb

    from ..config import database_file, instance_path
    from ..domain.backup import import_duckdb_export, is_sqlite_backup, restore_sqlite
    from ..storage import MigrationError
    from ..storage.convert import ConvertError

    target = Path(db) if db else Path(database_file(instance_path()))
    try:
        if is_sqlite_backup(Path(folder)):
            restore_sqlite(Path(folder), target)
        else:
            import_duckdb_export(Path(folder), target)
    except (FileExistsError, FileNotFoundError, MigrationError, sqlite3.Error) as err:
        print(f"Import abgebrochen: {err}", file=sys.stderr)
        return 1
    except (ConvertError, duckdb.Error) as err:
        print(f"Import abgebrochen: {err}", file=sys.stderr)
        return 1
    print(f"imported {folder} into {target}")
    return 0


@command("backup", "back up the database of a running server")
@click.argument("folder", metavar="DIR")
@click.option(
    "--db",
    metavar="PATH",
    help="SQLite file to copy directly, server running or not (default: instance/schocken.sqlite3)",
)
@click.option(
    "--server",
    metavar="URL",
    default=None,
    help=f"a running server's address, e.g. {DEFAULT_SERVER}",
)
@click.option(
    "--token",
    metavar="TOKEN",
    envvar="SCHOCKEN_ADMIN_TOKEN",
    help="admin token (default: SCHOCKEN_ADMIN_TOKEN or the database's instance/admin_token)",
)
@click.option("--timeout", type=float, default=300, help="seconds to wait for the server")
def backup(
    folder: str, db: str | None, server: str | None, token: str | None, timeout: float
) -> int:
    """Back up into the new (or empty) folder DIR. The SQLite database (--db, or the
    configured one) is copied directly with SQLite's online backup API, one consistent moment
    while its server goes on writing. With --server ask a running server for a backup
    instead (POST /api/v1/admin/backup with the admin token)."""
    if server is None:
        return _backup_sqlite(_sqlite_database(db), folder, "Backup")
    return _backup_through(folder, server, token, timeout)


def _backup_through(folder: str, server: str, token: str | None, timeout: float) -> int:
    """``schocken backup`` through the running server, unpacked into ``folder``."""
    from ..config import default_instance_folder
    from ..domain.backup import stored_admin_token, untar_into

    token = token or stored_admin_token(Path(default_instance_folder()))
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
