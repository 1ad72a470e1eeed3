"""The dashboard served by the running server at ``/dashboard/``.

Every page is rendered on request from the statistics read model (:mod:`dashboard.readmodel`),
which every server process reads from the row store: no built folder, no per-process state to
keep coherent, so several processes can serve it at once. A Stammtisch found stale is refreshed
first (under the one-refresher lock). The shared assets (``plotly.min.js``, ``style.css``) are
written once into ``DASHBOARD_DIR`` (default: instance/dashboard) atomically (temp file +
rename), so processes writing them at once are harmless; a folder that cannot be written
costs nothing but that: they are served from the installed packages then. Private Stammtische are never part of
this site. ``/dashboard/site.zip`` builds every page into a temporary folder and hands it to
``schocken dashboard build --server URL``.
"""

from __future__ import annotations

import io
import tempfile
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flask import Blueprint, Flask, Response, abort, current_app, send_file, send_from_directory

from . import refresher
from .readmodel import ReadModel
from .site import build_site, render_index, render_period, write_assets

EXTENSION = "schocken_dashboard"
MARKER = ".schocken-dashboard"
ASSETS = ("plotly.min.js", "style.css")


@contextmanager
def _read_model() -> Iterator[ReadModel]:
    repository = current_app.extensions["schocken"].store.repository()
    try:
        yield ReadModel(repository)
    finally:
        repository.close()


def _html(text: str) -> Response:
    return Response(text, mimetype="text/html", headers={"Cache-Control": "no-cache"})


def _page(slug: str, name: str) -> Response:
    year: int | None = None
    if name != "index.html":
        stem, _, ext = name.partition(".")
        if ext != "html" or not stem.isdigit():
            abort(404)
        year = int(stem)
    with _read_model() as model:
        found = [s for s in model.stammtische() if s["slug"] == slug]
        if not found:
            abort(404)
        years = model.years(found[0]["id"])
        if year is not None and year not in {r["year"] for r in years}:
            abort(404)
        return _html(render_period(model, found[0], years, year))


def blueprint() -> Blueprint:
    bp = Blueprint("dashboard", __name__)

    @bp.route("/dashboard/")
    def index() -> Response:
        with _read_model() as model:
            return _html(render_index(model, model.stammtische()))

    @bp.route("/dashboard/site.zip")
    def archive() -> Response:
        buffer = io.BytesIO()
        with tempfile.TemporaryDirectory(prefix="schocken-site-") as tmp, _read_model() as model:
            build_site(model, tmp)
            folder = Path(tmp)
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
                for path in sorted(folder.rglob("*")):
                    if path.is_file() and not path.name.startswith("."):
                        zf.write(path, path.relative_to(folder).as_posix())
        buffer.seek(0)
        return send_file(buffer, mimetype="application/zip", download_name="dashboard.zip")

    @bp.route("/dashboard/<path:filename>")
    def page(filename: str) -> Response:
        if filename in ASSETS:
            return _asset(filename)
        if filename.endswith("/") or "." not in filename.rpartition("/")[2]:
            filename = filename.rstrip("/") + "/index.html"  # a Stammtisch's folder
        slug, _, rest = filename.partition("/")
        if not rest or "/" in rest:
            abort(404)
        return _page(slug, rest)

    return bp


def _asset(filename: str) -> Response:
    """An asset from the folder, written there first if missing; from the installed packages
    when the folder cannot be written (the pages work all the same)."""
    folder: Path | None = current_app.extensions[EXTENSION]
    if folder is not None and not (folder / filename).exists():
        try:
            write_assets(folder)
        except OSError as err:
            current_app.logger.warning("dashboard assets not written: %s", err)
    if folder is None or not (folder / filename).exists():
        return send_file(packaged(filename), max_age=0)
    return send_from_directory(folder, filename, max_age=0)


def packaged(filename: str) -> Path:
    """The installed file of an asset (plotly's own script, the dashboard's stylesheet)."""
    if filename == "plotly.min.js":
        import plotly

        return Path(plotly.__file__).parent / "package_data" / filename
    return Path(__file__).parent / "static" / filename


def check_folder(folder: Path) -> None:
    """The server writes its assets into its folder: refuse one it did not create."""
    if folder.exists() and any(folder.iterdir()) and not (folder / MARKER).exists():
        raise RuntimeError(
            f"DASHBOARD_DIR {folder} is not empty and was not made by the dashboard: "
            "choose an empty or new folder"
        )


def init_app(app: Flask) -> None:
    """Serve the dashboard at ``/dashboard/`` (assets in ``DASHBOARD_DIR``, default: instance)
    and start the statistics refresher of this process (:mod:`dashboard.refresher`)."""
    folder = Path(app.config.get("DASHBOARD_DIR") or Path(app.instance_path) / "dashboard")
    check_folder(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / MARKER).write_text("written by the Schocken server: its dashboard assets\n")
    except OSError as err:  # served from the installed packages instead (see _asset)
        app.logger.warning("DASHBOARD_DIR %s not writable: %s", folder, err)
        app.extensions[EXTENSION] = None
    else:
        app.extensions[EXTENSION] = folder
    app.register_blueprint(blueprint())
    refresher.init_app(app)
