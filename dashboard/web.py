"""The dashboard served by the running server at ``/dashboard/``.

DuckDB lets one process open the database file, so while ``schocken serve`` runs the server
itself builds the site, lazily: a request for a page asks the database what the pages depend
on (``queries/freshness.sql``: finished games per Stammtisch and year, names, privacy) and
rebuilds only what changed since the last build – a finished or undone game rebuilds its year
and the all-time page of its Stammtisch, the index when any count changed. A Stammtisch's
pages are built the first time one of them is asked for. Private Stammtische are never part of
this site. ``/dashboard/site.zip`` builds everything and hands the folder to
``schocken dashboard build --server URL``.
"""

from __future__ import annotations

import io
import shutil
import threading
import zipfile
from pathlib import Path
from typing import Any

from flask import Blueprint, Flask, Response, current_app, send_file, send_from_directory

from api.storage import MemoryStore, SQLiteStore

from .site import build_site
from .snapshot import connection_for
from .stats import Connection, run

EXTENSION = "schocken_dashboard"
MARKER = ".schocken-dashboard"

#: per year (``None``: all time) what the pages of that period depend on (``freshness.sql``)
Versions = dict[int | None, tuple[Any, ...]]


class SiteCache:
    """The built folder and, per Stammtisch, the versions its pages were built from."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.built: dict[str, Versions] = {}
        self.index: dict[str, Versions] | None = None
        self.lock = threading.Lock()

    def _clear(self) -> None:
        """Start from an empty folder (pages of a previous run may show what is private now);
        a folder this class did not create is left alone."""
        marker = self.folder / MARKER
        check_folder(self.folder)
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        marker.write_text("built by the Schocken server; emptied on every start\n")

    @staticmethod
    def versions(cursor: Connection) -> dict[str, Versions]:
        now: dict[str, Versions] = {}
        for row in run(cursor, "freshness", include_private=False):
            key = (row["games"], row["entries"], row["last_game"], row["about"])
            now.setdefault(row["slug"], {})[row["year"]] = key
        return now

    def refresh(
        self, cursor: Connection, slug: str | None = None, everything: bool = False
    ) -> None:
        """Rebuild the index when stale, and the pages of ``slug`` (or of every Stammtisch)."""
        with self.lock:
            if self.index is None:
                self._clear()
            now = self.versions(cursor)
            for gone in self.built.keys() - now.keys():  # made private or deleted
                shutil.rmtree(self.folder / gone, ignore_errors=True)
                del self.built[gone]
            wanted = list(now) if everything else [slug] if slug in now else []
            stale = [s for s in wanted if self.built.get(s) != now[s]]
            periods: dict[str, set[int | None]] = {}
            for s in stale:
                old, new = self.built.get(s), now[s]
                if old is not None and old.keys() == new.keys() and old[None] == new[None]:
                    # same years, names and privacy: only the changed years and all time
                    periods[s] = {y for y in new if old[y] != new[y]} | {None}
            if stale or now != self.index:
                build_site(cursor, self.folder, slugs=stale, periods=periods, index_all=True)
                for s in stale:
                    self.built[s] = now[s]
                self.index = now


def _refresh(slug: str | None = None, everything: bool = False) -> Path:
    """The site folder, rebuilt where stale."""
    store: SQLiteStore | MemoryStore = current_app.extensions["schocken"].store
    repository = store.repository()
    try:
        with connection_for(repository) as conn:
            site: SiteCache = current_app.extensions[EXTENSION]
            site.refresh(conn, slug, everything)
            return site.folder
    finally:
        repository.close()


def blueprint() -> Blueprint:
    bp = Blueprint("dashboard", __name__)

    @bp.route("/dashboard/")
    def index() -> Response:
        return send_from_directory(_refresh(), "index.html", max_age=0)

    @bp.route("/dashboard/site.zip")
    def archive() -> Response:
        folder = _refresh(everything=True)
        buffer = io.BytesIO()
        with current_app.extensions[EXTENSION].lock:
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
                for path in sorted(folder.rglob("*")):
                    if path.is_file() and not path.name.startswith("."):
                        zf.write(path, path.relative_to(folder).as_posix())
        buffer.seek(0)
        return send_file(buffer, mimetype="application/zip", download_name="dashboard.zip")

    @bp.route("/dashboard/<path:filename>")
    def page(filename: str) -> Response:
        if filename.endswith("/") or "." not in filename.rpartition("/")[2]:
            filename = filename.rstrip("/") + "/index.html"  # a Stammtisch's folder
        slug, _, rest = filename.partition("/")
        folder = _refresh(slug if rest else None)
        return send_from_directory(folder, filename, max_age=0)

    return bp


def check_folder(folder: Path) -> None:
    """The server empties its site folder: refuse one it did not create."""
    if folder.exists() and any(folder.iterdir()) and not (folder / MARKER).exists():
        raise RuntimeError(
            f"DASHBOARD_DIR {folder} is not empty and was not made by the dashboard: "
            "choose an empty or new folder"
        )


def init_app(app: Flask) -> None:
    """Serve the dashboard at ``/dashboard/`` from ``DASHBOARD_DIR`` (default: instance)."""
    folder = Path(app.config.get("DASHBOARD_DIR") or Path(app.instance_path) / "dashboard")
    check_folder(folder)
    app.extensions[EXTENSION] = SiteCache(folder)
    app.register_blueprint(blueprint())
