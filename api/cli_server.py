"""The server's subcommands of ``schocken``: ``serve``, ``openapi``, ``rebuild``.

Registered into the engine's parser by :func:`register` (see ``api/cli.py``), so that
``schocken replay`` never imports Flask.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

DEFAULT_OPENAPI = Path(__file__).resolve().parent.parent / "openapi.yaml"


def openapi_yaml() -> str:
    """The OpenAPI document of the app, as committed in ``openapi.yaml``."""
    from .app import create_app

    app = create_app({"STORAGE": "memory"})
    return app.extensions["schocken_api"].spec.to_yaml({"sort_keys": True, "allow_unicode": True})


def _config(args: argparse.Namespace) -> dict[str, Any]:
    return {"DATABASE": args.db} if args.db else {}


def _open_app(args: argparse.Namespace) -> Any:
    """The app, or None with a clear message when another process holds the DuckDB file."""
    import duckdb

    from .app import create_app

    try:
        return create_app(_config(args))
    except duckdb.IOException as err:
        print(
            f"Die Datenbank ist nicht zu öffnen (läuft schon ein Server darauf?): {err}",
            file=sys.stderr,
        )
        return None


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the API with waitress: one process, threads, the embedded DuckDB."""
    from waitress import serve

    app = _open_app(args)
    if app is None:
        return 1
    print(
        f"Schocken API on http://{args.host}:{args.port}/ (docs: /docs), "
        f"database {app.config['DATABASE'] or 'in memory'}",
        flush=True,
    )
    _settle_garbage_collector()
    serve(app, host=args.host, port=args.port, threads=args.threads, ident="schocken")
    return 0


def _settle_garbage_collector() -> None:
    """A long-running server: what exists after start-up (modules, the app, the caches'
    tables) lives as long as the process, so the collector stops walking it, and it runs
    less often (a full collection of a busy server stops every thread for tens of ms)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


def cmd_openapi(args: argparse.Namespace) -> int:
    """Write ``openapi.yaml`` (or check that it is up to date)."""
    text = openapi_yaml()
    out = Path(args.out)
    if args.check:
        current = out.read_text(encoding="utf-8") if out.exists() else ""
        if current != text:
            print(f"{out} is out of date: run `schocken openapi`", file=sys.stderr)
            return 1
        print(f"{out} is up to date")
        return 0
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    """Replay every game's log and rewrite its facts (the server must not be running)."""
    from .http.context import services

    app = _open_app(args)
    if app is None:
        return 1
    with app.app_context():

        def progress(done: int, total: int) -> None:
            if done == total or done % 100 == 0:
                print(f"\r{done}/{total} Spiele", end="", file=sys.stderr, flush=True)

        count = services().rebuild(progress)
    print(f"\nrebuilt the facts of {count} games", file=sys.stderr)
    return 0


def register(sub: Any) -> None:
    """Add ``serve``, ``openapi`` and ``rebuild`` to the ``schocken`` subparsers."""
    p = sub.add_parser("serve", help="serve the REST API (waitress, embedded DuckDB)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=5000)
    p.add_argument("--db", help="DuckDB file (default: instance/schocken.duckdb)")
    p.add_argument("--threads", type=int, default=8, help="worker threads (default 8)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("openapi", help="write openapi.yaml generated from the app")
    p.add_argument("--out", default=str(DEFAULT_OPENAPI), help="target file")
    p.add_argument("--check", action="store_true", help="only check it is up to date")
    p.set_defaults(func=cmd_openapi)

    p = sub.add_parser("rebuild", help="replay every game log and rewrite the fact tables")
    p.add_argument("--db", help="DuckDB file (default: instance/schocken.duckdb)")
    p.set_defaults(func=cmd_rebuild)

    # backups: `schocken export`, `schocken import`, `schocken backup` (api/backup.py)
    from .backup import register_cli as register_backup

    register_backup(sub)

    # the statistics site: `schocken dashboard build`, `schocken demo` (dashboard/cli.py)
    from dashboard.cli import register as register_dashboard

    register_dashboard(sub)
