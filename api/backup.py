"""Backups: ``schocken export DIR``, ``schocken import DIR``, ``schocken backup DIR``.

An export is a folder with

* ``schema.sql``, ``load.sql`` and one Parquet file per table: DuckDB's ``EXPORT DATABASE``,
  every table including the migrations applied, sequences at their current values;
* ``logs/<stammtisch>/<game>.json``: every game as a game log (GAMELOG.md v1), readable by
  ``schocken replay`` and importable into another Stammtisch, independent of DuckDB.

Everything is read in one transaction, so the folder is one consistent moment even while
games are being recorded. ``schocken import DIR --db NEW`` creates a database file from the
Parquet files (it refuses an existing file) that equals the exported one table by table.

While ``schocken serve`` runs it holds the DuckDB file (one process per file, even read-only),
so ``schocken backup`` goes through the server: ``POST /api/v1/admin/backup`` with the admin
token (``ADMIN_TOKEN`` / ``SCHOCKEN_ADMIN_TOKEN``, else generated once into
``<instance>/admin_token``, readable only by its owner) makes the export inside the server
process into a temporary folder and answers with it as a ``.tar.gz``, which the command unpacks
into DIR. A Stammtisch's token is not enough: a backup holds every Stammtisch's data.
"""

from __future__ import annotations

import hmac
import io
import json
import os
import re
import secrets
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import duckdb
from flask import Flask, current_app, request, send_file
from flask.views import MethodView

from .domain import Conflict, Forbidden, Unauthorized
from .domain.runtime import GameRuntime, effective_entries, header_of

_COPY = re.compile(r"COPY (\S+) FROM '([^']+)'")


def export_database(store: Any, out: Path) -> dict[str, int]:
    """Write the export of a :class:`~api.storage.DuckDBStore` into the new folder ``out``."""
    out = Path(out).resolve()
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    out.mkdir(parents=True, exist_ok=True)
    repo = store.repository()
    cur = repo._cur
    games = 0
    with repo.transaction():
        cur.execute(f"EXPORT DATABASE '{_sql_path(out)}' (FORMAT parquet)")
        slugs = dict(cur.execute("SELECT id, slug FROM stammtische").fetchall())
        for game_id in repo.game_ids():
            record = repo.get_game_by_id(game_id)
            assert record is not None
            log = repo.load_log(game_id)
            rt = GameRuntime.replay(
                header_of(record), effective_entries(log), log[-1].seq if log else 0
            )
            doc = {**record.header, "events": [dict(e) for e in rt.export]}
            path = out / "logs" / slugs[record.stammtisch_id] / f"{game_id}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
            games += 1
    return {"games": games, "tables": len(list(out.glob("*.parquet")))}


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")


def import_database(folder: Path, db: Path) -> None:
    """Create the DuckDB file ``db`` from an export folder (wherever the folder now lives)."""
    folder = Path(folder).resolve()
    if Path(db).exists():
        raise FileExistsError(f"{db} exists: import only into a new database file")
    schema = (folder / "schema.sql").read_text(encoding="utf-8")
    load = _COPY.sub(
        lambda m: f"COPY {m[1]} FROM '{_sql_path(folder / Path(m[2]).name)}'",
        (folder / "load.sql").read_text(encoding="utf-8"),
    )
    Path(db).parent.mkdir(parents=True, exist_ok=True)
    conn = duckdb.connect(str(db), config={"autoinstall_known_extensions": False})
    try:
        conn.begin()
        conn.execute(schema)
        if load.strip():
            conn.execute(load)
        conn.commit()
    except BaseException:
        conn.close()
        Path(db).unlink(missing_ok=True)
        raise
    conn.close()


