"""The rules engine in the phone's browser: Pyodide and our engine bundle, served by the app.

The game page starts a Web Worker (``static/engine-worker.js``, through ``static/engine.js``)
after its first paint. The worker loads Pyodide from the copy vendored in
``static/vendor/pyodide`` (npm package ``pyodide``, its version pinned by ``package.json``
there, MPL-2.0), unpacks the engine bundle into its file system and imports
``api.table.browser`` — the same Python code the server runs, unchanged. URLs, each immutable
(the version or the content's hash is in the path, so a new engine is a new URL):

* ``/engine/pyodide/<version>/<file>`` — the runtime (``pyodide.mjs``, ``pyodide.asm.mjs``,
  ``pyodide.asm.wasm``, ``python_stdlib.zip``, and a ``pyodide-lock.json`` without packages:
  the engine loads none). Brotli or gzip from the files precompressed beside them
  (``<file>.br``, ``<file>.gz``: Brotli at quality 11 takes a minute for the 9.6 MB ``.wasm``,
  so it is done once when vendoring, :func:`precompress`, never per process);
* ``/engine/<hash>.zip`` — the engine bundle, built once per process from the installed
  packages (:func:`bundle`): ``api/__init__.py``, every ``.py`` and ``.html`` of ``api.rules``
  and ``api.table``, and the ``.py`` files of ``jinja2`` and ``markupsafe``;
* ``/engine/worker/<hash>.js`` — the worker script, with a Content-Security-Policy of its own
  that allows compiling WebAssembly (``'wasm-unsafe-eval'``): a dedicated worker runs under the
  policy of its script's response, so the pages keep the strict one.

The game page learns these URLs from ``<meta name="schocken-engine">`` (``_engine.html``,
:func:`engine_urls`).

To update Pyodide: ``npm pack pyodide@<version>``, copy ``pyodide.mjs``, ``pyodide.asm.mjs``,
``pyodide.asm.wasm``, ``python_stdlib.zip`` and ``package.json`` into the vendor folder, write
``pyodide-lock.json`` as its ``info`` with empty ``packages``, then run
``python -c 'from api.web.engine import precompress; precompress()'`` (writes the ``.br``
and ``.gz`` files; about a minute).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from flask import abort, send_file, url_for
from werkzeug.wrappers import Response

from dashboard.assets import ENCODINGS, Asset
from dashboard.web import best_encoding, immutable

from ..http.headers import ENGINE_WORKER_CSP
from .blueprint import bp

STATIC = Path(__file__).resolve().parent / "static"
VENDOR = STATIC / "vendor" / "pyodide"
#: the runtime files the worker loads, in the order it needs them
RUNTIME = (
    "pyodide.mjs",
    "pyodide-lock.json",
    "pyodide.asm.mjs",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
)
MIMETYPES = {
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".wasm": "application/wasm",
    ".zip": "application/zip",
    ".json": "application/json",
}
#: the runtime files sent compressed (a zip is compressed already)
COMPRESSED = tuple(name for name in RUNTIME if not name.endswith(".zip"))
#: the packages in the bundle: (package, suffixes of the files taken)
BUNDLED = (
    ("api.rules", (".py", ".html")),
    ("api.table", (".py", ".html")),
    ("jinja2", (".py",)),
    ("markupsafe", (".py",)),
)
#: a fixed time stamp for every member, so the same files give the same bytes (and hash)
_EPOCH = (1980, 1, 1, 0, 0, 0)


@cache
def pyodide_version() -> str:
    """The vendored Pyodide's version (its ``package.json``)."""
    meta = json.loads((VENDOR / "package.json").read_text(encoding="utf-8"))
    return str(meta["version"])


def _members(package: str, suffixes: tuple[str, ...]) -> list[tuple[str, bytes]]:
    root = files(package)
    prefix = package.replace(".", "/")
    found: list[tuple[str, bytes]] = []

    def walk(folder: Traversable, path: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                if entry.name != "__pycache__":
                    walk(entry, f"{path}/{entry.name}")
            elif entry.name.endswith(suffixes):
                found.append((f"{path}/{entry.name}", entry.read_bytes()))

    walk(root, prefix)
    return found


@cache
def bundle() -> bytes:
    """The engine bundle: a zip of the pure engine, the game screen's view and Jinja, built
    once per process from the installed packages; the same files give the same bytes."""
    members = [("api/__init__.py", files("api").joinpath("__init__.py").read_bytes())]
    for package, suffixes in BUNDLED:
        members += _members(package, suffixes)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        for name, data in sorted(members):
            info = zipfile.ZipInfo(name, _EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buffer.getvalue()


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


@cache
def bundle_digest() -> str:
    return _digest(bundle())


@cache
def _worker() -> bytes:
    return (STATIC / "engine-worker.js").read_bytes()


def engine_urls() -> dict[str, str]:
    """What the game page tells ``engine.js`` (the data attributes of its meta element):
    ``worker``, ``pyodide`` (the runtime's folder, with a trailing slash), ``bundle``, and
    ``files``: every URL the engine loads, space-separated (the service worker keeps them)."""
    pyodide = url_for("web.engine_runtime", version=pyodide_version(), filename="x")[:-1]
    urls = {
        "worker": url_for("web.engine_worker", digest=_digest(_worker())),
        "pyodide": pyodide,
        "bundle": url_for("web.engine_bundle", digest=bundle_digest()),
    }
    loaded = [urls["worker"], *(pyodide + name for name in RUNTIME), urls["bundle"]]
    return {**urls, "files": " ".join(loaded)}


bp.add_app_template_global(engine_urls)


@bp.get("/engine/pyodide/<version>/<filename>")
def engine_runtime(version: str, filename: str) -> Response:
    """A file of the vendored Pyodide, Brotli- or gzip-compressed to a browser that takes it."""
    if version != pyodide_version() or filename not in RUNTIME:
        abort(404)
    encoding = best_encoding() if filename in COMPRESSED else "identity"
    path = VENDOR / (filename + ENCODINGS.get(encoding, ""))
    mimetype = MIMETYPES[Path(filename).suffix]
    return immutable(send_file(path, mimetype=mimetype, conditional=True), encoding)


@bp.get("/engine/<digest>.zip")
def engine_bundle(digest: str) -> Response:
    """The engine bundle (:func:`bundle`); only under its current hash."""
    if digest != bundle_digest():
        abort(404)
    return immutable(Response(bundle(), mimetype="application/zip"))


@bp.get("/engine/worker/<digest>.js")
def engine_worker(digest: str) -> Response:
    """The worker script, under the policy that lets it compile WebAssembly."""
    body = _worker()
    if digest != _digest(body):
        abort(404)
    response = Response(body, mimetype="text/javascript")
    response.headers["Content-Security-Policy"] = ENGINE_WORKER_CSP
    return immutable(response)


def precompress(folder: Path = VENDOR) -> None:
    """Write ``<file>.br`` and ``<file>.gz`` beside each compressible runtime file (Brotli
    quality 11, gzip level 9: the dashboard's compressor, :class:`dashboard.assets.Asset`)."""
    for name in COMPRESSED:
        asset = Asset(name, (folder / name).read_bytes())
        for encoding, suffix in ENCODINGS.items():
            (folder / (name + suffix)).write_bytes(asset.encoded(encoding))
