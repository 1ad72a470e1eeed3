"""``schocken export DIR``, ``schocken import DIR``, ``schocken backup DIR``.

The backups are api/domain/backup.py. The database is backed up beside the servers, running
or not (even several processes), without going through them: ``backup`` and ``export`` copy
it in one consistent moment into ``DIR/schocken.sqlite3`` (a SQLite file with SQLite's online
backup API, a PostgreSQL database, ``--database-url``, by reading every table in one snapshot)
plus the game logs. ``backup --server URL`` asks a running server instead
(``POST /api/v1/admin/backup``, api/resources/admin.py). ``import`` makes a new SQLite file from
such a folder (or fills an empty PostgreSQL database, ``--database-url``), or from an export
folder of the retired DuckDB store (Parquet files, converted).
"""

from __future__ import annotations

import sqlite3
import sys
import urllib.error
import urllib.request
from pathlib import Path

import click

from .base import command, duckdb_hint, print_counts
from .database import database_url_option, pick_url
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
        print(f"{verb} abgebrochen: {duckdb_hint(db)}", file=sys.stderr)
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


def _backup_postgres(url: str, folder: str, verb: str) -> int:
    """Back the PostgreSQL database ``url`` up into ``folder`` (one snapshot, beside running
    servers) with the game logs."""
    from ..startup import require_postgres

    require_postgres()  # the extra "postgres", or how to install it
    from ..domain.backup import backup_postgres
    from ..storage import StorageUnavailable
    from ..storage.convert import CopyError
    from ..storage.postgres.store import redacted

    try:
        counts = backup_postgres(url, Path(folder))
    except (FileExistsError, CopyError, StorageUnavailable) as err:
        print(f"{verb} abgebrochen: {err}", file=sys.stderr)
        return 1
    print(
        f"backed up {redacted(url)} ({counts['tables']} tables, {counts['games']} game logs) "
        f"to {folder}"
    )
    return 0


def _backup_here(db: str | None, database_url: str | None, folder: str, verb: str) -> int:
    """``backup``/``export`` without a server: of ``--database-url`` (or
    SCHOCKEN_DATABASE_URL) or of the SQLite file ``--db``."""
    url = pick_url(database_url, db)
    if url:
        return _backup_postgres(url, folder, verb)
    return _backup_sqlite(_sqlite_database(db), folder, verb)


@command("export", "copy the database in one consistent moment and write the game logs")
@click.argument("folder", metavar="DIR")
@click.option("--db", metavar="PATH", help=DB_HELP)
@database_url_option
def export(folder: str, db: str | None, database_url: str | None) -> int:
    """Copy the database into the new (or empty) folder DIR (DIR/schocken.sqlite3) plus every
    game as a game log, also while its servers run (as backup without --server)."""
    return _backup_here(db, database_url, folder, "Export")


@command("import", "create a database from a backup or export folder")
@click.argument("folder", metavar="DIR")
@click.option(
    "--db", metavar="PATH", help="new SQLite database file (default: instance/schocken.sqlite3)"
)
@click.option(
    "--database-url",
    "database_url",
    metavar="URL",
    help="an empty PostgreSQL database postgresql://user@host/name to fill instead",
)
def import_(folder: str, db: str | None, database_url: str | None) -> int:
    """Create a new SQLite file from the folder DIR written by backup or export, or by the
    export of the retired DuckDB store (its Parquet files are converted); with --database-url
    fill an empty PostgreSQL database from a backup folder instead."""
    import duckdb

    from ..config import database_file, instance_path
    from ..domain.backup import import_duckdb_export, is_sqlite_backup, restore_sqlite
    from ..storage import MigrationError
    from ..storage.convert import ConvertError

    if database_url:
        return _import_postgres(folder, db, database_url)
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


def _import_postgres(folder: str, db: str | None, url: str) -> int:
    """``schocken import DIR --database-url URL``: the backup's rows into the empty database."""
    from ..startup import require_postgres

    require_postgres()  # the extra "postgres", or how to install it
    from ..domain.backup import is_sqlite_backup, restore_postgres
    from ..storage import StorageUnavailable
    from ..storage.convert import CopyError
    from ..storage.postgres.store import redacted

    if db:
        raise click.UsageError("--db and --database-url: one database, please")
    if not is_sqlite_backup(Path(folder)):
        print(
            f"Import abgebrochen: {folder} ist kein Backup-Ordner (keine schocken.sqlite3). "
            "Eine Export-Mappe des alten DuckDB-Speichers erst in eine SQLite-Datei importieren "
            "(schocken import DIR --db NEU.sqlite3), dann schocken copy NEU.sqlite3 URL.",
            file=sys.stderr,
        )
        return 1
    try:
        counts = restore_postgres(Path(folder), url)
    except (CopyError, StorageUnavailable) as err:
        print(f"Import abgebrochen: {err}", file=sys.stderr)
        return 1
    print_counts(counts)
    print(f"imported {folder} into {redacted(url)}")
    return 0


@command("backup", "back up the database, beside running servers or through one")
@click.argument("folder", metavar="DIR")
@click.option(
    "--db",
    metavar="PATH",
    help="SQLite file to copy directly, server running or not (default: instance/schocken.sqlite3)",
)
@database_url_option
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
    folder: str,
    db: str | None,
    database_url: str | None,
    server: str | None,
    token: str | None,
    timeout: float,
) -> int:
    """Back up into the new (or empty) folder DIR. The database (--db, --database-url, or the
    configured one) is copied directly into DIR/schocken.sqlite3, one consistent moment while
    its servers go on writing (SQLite's online backup API; of PostgreSQL every table read in
    one snapshot), plus every game as a game log. With --server ask a running server for a
    backup instead (POST /api/v1/admin/backup with the admin token)."""
    if server is None:
        return _backup_here(db, database_url, folder, "Backup")
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
