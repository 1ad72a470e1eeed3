"""Request bodies an attacker could use: JSON nested deeper than ``MAX_JSON_DEPTH`` is a 422
(Python's parser would otherwise hit its recursion limit: a 500); so is text that is no
Unicode text at all, a lone surrogate escape such as ``"A\\ud800B"`` (JSON allows writing it,
but no store can keep it: UTF-8 has no such character). Oversized bodies are Flask's own 413
(``MAX_CONTENT_LENGTH``)."""

from __future__ import annotations

import json
import re
from typing import Any

from flask import Flask, current_app, request
from webargs.flaskparser import abort

from .idempotency import WRITE_METHODS


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


#: a ``\\uD800``–``\\uDFFF`` escape in raw JSON (the only way a lone surrogate gets in)
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _unencodable(value: Any, path: str = "") -> str | None:
    """The path of the first string (key or value) that cannot be written as UTF-8."""
    stack = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return where or "json"
        elif isinstance(item, dict):
            for key, child in item.items():
                stack.append((key, where or "json"))
                stack.append((child, f"{where}.{key}" if where else str(key)))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(item))
    return None


def _check_text() -> None:
    if request.method not in WRITE_METHODS or not request.path.startswith("/api/"):
        return
    data = request.get_data(cache=True)
    if not _SURROGATE_ESCAPE.search(data):
        return
    try:
        where = _unencodable(json.loads(data))
    except (ValueError, RecursionError):
        return  # not JSON (or too deep): the other checks and the parser say so
    if where is not None:
        msg = (
            f"„{where}“ enthält ein Zeichen, das es nicht gibt (ein einzelnes UTF-16-"
            "Ersatzzeichen wie \\ud800): bitte den Text neu eingeben."
        )
        abort(422, message=msg, messages={"json": {where: [msg]}})


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
    app.before_request(_check_json_depth)
    app.before_request(_check_text)
