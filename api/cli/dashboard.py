"""``schocken dashboard build`` and ``schocken demo``: the statistics site.

``dashboard build`` reads the statistics read model of the SQLite database (refreshing the
stale Stammtische first, under the one-refresher lock), also while ``schocken serve`` runs;
``--server URL`` downloads the site a running server builds (``/dashboard/site.zip``) instead.
"""

from __future__ import annotations

import io
import sys
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

import click

from api.rules import count

from .base import Group, command, duckdb_hint
from .database import database_url_option, open_database, pick_url

if TYPE_CHECKING:
    from ..storage import PostgresStore, SQLiteStore

DB_HELP = "SQLite database file (default: the server's, instance/schocken.sqlite3)"
PROGRESS_HELP = "show the bar even without a terminal"


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


def _database(db: str | None) -> str:
    """``--db`` or the configured database file; the default one is first converted from the
    retired store's ``instance/schocken.duckdb`` if only that exists (as on the server's
    first start)."""
    from ..config import default_database, old_default_database
    from ..storage.convert import convert_on_first_start

    if db:
        return db
    path, old = default_database(), old_default_database()
    if old is not None:
        told = convert_on_first_start(path, old)
        if told:
            print(told, file=sys.stderr)
    return path


def _store(db: str | None, database_url: str | None) -> SQLiteStore | PostgresStore | None:
    """The store of ``--database-url`` (or SCHOCKEN_DATABASE_URL) or of the SQLite file
    ``--db``; None (with the reason on stderr) when there is none."""
    from ..storage.convert import is_duckdb_file

    url = pick_url(database_url, db)
    if url:
        return open_database(url, "")
    db = _database(db)
    if not Path(db).exists():
        print(
            f"Keine Datenbank {db} (erst `schocken demo` oder `schocken serve`).", file=sys.stderr
        )
        return None
    if is_duckdb_file(db):
        print(duckdb_hint(db), file=sys.stderr)
        return None
    return open_database(None, db)


dashboard = Group(
    "dashboard",
    short_help="the static statistics site",
    help="The static statistics site.",
)


@dashboard.command("build", short_help="write the static site (plain files, opens from file://)")
@click.option("--out", metavar="DIR", required=True, help="output folder")
@click.option("--stammtisch", metavar="SLUG", help="only this Stammtisch")
@click.option("--db", metavar="PATH", help=DB_HELP)
@database_url_option
@click.option("--server", metavar="URL", help="fetch the site from a running server instead")
@click.option("--include-private", is_flag=True, help="also private Stammtische (the file's owner)")
@click.option("--progress", is_flag=True, help=PROGRESS_HELP)
def build(
    out: str,
    stammtisch: str | None,
    db: str | None,
    database_url: str | None,
    server: str | None,
    include_private: bool,
    progress: bool,
) -> int:
    """Write the static site (plain files that open from file://) from the statistics read
    model of the SQLite or PostgreSQL database, or from a running server (--server)."""
    from dashboard.readmodel import ReadModel
    from dashboard.site import build_site

    folder = Path(out)
    if server:
        return _from_server(server, folder, stammtisch)
    store = _store(db, database_url)
    if store is None:
        return 1
    started = time.perf_counter()
    try:
        result = build_site(
            ReadModel(store.repository(), refresh_first=True),
            folder,
            slugs=[stammtisch] if stammtisch else None,
            include_private=include_private,
            progress=ProgressBar("Dashboard", force=progress),
        )
    except KeyError as err:
        print(err.args[0], file=sys.stderr)
        return 1
    finally:
        store.close()
    print(
        f"{count(result.pages, 'Seite', 'Seiten')} für "
        f"{count(result.stammtische, 'Stammtisch', 'Stammtische')} in "
        f"{time.perf_counter() - started:.1f} s: {folder / 'index.html'}",
        file=sys.stderr,
    )
    return 0


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
        f"Dashboard vom Server {url} nach {out} geschrieben ({count(len(names), 'Datei', 'Dateien')}).",
        file=sys.stderr,
    )
    return 0


