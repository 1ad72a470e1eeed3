"""Reliability and hostile input, wired into the app in one place (:func:`init_reliability`).

* retries and concurrent phones: ``Idempotency-Key``, ``ETag`` / ``If-Match`` (api/idempotency.py)
* a per-token rate limit on writes with 429 and ``Retry-After`` (api/ratelimit.py)
* request bodies: over ``MAX_CONTENT_LENGTH`` 413 (Flask), JSON nested deeper than
  ``MAX_JSON_DEPTH`` 422 (Python's parser would otherwise hit its recursion limit: a 500)
* security headers on every HTML page that did not set its own (the pub form sets stricter
  ones): a Content-Security-Policy that allows scripts only from this server plus the
  page's own inline scripts by hash (Swagger UI's start-up, the dashboard's figures),
  ``nosniff``, frame denial, no referrer
* the OpenAPI document gets the headers and answers this layer adds (:func:`document`)

Configuration (defaults in api/config.py; ``create_app(config)`` or the environment):
``WRITE_RATE_PER_MINUTE`` (``SCHOCKEN_WRITE_RATE_PER_MINUTE``, default 3000, 0 = off), ``WRITE_RATE_BURST`` (default 1000),
``IDEMPOTENCY_TTL_HOURS`` (default 48), ``MAX_JSON_DEPTH`` (default 32), ``ADMIN_TOKEN``
(``SCHOCKEN_ADMIN_TOKEN``; default: generated into ``<instance>/admin_token``).
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
from typing import Any

from flask import Flask, Response, current_app, request
from webargs.flaskparser import abort

from .idempotency import KEY_HEADER, KEY_PATTERN, WRITE_METHODS, guard_writes
from .ratelimit import init_rate_limit

_INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S | re.I)


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def _check_json_depth() -> None:
    if request.method not in WRITE_METHODS or not request.path.startswith("/api/"):
        return
    limit = current_app.config["MAX_JSON_DEPTH"]
    data = request.get_data(cache=True)
    if data.count(b"[") + data.count(b"{") <= limit:
        return
    try:
        too_deep = _depth(json.loads(data)) > limit
    except RecursionError:
        too_deep = True
    except ValueError:
        return  # not JSON: the parser says so (422)
    if too_deep:
        msg = f"Der JSON-Inhalt ist tiefer als {limit} Ebenen verschachtelt."
        abort(422, message=msg, messages={"json": {"_schema": [msg]}})


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


# ------------------------------------------------------------------------------ OpenAPI
_KEY_PARAM = {
    "in": "header",
    "name": KEY_HEADER,
    "required": False,
    "description": (
        "Makes the write safe to retry: a repeat with the same key (per Stammtisch, kept at "
        "least 24 hours) returns the original status and body (header "
        "`Idempotent-Replayed: true`) and records nothing; the same key with another request "
        "is a 422. Use a new random key (a UUID) per intended write."
    ),
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": KEY_PATTERN},
    "example": "3f1c2a9e-7b5d-4e0a-9c61-2d8f0b7a5e44",
}
_IF_MATCH_PARAM = {
    "in": "header",
    "name": "If-Match",
    "required": False,
    "description": (
        'The game\'s version as read (its ETag, the `seq` of its last entry, e.g. `"7"`). '
        "If the game has moved on, the write is refused with 412 and the current state."
    ),
    "schema": {"type": "string"},
    "example": '"7"',
}
_ETAG_HEADER = {
    "description": "The game's version: the sequence number of its last log entry, quoted.",
    "schema": {"type": "string"},
}
_TOO_MANY = {
    "description": "Too many writes with this token; wait `Retry-After` seconds.",
    "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def document(api: Any) -> None:
    """Add this layer's headers and answers to the operations of the OpenAPI document."""
    from schemas.reliability import PreconditionFailedSchema

    api.spec.components.schema("PreconditionFailed", schema=PreconditionFailedSchema)
    stale = {
        "description": "The game moved on since the version in If-Match; nothing recorded.",
        "headers": {"ETag": _ETAG_HEADER},
        "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/PreconditionFailed"}}
        },
    }
    for path, operations in api.spec._paths.items():  # apispec keeps no public iterator
        if not path.startswith("/api/v1/") or path.startswith("/api/v1/admin/"):
            continue
        for method, operation in operations.items():
            if not isinstance(operation, dict):
                continue
            responses = operation.setdefault("responses", {})
            on_game = "{game_id}" in path
            if method.upper() in WRITE_METHODS:
                params = operation.setdefault("parameters", [])
                params.append(copy.deepcopy(_KEY_PARAM))  # no YAML aliases in openapi.yaml
                responses["429"] = copy.deepcopy(_TOO_MANY)
                if on_game:
                    params.append(copy.deepcopy(_IF_MATCH_PARAM))
                    responses["412"] = copy.deepcopy(stale)
            if on_game and (method.upper() in WRITE_METHODS or path.endswith("{game_id}")):
                for code, answer in responses.items():
                    if str(code).startswith("2") and isinstance(answer, dict):
                        answer.setdefault("headers", {})["ETag"] = copy.deepcopy(_ETAG_HEADER)


def init_reliability(app: Flask, api: Any) -> None:
    """Call at the end of ``create_app``, after every blueprint is registered."""
    init_rate_limit(app)
    app.before_request(_check_json_depth)
    guard_writes(app)
    app.after_request(_security_headers)
    document(api)
