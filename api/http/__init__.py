"""Cross-cutting HTTP concerns of the API and the pages, in one place: imported by the
entrypoints (``api/resources``, ``api/web``, ``api/app.py``), never by the layers below.

* ``errors``: use-case and engine errors → HTTP, one error shape (:class:`SchockenApi`),
  RFC 9457 problem details (``problems``; ``GET /api/v1/problems/<code>`` explains a type)
* ``context``: the request's use cases (one ``Services``, one repository per request),
  bearer tokens, the request's Stammtisch and key looked up and hashed once, and a per-token
  rate limit on writes with 429 and ``Retry-After``
* ``blueprint``: the flask-smorest Blueprint every resource uses (JSON body rules); a body of a
  write read first, and a JSON body the one reader (``read_json``) refuses a 422 before any
  view reads it (nested deeper than ``MAX_JSON_DEPTH``, integers beyond 64 bits, ``NaN``, lone
  surrogates; oversized bodies: 413); ``<id:…>``, the path converter of every stored row's id
  (1 to 2**63 − 1, else 404), registered on the app and in the OpenAPI document
* ``idempotency``: ``Idempotency-Key``, ``ETag`` / ``If-Match`` on every write
* ``headers``: the one security-header policy of every HTML page (the pub form's strict CSP;
  elsewhere scripts only from this server plus the page's own inline scripts by hash:
  Swagger UI's start-up, the dashboard's figures), ``nosniff``, frame denial, same-origin
  referrer
* ``openapi``: the headers and answers this layer adds, in the OpenAPI document
* ``sse``: live events as Server-Sent Events (the wire format, the answer's body); ``hub``:
  the per-process task that reads new events once and feeds every stream of ``schocken
  serve`` (each stream a greenlet of its own)

Configuration (``create_app(config)`` or the environment): ``WRITE_RATE_PER_MINUTE``
(``SCHOCKEN_WRITE_RATE_PER_MINUTE``, default 3000, 0 = off), ``WRITE_RATE_BURST`` (default 1000),
``IDEMPOTENCY_TTL_HOURS`` (default 48), ``MAX_JSON_DEPTH`` (default 32), ``ADMIN_TOKEN``
(``SCHOCKEN_ADMIN_TOKEN``; default: generated into ``<instance>/admin_token``).
"""

from __future__ import annotations

from typing import Any

from flask import Flask

from .blueprint import init_body, init_limits
from .context import init_context, init_rate_limit
from .headers import secure_html
from .idempotency import guard_writes
from .openapi import document
from .problems import register as register_problem_types


def init_http(app: Flask, api: Any) -> None:
    """Call at the end of ``create_app``, after every blueprint is registered."""
    init_context(app)
    register_problem_types(app)
    init_body(app)  # the body first: no connection is held while it arrives
    init_rate_limit(app)
    init_limits(app)
    guard_writes(app)
    app.after_request(secure_html)
    document(api)
