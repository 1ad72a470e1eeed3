"""``schocken serve``, ``schocken openapi``, ``schocken rebuild``: the server's commands.

Flask is imported inside the commands, so that ``schocken replay`` never imports it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .base import command

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


def open_app(db: str | None) -> Flask | None:
    """The app on the SQLite file ``db`` (default: the configured file), or None with a clear
    message when it cannot be opened (an old DuckDB file: how to convert it)."""
    import sqlite3

    from ..app import create_app
    from ..storage import MigrationError
    from ..storage.convert import ConvertError, is_duckdb_file

    if db and is_duckdb_file(db):
        print(
            f"{db} ist eine DuckDB-Datei: erst umwandeln mit "
            f"schocken convert --from {db} --to NEU.sqlite3",
            file=sys.stderr,
        )
        return None
    try:
        return create_app({"DATABASE": db} if db else {})
    except (sqlite3.Error, MigrationError, ConvertError, ValueError) as err:
        print(f"Die Datenbank ist nicht zu öffnen: {err}", file=sys.stderr)
        return None


@command("serve", "serve the REST API (waitress, embedded DuckDB)")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option("--port", type=int, default=5000, show_default=True, help="port to listen on")
@click.option("--db", metavar="PATH", help=DB_HELP)
@click.option("--threads", type=int, default=8, help="worker threads (default 8)")
def serve(host: str, port: int, db: str | None, threads: int) -> int:
    """Serve the API, the pub form and the dashboard with waitress: one process, threads,
    the embedded DuckDB."""
    from waitress import serve as waitress_serve

    app = open_app(db)
    if app is None:
        return 1
    print(
        f"Schocken API on http://{host}:{port}/ (docs: /docs), "
        f"database {app.config['DATABASE'] or 'in memory'}",
        flush=True,
    )
    _settle_garbage_collector()
    waitress_serve(app, host=host, port=port, threads=threads, ident="schocken")
    return 0


def _settle_garbage_collector() -> None:
    """A long-running server: what exists after start-up (modules, the app, the caches'
    tables) lives as long as the process, so the collector stops walking it, and it runs
    less often (a full collection of a busy server stops every thread for tens of ms)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


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
def rebuild(db: str | None) -> int:
    """Replay every game's log and rewrite its facts (the server must not be running)."""
    from ..http.context import services

    app = open_app(db)
    if app is None:
        return 1

    def progress(done: int, total: int) -> None:
        if done == total or done % 100 == 0:
            print(f"\r{done}/{total} Spiele", end="", file=sys.stderr, flush=True)

    with app.app_context():
        count = services().rebuild(progress)
    print(f"\nrebuilt the facts of {count} games", file=sys.stderr)
    return 0


COMMANDS = (serve, openapi, rebuild)
