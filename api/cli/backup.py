"""``schocken export DIR``, ``schocken import DIR``, ``schocken backup DIR``.

The export and the import are api/domain/backup.py; ``backup`` asks the running server for an
export (``POST /api/v1/admin/backup``, api/resources/admin.py) and unpacks it into DIR.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from pathlib import Path

import click

from .base import command
from .server import DB_HELP, open_app


@command("export", "export the database: Parquet files and game logs")
@click.argument("folder", metavar="DIR")
@click.option("--db", metavar="PATH", help=DB_HELP)
def export(folder: str, db: str | None) -> int:
    """Export the database into the new (or empty) folder DIR: every table as Parquet plus
    every game as a game log. The server must not be running (it holds the file)."""
    from ..domain.backup import export_database
    from ..storage import DuckDBStore

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


@command("import", "create a database file from an export folder")
@click.argument("folder", metavar="DIR")
@click.option("--db", metavar="PATH", help="new DuckDB file (default: instance/schocken.duckdb)")
def import_(folder: str, db: str | None) -> int:
    """Create a new database file from the folder DIR written by export or backup."""
    from ..config import instance_path
    from ..domain.backup import import_database

    target = Path(db) if db else Path(instance_path()) / "schocken.duckdb"
    try:
        import_database(Path(folder), target)
    except (FileExistsError, FileNotFoundError) as err:
        print(f"Import abgebrochen: {err}", file=sys.stderr)
        return 1
    print(f"imported {folder} into {target}")
    return 0


@command("backup", "back up the database of a running server")
@click.argument("folder", metavar="DIR")
@click.option(
    "--server", metavar="URL", default="http://127.0.0.1:5000", help="the server's address"
)
@click.option(
    "--token",
    metavar="TOKEN",
    envvar="SCHOCKEN_ADMIN_TOKEN",
    help="admin token (default: SCHOCKEN_ADMIN_TOKEN or instance/admin_token)",
)
@click.option("--timeout", type=float, default=300, help="seconds to wait for the server")
def backup(folder: str, server: str, token: str | None, timeout: float) -> int:
    """Ask the running server for a backup (POST /api/v1/admin/backup with the admin token)
    and unpack it into the new (or empty) folder DIR."""
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
