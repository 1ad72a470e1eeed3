"""``schocken serve``, ``schocken openapi``, ``schocken rebuild``: the server's commands.

Flask is imported inside the commands, so that ``schocken replay`` never imports it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .base import command, duckdb_hint
from .database import database_url_option, pick_url

if TYPE_CHECKING:
    from flask import Flask

DEFAULT_OPENAPI = Path(__file__).resolve().parents[2] / "openapi.yaml"
DB_HELP = "SQLite database file (default: instance/schocken.sqlite3)"


def openapi_yaml() -> str:
    """The OpenAPI document of the app, as committed in ``openapi.yaml``."""
    from ..app import create_app

    app = create_app({"STORAGE": "memory"})
    text: str = app.extensions["schocken_api"].spec.to_yaml(
        {"sort_keys": True, "allow_unicode": True}
    )
    return text


def open_app(db: str | None, url: str | None = None) -> Flask | None:
    """The app on the SQLite file ``db`` (default: the configured file) or the PostgreSQL
    database ``url``, or None with a clear message when it cannot be opened (an old DuckDB
    file: how to convert it)."""
    import sqlite3

    from ..app import create_app
    from ..storage import MigrationError, StorageUnavailable
    from ..storage.convert import ConvertError, is_duckdb_file

    if db and is_duckdb_file(db):
        print(duckdb_hint(db), file=sys.stderr)
        return None
    where = {"DATABASE_URL": url} if url else {"DATABASE": db, "DATABASE_URL": None} if db else {}
    try:
        return create_app(where)
    except (sqlite3.Error, MigrationError, ConvertError, ValueError, StorageUnavailable) as err:
        print(f"Die Datenbank ist nicht zu öffnen: {err}", file=sys.stderr)
        return None


#: worker processes of ``schocken serve`` on SQLite: two per core, at least 4, at most 12 (each
#: gunicorn's gevent worker: a greenlet per connection, api/cli/serving.py). Several
#: processes, not one: a request's work holds its process's interpreter, and a process waiting
#: for its fsync after a commit leaves the core to another. Each process holds ~60-130 MB.
WORKERS = max(4, min(2 * (os.cpu_count() or 2), 12))


@command("serve", "serve the REST API (gunicorn: gevent worker processes)")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option("--port", type=int, default=5000, show_default=True, help="port to listen on")
@click.option("--db", metavar="PATH", help=DB_HELP)
@database_url_option
@click.option(
    "--workers",
    type=int,
    default=None,
    help=f"worker processes (default {WORKERS} on SQLite; the in-memory store: 1)",
)
@click.option(
    "--background/--no-background",
    default=True,
    show_default=True,
    help="run the statistics refresher and the webhook sender beside the workers "
    "(--no-background: they run as services of their own, api/cli/HOSTING.md)",
)
def serve(
    host: str, port: int, db: str | None, database_url: str | None, workers: int | None,
    background: bool,
) -> int:  # fmt: skip
    """Serve the API, the pub form and the dashboard with gunicorn: worker processes (gevent:
    a greenlet per connection), each with its own connections to the database; beside them
    the statistics refresher and the webhook sender (api/cli/serving.py)."""
    from dashboard.refresher import interval_of

    from .serving import exec_server

    url = pick_url(database_url, db)
    app = open_app(db, url)  # creates and migrates the database once, before any worker starts
    if app is None:
        return 1
    storage, database = app.config["STORAGE"], app.config["DATABASE"]
    refresh = interval_of(app) if storage in ("sqlite", "postgresql") else 0.0
    app.extensions["schocken"].store.close()  # no connection crosses the fork
    if storage == "memory":  # the fake lives in one process
        if workers not in (None, 1):
            print(f"--workers {workers}: {storage} serves from one process", file=sys.stderr)
            return 2
        workers = 1
    workers = workers or WORKERS
    where = database or "in memory"
    if url:
        from ..storage.postgres.store import redacted  # no password (nor ?password=) shown

        where = redacted(url)
        _shared_secrets_hint()
    print(
        f"Schocken API on http://{host}:{port}/ (docs: /docs), database {where}, "
        f"{workers} worker(s)",
        flush=True,
    )
    config = {"STORAGE": storage, "DATABASE": database, "DATABASE_URL": url, "LISTEN_HOST": host}
    exec_server(config, host, port, workers, refresh, background)  # does not return
    return 0


def _shared_secrets_hint() -> None:
    """On PostgreSQL, servers on other machines may share the database: say once that they
    need the same session key and admin token, where these are generated, not configured."""
    from ..config import settings

    config = settings()
    missing = [f"SCHOCKEN_{k}" for k in ("SECRET_KEY", "ADMIN_TOKEN") if not config[k]]
    if missing:
        print(
            f"Hinweis: {' und '.join(missing)} nicht gesetzt; sie werden im Instanzordner "
            "erzeugt. Server auf anderen Rechnern an derselben Datenbank brauchen dieselben "
            "Werte (in der Umgebung setzen), sonst gilt eine Anmeldung nur auf einem.",
            file=sys.stderr,
        )


@command("openapi", "write openapi.yaml generated from the app")
@click.option(
    "--out",
    metavar="PATH",
    default=str(DEFAULT_OPENAPI),
    help="target file (default: openapi.yaml of the checkout)",
)
@click.option("--check", is_flag=True, help="only check it is up to date")
def openapi(out: str, check: bool) -> int:
    """Write openapi.yaml from the app (or, with --check, exit 1 if it is out of date)."""
    text = openapi_yaml()
    target = Path(out)
    if check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"{target} is out of date: run `schocken openapi`", file=sys.stderr)
            return 1
        print(f"{target} is up to date")
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}")
    return 0


@command("rebuild", "replay every game log and rewrite the fact tables")
@click.option("--db", metavar="PATH", help=DB_HELP)
@database_url_option
def rebuild(db: str | None, database_url: str | None) -> int:
    """Replay every game's log and rewrite its facts (the server must not be running)."""
    from ..http.context import services

    app = open_app(db, pick_url(database_url, db))
    if app is None:
        return 1

    def progress(done: int, total: int) -> None:
        if done == total or done % 100 == 0:
            print(f"\r{done}/{total} Spiele", end="", file=sys.stderr, flush=True)

    try:
        with app.app_context():
            count = services().rebuild(progress)
    finally:
        app.extensions["schocken"].store.close()
    print(f"\nrebuilt the facts of {count} games", file=sys.stderr)
    return 0


COMMANDS = (serve, openapi, rebuild)
