"""The dashboard's static assets: content-hashed names, gzip-compressed once.

Three files are shared by every page: the stylesheet, plotly.js and ``dashboard.js`` (it
draws the charts from the JSON in the page: no inline code). plotly.js is the *basic*
partial bundle (bar, scatter, pie) from the npm registry, vendored with its licence in
``dashboard/static/vendor/plotly.js-basic-dist-min`` (``package.json`` there pins the version;
it must be the plotly.js version of the plotly.py whose validators the tests check every
figure with, which a test checks): 1.2 MB instead of the full bundle's 4.8 MB, 0.4 MB gzip-compressed. To update it:
``npm pack plotly.js-basic-dist-min@<version>`` and copy ``plotly-basic.min.js``, ``LICENSE``
and ``package.json`` there.

Each asset is written as ``<stem>.<hash>.<ext>`` (the first 12 hex digits of its SHA-256) and,
next to it, ``<name>.br`` (Brotli, quality 11: plotly.js in 0.33 MB) and ``<name>.gz``: a name
never changes its content, so browsers may keep it for a year (``Cache-Control: immutable``)
and a new version is a new name. Compressing plotly.js takes seconds, so it is done once per
process and only when asked for (writing a folder, or serving without one).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path

import brotli

VENDOR = "vendor/plotly.js-basic-dist-min"
#: the logical name a template asks for → the packaged file under ``dashboard/static``
SOURCES = {
    "plotly.js": f"{VENDOR}/plotly-basic.min.js",
    "style.css": "style.css",
    "dashboard.js": "dashboard.js",
}
HASHED = re.compile(r"^(plotly|style|dashboard)\.[0-9a-f]{12}\.(js|css)(\.gz|\.br)?$")
#: the encodings written beside each asset, by file suffix, in the order a server prefers them
ENCODINGS = {"br": ".br", "gzip": ".gz"}
#: the unhashed names of earlier versions, removed from a folder written again
LEGACY = ("plotly.min.js", "style.css")
#: how long a browser may keep a hashed asset: a year, never revalidated
IMMUTABLE = "public, max-age=31536000, immutable"


@dataclass(frozen=True, slots=True)
class Asset:
    name: str  # the hashed file name, e.g. "style.0123456789ab.css"
    body: bytes

    @property
    def mimetype(self) -> str:
        return "text/css" if self.name.endswith(".css") else "text/javascript"

    def encoded(self, encoding: str) -> bytes:
        """The body in ``encoding`` ("br", "gzip" or "identity"), compressed once."""
        return self.body if encoding == "identity" else _compress(self.body, encoding)


@cache
def _compress(body: bytes, encoding: str) -> bytes:
    if encoding == "br":
        return bytes(brotli.compress(body, quality=11))
    return gzip.compress(body, compresslevel=9, mtime=0)


def _packaged(source: str) -> bytes:
    return files(__package__).joinpath("static", *source.split("/")).read_bytes()


@cache
def assets() -> dict[str, Asset]:
    """The logical name → its asset (read and compressed once per process)."""
    found = {}
    for logical, source in SOURCES.items():
        body = _packaged(source)
        stem, _, ext = logical.rpartition(".")
        name = f"{stem}.{hashlib.sha256(body).hexdigest()[:12]}.{ext}"
        found[logical] = Asset(name, body)
    return found


def names() -> dict[str, str]:
    """The logical name → the hashed file name (what the templates link to)."""
    return {logical: asset.name for logical, asset in assets().items()}


def by_name(name: str) -> Asset | None:
    """The asset served as ``name`` (a hashed name), or None."""
    return next((a for a in assets().values() if a.name == name), None)


def plotly_version() -> str:
    """The vendored plotly.js version (its package.json)."""
    meta = json.loads(_packaged(f"{VENDOR}/package.json"))
    return str(meta["version"])


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write(out: Path) -> None:
    """Write the assets, their ``.br`` and ``.gz`` into ``out`` (skipping those already there)
    and remove hashed assets of earlier versions."""
    out.mkdir(parents=True, exist_ok=True)
    current: set[str] = set()
    for asset in assets().values():
        for encoding, suffix in (("identity", ""), *ENCODINGS.items()):
            name = asset.name + suffix
            current.add(name)
            if not (out / name).exists():
                _write(out / name, asset.encoded(encoding))
    for old in out.iterdir():
        stale = HASHED.match(old.name) and old.name not in current
        if stale or old.name in LEGACY:
            old.unlink(missing_ok=True)
