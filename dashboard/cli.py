"""``schocken dashboard build`` and ``schocken demo`` (registered by ``api/cli_server.py``).

``dashboard build`` reads a stopped server's DuckDB file read-only. While ``schocken serve``
runs, DuckDB refuses a second process, so the command says so and offers the way through the
server: ``--server URL`` downloads the site the server builds (``/dashboard/site.zip``).
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Any, TextIO

LOCKED_HINT = (
    "Die Datenbank {db} ist gerade von einem anderen Prozess geöffnet (läuft `schocken serve`?). "
    "DuckDB erlaubt nur einen Prozess pro Datei. Der laufende Server zeigt das Dashboard unter "
    "/dashboard/; als Dateien holen: schocken dashboard build --server http://127.0.0.1:5000 "
    "--out {out}"
)


class ProgressBar:
    """A one-line bar on stderr: ``[#####.....] 5/11 demo/2020.html``; silent unless a TTY."""

    def __init__(self, label: str, stream: TextIO | None = None, force: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.enabled = force or self.stream.isatty()
        self.label = label
        self.last = 0.0

    def __call__(self, done: int, total: int, what: str = "") -> None:
        now = time.monotonic()
        if not self.enabled or (done < total and now - self.last < 0.1):
            return
        self.last = now
        width = 30
        filled = width * done // max(total, 1)
        line = f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {what}"
        self.stream.write(line[:120].ljust(80))
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def default_db() -> str:
    """The file ``schocken serve`` uses: ``$SCHOCKEN_DATABASE`` or ``instance/schocken.duckdb``."""
    from flask import Flask

    from api.config import Config

    if Config.DATABASE:
        return Config.DATABASE
    instance = Flask("api.app", instance_relative_config=True).instance_path
    return os.path.join(instance, "schocken.duckdb")


def _from_server(url: str, out: Path, slug: str | None) -> int:
    target = url.rstrip("/") + "/dashboard/site.zip"
    with urllib.request.urlopen(target, timeout=600) as response:  # noqa: S310 - user's URL
        data = response.read()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = [
            n for n in zf.namelist() if slug is None or "/" not in n or n.startswith(f"{slug}/")
        ]
        for name in names:
            path = (out / name).resolve()
            if out.resolve() not in path.parents:
                raise ValueError(f"unsafe path in archive: {name}")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(zf.read(name))
    print(
        f"Dashboard vom Server {url} nach {out} geschrieben ({len(names)} Dateien).",
        file=sys.stderr,
    )
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    """Write the static site from a DuckDB file (read-only) or from a running server."""
    import duckdb

    from .site import build_site

    out = Path(args.out)
    if args.server:
        return _from_server(args.server, out, args.stammtisch)
    db = args.db or default_db()
    if not Path(db).exists():
        print(
            f"Keine Datenbank {db} (erst `schocken demo` oder `schocken serve`).", file=sys.stderr
        )
        return 1
    try:
        conn = duckdb.connect(db, read_only=True, config={"autoinstall_known_extensions": False})
    except duckdb.IOException as err:
        if "lock" not in str(err).lower():
            raise
        print(LOCKED_HINT.format(db=db, out=out), file=sys.stderr)
        return 2
    started = time.perf_counter()
    try:
        result = build_site(
            conn,
            out,
            slugs=[args.stammtisch] if args.stammtisch else None,
            include_private=args.include_private,
            progress=ProgressBar("Dashboard", force=args.progress),
        )
    except KeyError as err:
        print(err.args[0], file=sys.stderr)
        return 1
    finally:
        conn.close()
    print(
        f"{result.pages} Seiten für {result.stammtische} Stammtisch(e) in "
        f"{time.perf_counter() - started:.1f} s: {out / 'index.html'}",
        file=sys.stderr,
    )
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """Create the demo Stammtisch (ten years of simulated weekly games) in the DuckDB file."""
    import duckdb

    from api.domain import Conflict
    from api.storage import DuckDBStore

    from .demo import create_demo

    db = args.db or default_db()
    try:
        store = DuckDBStore(db)
    except duckdb.IOException as err:
        if "lock" not in str(err).lower():
            raise
        print(
            f"Die Datenbank {db} ist gerade geöffnet (läuft `schocken serve`?): "
            "den Server anhalten, dann `schocken demo`, oder mit --db eine andere Datei wählen.",
            file=sys.stderr,
        )
        return 2
    started = time.perf_counter()
    try:
        info = create_demo(
            store,
            slug=args.slug,
            years=args.years,
            seed=args.seed,
            progress=ProgressBar("Simulation", force=args.progress),
        )
        if args.site:
            from .site import build_site

            repo = store.repository()
            try:
                build_site(
                    repo._cur,  # noqa: SLF001 - the DuckDB adapter's cursor
                    args.site,
                    slugs=[info["slug"]],
                    progress=ProgressBar("Dashboard", force=args.progress),
                )
            finally:
                repo.close()
    except Conflict as err:
        # the demo is there already: nothing to do (so `schocken demo && schocken serve` can
        # be run again and again)
        print(f"{err.message} Nichts zu tun (ein zweiter: --slug).", file=sys.stderr)
        return 0
    finally:
        store.close()
    first, last = info["years"]
    print(
        f"Demo-Stammtisch „{info['slug']}“: {info['games']} Spiele ({first}–{last}), "
        f"{info['turns']} Züge in {time.perf_counter() - started:.1f} s, Datenbank {db}.\n"
        f"Schreibschlüssel (nur jetzt sichtbar): {info['token']}",
        file=sys.stderr,
    )
    if args.site:
        print(f"Dashboard: {Path(args.site) / 'index.html'}", file=sys.stderr)
    else:
        print(
            "Weiter: schocken dashboard build --out site (oder schocken serve → /dashboard/)",
            file=sys.stderr,
        )
    return 0


def register(sub: Any) -> None:
    """Add ``dashboard build`` and ``demo`` to the ``schocken`` subparsers."""
    p = sub.add_parser("dashboard", help="the static statistics site")
    dsub = p.add_subparsers(dest="dashboard_command", required=True)
    b = dsub.add_parser("build", help="write the static site (plain files, opens from file://)")
    b.add_argument("--out", required=True, help="output folder")
    b.add_argument("--stammtisch", metavar="SLUG", help="only this Stammtisch")
    b.add_argument("--db", help="DuckDB file (default: the server's, instance/schocken.duckdb)")
    b.add_argument("--server", metavar="URL", help="fetch the site from a running server instead")
    b.add_argument(
        "--include-private", action="store_true", help="also private Stammtische (the file's owner)"
    )
    b.add_argument("--progress", action="store_true", help="show the bar even without a terminal")
    b.set_defaults(func=cmd_build)

    p = sub.add_parser("demo", help="create a demo Stammtisch with ten years of simulated games")
    p.add_argument("--db", help="DuckDB file (default: the server's, instance/schocken.duckdb)")
    p.add_argument("--slug", default="demo", help="short name of the demo Stammtisch")
    p.add_argument("--years", type=int, default=10, help="years of weekly games (default 10)")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--site", metavar="DIR", help="also build its dashboard into DIR")
    p.add_argument("--progress", action="store_true", help="show the bar even without a terminal")
    p.set_defaults(func=cmd_demo)
