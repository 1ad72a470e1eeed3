"""The dashboard served by the running server at ``/dashboard/``.

Every page is rendered from the statistics read model (:mod:`dashboard.readmodel`), which
every server process reads from the row store: no built folder, so several processes can serve
it at once. A process keeps the period pages it rendered last with the hash of the stored JSON
they show; a request reads that JSON (one row each of the period and of all time) and renders
the page again only when it changed (a refresh, a rename) — so a page costs its rendering
(hundreds of ms: the Plotly figures) once per change of the read model, not per visit. A request never computes: a stale
Stammtisch's page says "wird aktualisiert" until the refresher caught up. Pages are sent gzip-compressed with a weak ETag and
``Cache-Control: no-cache`` (a repeat visit costs a 304). The shared assets (plotly.js, the
stylesheet, dashboard.js: :mod:`dashboard.assets`) have content-hashed names and are sent
precompressed (Brotli or gzip) with
``Cache-Control: public, max-age=31536000, immutable``; they are written once into
``DASHBOARD_DIR`` (default: instance/dashboard) atomically (temp file + rename), so processes
writing them at once are harmless; a folder that cannot be written costs nothing but that:
they are served from memory then. Private Stammtische are never part of this site. ``/dashboard/site.zip`` builds every page into a temporary folder and hands it to
``schocken dashboard build --server URL``.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tempfile
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from flask import Blueprint, Flask, Response, abort, current_app, request, send_file
from werkzeug.wrappers import Response as BaseResponse

from api.rules import limits, read_number

from . import assets, refresher
from .readmodel import ReadModel
from .site import build_site, links, render_index, render_period, write_assets

EXTENSION = "schocken_dashboard"
MARKER = ".schocken-dashboard"
#: a page smaller than this is sent as it is (compressing it would gain nothing)
COMPRESS_FROM = 1024


@contextmanager
def _read_model() -> Iterator[ReadModel]:
    repository = current_app.extensions["schocken"].store.repository()
    try:
        yield ReadModel(repository)
    finally:
        repository.close()


def _accepts_gzip() -> bool:
    return request.accept_encodings["gzip"] > 0


def _html(text: str) -> Response:
    """A page: revalidated on every visit (its ETag answers 304 when unchanged), sent
    gzip-compressed to a browser that takes it."""
    return _send(_rendered(text))


def _send(page: Rendered) -> Response:
    response = Response(page.body, mimetype="text/html", headers={"Cache-Control": "no-cache"})
    response.vary.add("Accept-Encoding")
    response.set_etag(page.etag, weak=True)
    response.make_conditional(request)
    if response.status_code == 200 and page.gzipped is not None and _accepts_gzip():
        response.set_data(page.gzipped)
        response.headers["Content-Encoding"] = "gzip"
    return response


class Rendered(NamedTuple):
    """A period page as sent: its text, encoded, its ETag and its gzip-compressed bytes."""

    body: bytes
    etag: str
    gzipped: bytes | None


class Kept:
    """The period pages an app (per process) rendered last, by (slug, year) with the key of
    what they show (:func:`_shown`): a page is rendered once per change of the read model,
    not per request. One per app (``app.extensions``), so two apps never share a page."""

    #: pages kept (about 0.1 MB each, compressed and not)
    SIZE = 64

    def __init__(self) -> None:
        self._pages: OrderedDict[tuple[str, int | None], tuple[tuple[object, ...], Rendered]]
        self._pages = OrderedDict()
        self._lock = threading.Lock()

    def get(self, page: tuple[str, int | None], key: tuple[object, ...]) -> Rendered | None:
        with self._lock:
            kept = self._pages.get(page)
            if kept is None or kept[0] != key:
                return None
            self._pages.move_to_end(page)
            return kept[1]

    def put(
        self, page: tuple[str, int | None], key: tuple[object, ...], rendered: Rendered
    ) -> None:
        with self._lock:
            self._pages[page] = (key, rendered)
            while len(self._pages) > self.SIZE:
                self._pages.popitem(last=False)


#: the app's :class:`Kept` pages
PAGES = "schocken_dashboard_pages"


def _rendered(text: str) -> Rendered:
    body = text.encode("utf-8")
    zipped = gzip.compress(body, compresslevel=6, mtime=0) if len(body) >= COMPRESS_FROM else None
    return Rendered(body, hashlib.sha256(body).hexdigest()[:32], zipped)


def _shown(model: ReadModel, st_id: int, year: int | None, *rest: object) -> tuple[object, ...]:
    """What a period page shows, as a key: the stored JSON of the period and of all time (the
    players' colours), as a hash, and ``rest`` (the years, staleness, links)."""
    texts = (model.repo.read_stats(st_id, y) or "" for y in (year, None))
    return (hashlib.blake2b("\0".join(texts).encode(), digest_size=16).digest(), *rest)


def _page(slug: str, name: str) -> Response:
    year: int | None = None
    if name != "index.html":
        stem, _, ext = name.partition(".")
        year = read_number(stem, limits.YEAR)
        if ext != "html" or year is None:
            abort(404)
    with _read_model() as model:
        listed = model.stammtische()
        found = [s for s in listed if s["slug"] == slug]
        if not found:
            abort(404)
        years = model.years(found[0]["id"])
        if year is not None and year not in {r["year"] for r in years}:
            abort(404)
        # a request never computes statistics: a stale page says so (the refresher catches up)
        stale = model.stale(found[0]["id"])
        shown = links(listed)
        key = _shown(model, found[0]["id"], year, stale, repr(years), repr(found[0]), repr(shown))
        kept: Kept = current_app.extensions[PAGES]
        page = kept.get((slug, year), key)
        if page is None:
            page = _rendered(render_period(model, found[0], years, year, stale=stale, **shown))
            kept.put((slug, year), key, page)
        return _send(page)


def blueprint() -> Blueprint:
    bp = Blueprint("dashboard", __name__)

    @bp.route("/dashboard/")
    def index() -> Response:
        with _read_model() as model:
            listed = model.stammtische()
            return _html(render_index(model, listed, **links(listed)))

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
    def page(filename: str) -> BaseResponse:
        asset = assets.by_name(filename)
        if asset is not None:
            return _asset(asset)
        if filename.endswith("/") or "." not in filename.rpartition("/")[2]:
            filename = filename.rstrip("/") + "/index.html"  # a Stammtisch's folder
        slug, _, rest = filename.partition("/")
        if not rest or "/" in rest:
            abort(404)
        return _page(slug, rest)

    return bp


def best_encoding() -> str:
    """The best encoding of a precompressed asset that the browser takes, or "identity"."""
    taken = request.accept_encodings
    return next((e for e in assets.ENCODINGS if taken[e] > 0), "identity")


def immutable(response: BaseResponse, encoding: str = "identity") -> BaseResponse:
    """A hashed asset's answer (``encoding``: how its body is compressed), kept for a year."""
    if encoding != "identity":
        response.headers["Content-Encoding"] = encoding
    response.vary.add("Accept-Encoding")
    response.headers["Cache-Control"] = assets.IMMUTABLE
    return response


def _asset(asset: assets.Asset) -> BaseResponse:
    """A hashed asset, kept by the browser for a year; Brotli- or gzip-compressed to a browser
    that takes it. From the folder (written there first if missing), or from memory when the
    folder cannot be written (the pages work all the same)."""
    folder: Path | None = current_app.extensions[EXTENSION]
    if folder is not None and not (folder / asset.name).exists():
        try:
            write_assets(folder)
        except OSError as err:
            current_app.logger.warning("dashboard assets not written: %s", err)
    encoding = best_encoding()
    name = asset.name + assets.ENCODINGS.get(encoding, "")
    if folder is not None and (folder / name).exists():
        response = send_file(folder / name, mimetype=asset.mimetype, conditional=True)
    else:
        response = Response(asset.encoded(encoding), mimetype=asset.mimetype)
    return immutable(response, encoding)


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
    app.extensions[PAGES] = Kept()
    app.register_blueprint(blueprint())
    refresher.init_app(app)
