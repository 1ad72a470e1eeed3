"""RFC 9457 problem details: the one error body of the API, and the catalogue of its codes.

Every error answer of ``/api/…`` (and of any URL no page handles) is
``application/problem+json``::

    {"type": "/api/v1/problems/turn_not_yours", "title": "Nicht an der Reihe", "status": 409,
     "detail": "Ben ist nicht an der Reihe, sondern Anna.", "code": "turn_not_yours",
     "message": "Ben ist nicht an der Reihe, sondern Anna.",
     "errors": {"json": {"player": ["Ben ist nicht an der Reihe, sondern Anna."]}}}

* ``code``: the stable, machine-readable name of the problem (snake_case, from
  :data:`api.domain.problems.CATALOGUE`); clients branch on it. It used to be the numeric HTTP status: that is
  ``status`` now, as RFC 9457 has it.
* ``type``: ``/api/v1/problems/<code>``, a relative reference (RFC 9457 §3.1.1, resolved
  against the request's URL). Chosen over a ``tag:`` URI because the server is self-hosted
  under no fixed domain (a tag URI needs an authority the project owns) and over an absolute
  ``https://`` URI for the same reason; the path is versioned with the API, never changes for
  a code, and answers ``GET`` with the catalogue entry (:func:`describe`), so a developer who
  opens it learns what it means. Compare ``code`` (or the resolved ``type``), never ``title``.
* ``title``: short German summary of the code (the same for every occurrence);
  ``detail``: the German sentence a player understands (names the rule, the field, the value).
* ``message``: deprecated alias of ``detail`` (the old ``{code, status, message, errors}``
  shape); it will be removed in API v2.
* ``errors``: field errors by location (``json``, ``query``, ``headers``) and field name,
  whenever one field of the request is at fault (409 and 422 alike).
"""

from __future__ import annotations

from typing import Any

from flask import Flask, Response, json

from ..domain.problems import BY_STATUS, CATALOGUE, DEFAULT_DETAIL

#: the media type of every error answer
PROBLEM_JSON = "application/problem+json"
#: ``type`` of a problem: this prefix and its code
TYPE_PREFIX = "/api/v1/problems/"


def code_for(status: int) -> str:
    return BY_STATUS.get(status, "internal_error" if status >= 500 else "http_error")


def type_of(code: str) -> str:
    return TYPE_PREFIX + code


def body(
    status: int,
    code: str | None,
    detail: str | None = None,
    errors: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The problem document of one error (``code`` None or unknown: the status's code)."""
    if code not in CATALOGUE:
        code = code_for(status)
    text = detail or DEFAULT_DETAIL.get(code) or CATALOGUE[code][1]
    doc: dict[str, Any] = {
        "type": type_of(code),
        "title": CATALOGUE[code][1],
        "status": status,
        "detail": text,
        "code": code,
        "message": text,
    }
    if errors:
        doc["errors"] = errors
    doc.update(extra)
    return doc


def response(doc: dict[str, Any], headers: dict[str, str] | None = None) -> Response:
    """``doc`` as an ``application/problem+json`` answer."""
    answer = Response(json.dumps(doc), status=doc["status"], mimetype=PROBLEM_JSON)
    for name, value in (headers or {}).items():
        answer.headers[name] = value
    return answer


def describe(code: str) -> dict[str, Any] | None:
    """The catalogue entry behind a problem's ``type`` (None: no such code)."""
    if code not in CATALOGUE:
        return None
    status, title = CATALOGUE[code]
    return {"type": type_of(code), "code": code, "title": title, "status": status}


def _entry(code: str) -> Response:
    found = describe(code)
    if found is None:
        detail = f"Einen Fehlercode „{code}“ gibt es nicht."
        return response(body(404, "not_found", detail))
    return Response(json.dumps(found), mimetype="application/json")


def register(app: Flask) -> None:
    """``GET /api/v1/problems/<code>``: what a problem ``type`` stands for (not in the
    OpenAPI operations: a documentation link, like ``/docs``)."""
    app.add_url_rule(TYPE_PREFIX + "<code>", "problem_type", _entry, methods=["GET"])