def tar_folder(folder: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path in sorted(folder.rglob("*")):
            tar.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    return buf.getvalue()


def untar_into(data: bytes, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")


# ------------------------------------------------------------------------------ the endpoint
def admin_token(app: Flask) -> str:
    token = app.config.get("ADMIN_TOKEN")
    if token:
        return str(token)
    path = Path(app.instance_path) / "admin_token"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_urlsafe(32))
    token = path.read_text().strip()
    app.config["ADMIN_TOKEN"] = token
    return token


def _check_admin() -> None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Dafür braucht es den Admin-Schlüssel des Servers (Bearer-Token).")
    if not hmac.compare_digest(token.strip().encode(), admin_token(current_app).encode()):
        raise Forbidden("Das ist nicht der Admin-Schlüssel dieses Servers.")


def init_backup(app: Flask, api: Any) -> None:
    from .http.blueprint import Blueprint

    blp = Blueprint(
        "admin",
        __name__,
        url_prefix="/api/v1/admin",
        description="Server administration: a consistent backup while the server runs.",
    )

    @blp.route("/backup")
    class Backup(MethodView):
        @blp.response(
            200,
            {"type": "string", "format": "binary"},
            content_type="application/gzip",
            description="The export folder (Parquet files, schema, game logs) as .tar.gz.",
        )
        @blp.alt_response(401, response="UNAUTHORIZED")
        @blp.alt_response(403, response="FORBIDDEN")
        @blp.alt_response(409, response="CONFLICT")
        @blp.doc(security=[{"adminToken": []}], operationId="backupDatabase")
        def post(self):
            """Back up the whole database (admin token)

            Export inside the server process (DuckDB lets one process hold the file): every
            table as Parquet plus every game as a game log, one consistent moment; what
            `schocken backup DIR` fetches and `schocken import DIR` restores."""
            _check_admin()
            store = current_app.extensions["schocken"].store
            if not hasattr(store, "_conn"):
                raise Conflict("Nur eine DuckDB-Datenbank lässt sich sichern.")
            with tempfile.TemporaryDirectory(prefix="schocken-backup-") as tmp:
                export_database(store, Path(tmp) / "export")
                data = tar_folder(Path(tmp) / "export")
            return send_file(
                io.BytesIO(data),
                mimetype="application/gzip",
                as_attachment=True,
                download_name="schocken-backup.tar.gz",
            )

    api.spec.components.security_scheme(
        "adminToken",
        {
            "type": "http",
            "scheme": "bearer",
            "description": "The server's admin token (ADMIN_TOKEN or <instance>/admin_token).",
        },
    )
    api.register_blueprint(blp)


# ------------------------------------------------------------------------------ the commands
def _default_db() -> Path:
    from .app import create_app

    return Path(create_app({"STORAGE": "memory"}).instance_path) / "schocken.duckdb"


def cmd_export(args: Any) -> int:
    """``schocken export DIR``: the server must not be running (it holds the file)."""
    import sys

    from .cli_server import _open_app

    app = _open_app(args)
    if app is None:
        return 1
    try:
        counts = export_database(app.extensions["schocken"].store, Path(args.dir))
    except FileExistsError as err:
        print(f"Export abgebrochen: {err}", file=sys.stderr)
        return 1
    finally:
        app.extensions["schocken"].store.close()
    print(f"exported {counts['tables']} tables and {counts['games']} game logs to {args.dir}")
    return 0


def cmd_import(args: Any) -> int:
    """``schocken import DIR --db NEW``: a new database file from an export."""
    import sys

    db = Path(args.db) if args.db else _default_db()
    try:
        import_database(Path(args.dir), db)
    except (FileExistsError, FileNotFoundError) as err:
        print(f"Import abgebrochen: {err}", file=sys.stderr)
        return 1
    print(f"imported {args.dir} into {db}")
    return 0


def cmd_backup(args: Any) -> int:
    """``schocken backup DIR``: ask the running server for a backup and unpack it."""
    import sys
    import urllib.error
    import urllib.request

    token = args.token or os.environ.get("SCHOCKEN_ADMIN_TOKEN")
    if not token:
        from .app import create_app

        path = Path(create_app({"STORAGE": "memory"}).instance_path) / "admin_token"
        token = path.read_text().strip() if path.exists() else None
    if not token:
        print("Kein Admin-Schlüssel: --token oder SCHOCKEN_ADMIN_TOKEN.", file=sys.stderr)
        return 1
    out = Path(args.dir)
    if out.exists() and any(out.iterdir()):
        print(f"Backup abgebrochen: {out} ist nicht leer.", file=sys.stderr)
        return 1
    req = urllib.request.Request(
        args.server.rstrip("/") + "/api/v1/admin/backup",
        method="POST",
        headers={"Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(req, timeout=args.timeout) as resp:
            data = resp.read()
    except urllib.error.HTTPError as err:
        print(f"Der Server lehnt ab ({err.code}): {err.read().decode()[:300]}", file=sys.stderr)
        return 1
    except OSError as err:
        print(f"Server nicht erreichbar: {err}", file=sys.stderr)
        return 1
    untar_into(data, out)
    print(f"backup of {args.server} written to {out}")
    return 0


def register_cli(sub: Any) -> None:
    p = sub.add_parser("export", help="export the database: Parquet files and game logs")
    p.add_argument("dir", help="new (or empty) folder")
    p.add_argument("--db", help="DuckDB file (default: instance/schocken.duckdb)")
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="create a database file from an export folder")
    p.add_argument("dir", help="folder written by export or backup")
    p.add_argument("--db", help="new DuckDB file (default: instance/schocken.duckdb)")
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("backup", help="back up the database of a running server")
    p.add_argument("dir", help="new (or empty) folder")
    p.add_argument("--server", default="http://127.0.0.1:5000", help="the server's address")
    p.add_argument("--token", help="admin token (default: SCHOCKEN_ADMIN_TOKEN or instance/)")
    p.add_argument("--timeout", type=float, default=300)
    p.set_defaults(func=cmd_backup)