@command("demo", "create a demo Stammtisch with ten years of simulated games")
@click.option("--db", metavar="PATH", help=DB_HELP)
@click.option("--slug", default="demo", help="short name of the demo Stammtisch")
@click.option("--years", type=int, default=10, help="years of weekly games (default 10)")
@click.option("--seed", type=int, default=1, help="random seed (default 1)")
@click.option("--site", metavar="DIR", help="also build its dashboard into DIR")
@click.option("--progress", is_flag=True, help=PROGRESS_HELP)
@database_url_option
def demo(
    db: str | None, slug: str, years: int, seed: int, site: str | None, progress: bool,
    database_url: str | None,
) -> int:  # fmt: skip
    """Create the demo Stammtisch (weekly games of ten simulated years) in the SQLite
    database (or the PostgreSQL one of --database-url / SCHOCKEN_DATABASE_URL); nothing to
    do if it is there already."""
    from dashboard.demo import create_demo

    from ..domain import Conflict
    from ..storage.convert import is_duckdb_file

    url = pick_url(database_url, db)
    db = url or _database(db)
    if not url and is_duckdb_file(db):
        print(duckdb_hint(db), file=sys.stderr)
        return 1
    store = open_database(url, db)
    if url:
        from ..storage.postgres.store import redacted  # no password in a message

        db = redacted(url)
    started = time.perf_counter()
    try:
        info = create_demo(
            store,
            slug=slug,
            years=years,
            seed=seed,
            progress=ProgressBar("Simulation", force=progress),
        )
        if site:
            _demo_site(store, site, info["slug"], progress)
    except Conflict:
        # the demo is there already: nothing to do (so `schocken demo && schocken serve` can
        # be run again and again), but say where its key is
        print(_demo_there(db, url, slug), file=sys.stderr)
        return 0
    finally:
        store.close()
    first, last = info["years"]
    kept = "" if url else _keep_demo_key(db, info["slug"], info["token"])
    print(
        f"Demo-Stammtisch „{info['slug']}“: {info['games']} Spiele ({first}–{last}), "
        f"{info['turns']} Züge in {time.perf_counter() - started:.1f} s, Datenbank {db}.\n"
        f"Schreibschlüssel: {info['token']}{kept}",
        file=sys.stderr,
    )
    if site:
        print(f"Dashboard: {Path(site) / 'index.html'}", file=sys.stderr)
    else:
        print(
            "Weiter: schocken dashboard build --out site (oder schocken serve → /dashboard/)",
            file=sys.stderr,
        )
    return 0


def _keep_demo_key(db: str, slug: str, token: str) -> str:
    """Keep the demo's key beside its SQLite database (the start page shows it); the words
    saying where."""
    from ..config import instance_folder, instance_path
    from ..domain.demo_key import save_demo_key

    path = save_demo_key(instance_folder(db, instance_path()), slug, token)
    return f"\n(aufbewahrt in {path}; die Startseite von `schocken serve` zeigt ihn)"


def _demo_there(db: str, url: str | None, slug: str) -> str:
    """What `schocken demo` says when the demo exists already: where its key is."""
    from ..config import instance_folder, instance_path
    from ..domain.demo_key import demo_key_path, saved_demo_key

    folder = instance_folder(db, instance_path())
    saved = None if url else saved_demo_key(folder)
    where = (
        f"Sein Schlüssel steht in {demo_key_path(folder)} und auf der Startseite von "
        "`schocken serve` (auf diesem Rechner)."
        if saved and saved[0] == slug
        else "Sein Schlüssel wurde beim Anlegen angezeigt."
    )
    return (
        f"Den Demo-Stammtisch „{slug}“ gibt es schon. Nichts zu tun. {where} Einen neuen "
        f"Schlüssel gibt `schocken key rotate {slug}`; einen zweiten Demo-Stammtisch --slug."
    )


def _demo_site(store: SQLiteStore | PostgresStore, site: str, slug: str, progress: bool) -> None:
    """Build the demo Stammtisch's dashboard into ``site`` from the open store."""
    from dashboard.readmodel import ReadModel
    from dashboard.site import build_site

    repo = store.repository()
    try:
        source = ReadModel(repo, refresh_first=True)
        build_site(source, site, slugs=[slug], progress=ProgressBar("Dashboard", force=progress))
    finally:
        repo.close()


COMMANDS = (dashboard, demo)
