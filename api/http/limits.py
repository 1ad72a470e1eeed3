"""Request bodies an attacker could use: a JSON body the one reader refuses
(:func:`api.http.jsonread.read_json`: nested deeper than ``MAX_JSON_DEPTH``, Python's parser
would otherwise hit its recursion limit; text that is no Unicode text at all, a lone surrogate
escape such as ``"A\\ud800B"``; an integer beyond 64 bits, e.g. one of 5,000 digits that
Python's ``int()`` refuses; ``NaN`` or ``Infinity``) is a 422 with the reader's German
sentence, before any other hook reads the body. A body that is no JSON at all is left to the
view (422 "Kein gültiges JSON.", or 415 for another content type). Oversized bodies are
Flask's own 413 (``MAX_CONTENT_LENGTH``)."""

from __future__ import annotations

from flask import Flask, request
from webargs.flaskparser import abort

from .idempotency import WRITE_METHODS
from .jsonread import JsonRefused, body_json


def _check_json() -> None:
    if request.method not in WRITE_METHODS or not request.path.startswith("/api/"):
        return
    data = request.get_data(cache=True)
    if not data:
        return
    try:
        body_json()
    except JsonRefused as err:
        if err.malformed:
            return  # not JSON: the view says so (422, or 415 for another content type)
        abort(422, message=err.message, messages={"json": {err.where: [err.message]}})


def read_body() -> None:
    """The whole body of a write, before anything else of the request (the rate limit, the
    key's look-up) takes a database connection: a client that sends it slowly holds only its
    own task (a greenlet of ``schocken serve``), never a connection of the pool. Kept for the
    views (werkzeug's cache; a form is parsed from it as well)."""
    if request.method in WRITE_METHODS:
        request.get_data(cache=True)


def init_body(app: Flask) -> None:
    """First of the app's ``before_request`` functions (see :func:`read_body`)."""
    app.before_request(read_body)


def init_limits(app: Flask) -> None:
    app.before_request(_check_json)
