"""Request bodies an attacker could use: JSON nested deeper than ``MAX_JSON_DEPTH`` is a 422
(Python's parser would otherwise hit its recursion limit: a 500). Oversized bodies are Flask's
own 413 (``MAX_CONTENT_LENGTH``)."""

from __future__ import annotations

import json
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


def init_limits(app: Flask) -> None:
    app.before_request(_check_json_depth)
