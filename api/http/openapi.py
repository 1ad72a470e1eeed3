"""The headers and answers this layer adds, written into the OpenAPI document."""

from __future__ import annotations

import copy
from typing import Any

from schemas.reliability import PreconditionFailedSchema

from .idempotency import KEY_HEADER, KEY_PATTERN, WRITE_METHODS

_KEY_PARAM = {
    "in": "header",
    "name": KEY_HEADER,
    "required": False,
    "description": (
        "Makes the write safe to retry: a repeat with the same key returns the original "
        "status and body (header `Idempotent-Replayed: true`) and records nothing; the same "
        "key with another request is a 422. Keys are kept 48 hours, per Stammtisch (the "
        "token's); for `POST /stammtische`, which has no token yet, per client address, so "
        "another client's key never replays this one's answer. Generate a new random key "
        "(a UUID v4) per intended write and reuse it only for retries of that write; no "
        "example is given on purpose, since a copied fixed key would collide."
    ),
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": KEY_PATTERN},
}
_IF_MATCH_PARAM = {
    "in": "header",
    "name": "If-Match",
    "required": False,
    "description": (
        'The game\'s version as read (its ETag, the `seq` of its last entry, e.g. `"7"` '
        "after seven entries). If the game has moved on, the write is refused with 412 and "
        "the current state. `*` matches any version (the example)."
    ),
    "schema": {"type": "string"},
    "example": "*",
}
_ETAG_HEADER = {
    "description": "The game's version: the sequence number of its last log entry, quoted.",
    "schema": {"type": "string"},
}
_TOO_MANY = {
    "description": (
        "Too many writes: per Stammtisch when its key is valid, else per client address "
        "(creating Stammtische has a stricter limit per address); wait `Retry-After` seconds."
    ),
    "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer"}}},
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def document(api: Any) -> None:
    """Add this layer's headers and answers to the operations of the OpenAPI document."""
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
