"""Cross-cutting HTTP concerns of the API and the pages, in one place: imported by the
entrypoints (``api/resources``, ``api/web``, ``api/app.py``), never by the layers below.

* ``errors``: use-case and engine errors → HTTP, one error shape (:class:`SchockenApi`)
* ``context``: the request's use cases (one repository per request); ``auth``: bearer tokens
* ``blueprint``: the flask-smorest Blueprint every resource uses (JSON body rules)
* ``idempotency``: ``Idempotency-Key``, ``ETag`` / ``If-Match`` on every write
* ``ratelimit``: a per-token rate limit on writes with 429 and ``Retry-After``
* ``limits``: JSON nested deeper than ``MAX_JSON_DEPTH`` is a 422 (oversized bodies: 413)
* security headers on every HTML page that did not set its own (the pub form sets stricter
  ones): a Content-Security-Policy that allows scripts only from this server plus the
  page's own inline scripts by hash (Swagger UI's start-up, the dashboard's figures),
  ``nosniff``, frame denial, no referrer
* ``openapi``: the headers and answers this layer adds, in the OpenAPI document

Configuration (``create_app(config)`` or the environment): ``WRITE_RATE_PER_MINUTE``
(``SCHOCKEN_WRITE_RATE_PER_MINUTE``, default 3000, 0 = off), ``WRITE_RATE_BURST`` (default 1000),
``IDEMPOTENCY_TTL_HOURS`` (default 48), ``MAX_JSON_DEPTH`` (default 32), ``ADMIN_TOKEN``
(``SCHOCKEN_ADMIN_TOKEN``; default: generated into ``<instance>/admin_token``).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from typing import Any

from flask import Flask, Response

from .context import init_context
from .idempotency import guard_writes
from .limits import init_limits
from .openapi import document
from .ratelimit import init_rate_limit

DEFAULTS: dict[str, Any] = {
    "WRITE_RATE_PER_MINUTE": float(os.environ.get("SCHOCKEN_WRITE_RATE_PER_MINUTE", 3000)),
    "WRITE_RATE_BURST": int(os.environ.get("SCHOCKEN_WRITE_RATE_BURST", 1000)),
    "IDEMPOTENCY_TTL_HOURS": 48,
    "MAX_JSON_DEPTH": 32,
    "ADMIN_TOKEN": os.environ.get("SCHOCKEN_ADMIN_TOKEN"),
}

_INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S | re.I)


def csp_for(body: bytes) -> str:
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(body)
    )
    return (
        f"default-src 'self'; script-src 'self' {hashes}".rstrip()
        + "; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    )


def _security_headers(response: Response) -> Response:
    if response.mimetype == "text/html":
        headers = response.headers
        if "Content-Security-Policy" not in headers:
            response.direct_passthrough = False  # a page sent from a file: read it (small)
            headers["Content-Security-Policy"] = csp_for(response.get_data())
        headers.setdefault("X-Content-Type-Options", "nosniff")
        headers.setdefault("X-Frame-Options", "DENY")
        headers.setdefault("Referrer-Policy", "no-referrer")
    return response


def init_http(app: Flask, api: Any) -> None:
    """Call at the end of ``create_app``, after every blueprint is registered."""
    for name, value in DEFAULTS.items():
        app.config.setdefault(name, value)
    from ..backup import init_backup

    init_backup(app, api)
    init_context(app)
    init_rate_limit(app)
    init_limits(app)
    guard_writes(app)
    app.after_request(_security_headers)
    document(api)
