"""The headers and answers this layer adds, written into the OpenAPI document."""

from __future__ import annotations

import copy
from typing import Any

from schemas.gamelog import openapi_components as gamelog_components
from schemas.reliability import PreconditionFailedSchema

from ..domain.problems import CATALOGUE
from .context import WRITE_METHODS
from .idempotency import KEY_HEADER, KEY_PATTERN, READ_ONLY_POSTS
from .problems import PROBLEM_JSON

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
    "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/Error"}}},
}

#: what can be done with a game a write answers
_GAME_OPERATIONS = (
    "getGame",
    "recordTurn",
    "recordThrow",
    "recordPenalty",
    "undoLastEntry",
    "abandonGame",
    "exportGameLog",
    "listUndos",
    "streamGameEvents",
)


#: a new resource's id (its answer's ``id``) on a path of the request's Stammtisch
def _by_id(parameter: str) -> dict[str, str]:
    return {"slug": "$request.path.slug", parameter: "$response.body#/id"}


#: the writes whose 201 answer is a new resource: how its answer fills the path parameters of
#: the operations on it (OpenAPI links: what a client, and schemathesis' stateful phase, can
#: call next)
_CREATES: dict[tuple[str, str], tuple[dict[str, str], tuple[str, ...]]] = {
    ("post", "/api/v1/stammtische"): (
        {"slug": "$response.body#/slug"},
        (
            "getStammtisch",
            "updateStammtisch",
            "addPlayer",
            "startGame",
            "importGameLog",
            "addWebhook",
            "listGames",
            "listPlayers",
            "getStatistics",
        ),
    ),  # fmt: skip
    ("post", "/api/v1/stammtische/{slug}/games"): (_by_id("game_id"), _GAME_OPERATIONS),
    ("post", "/api/v1/stammtische/{slug}/imports"): (_by_id("game_id"), _GAME_OPERATIONS),
    ("post", "/api/v1/stammtische/{slug}/players"): (
        _by_id("player_id"),
        ("getPlayer", "updatePlayer"),
    ),
    ("post", "/api/v1/stammtische/{slug}/webhooks"): (
        _by_id("webhook_id"),
        ("getWebhook", "updateWebhook", "pingWebhook", "listWebhookDeliveries", "deleteWebhook"),
    ),
}


def _links(parameters: dict[str, str], operation_ids: tuple[str, ...]) -> dict[str, Any]:
    return {
        op[0].upper() + op[1:]: {"operationId": op, "parameters": dict(parameters)}
        for op in operation_ids
    }


#: the error model, appended to the document's description (README says the same)
ERRORS_TEXT = """

**Errors** are RFC 9457 problem details (`application/problem+json`) for every status, also
the server's own 404 (unknown route), 405 (with `Allow`), 413, 415, 429 and 503 (with
`Retry-After`), 401 (with `WWW-Authenticate`), 412 and 500: `type`, `title`, `status`,
`detail` (German, for the player), `code` (stable snake_case name to branch on; its values
and titles: the enum of `components.schemas.Error.code`), `errors` (field errors by location
and field name whenever a field of the request is at fault). `type` is
`/api/v1/problems/<code>`, relative to the request's URL; a GET on it returns the code's
entry. `message` is a deprecated alias of `detail`. Changed: `code` was the numeric status
(now in `status`).

**422 or 409.** 422: the request is malformed whatever the game's state — schema, types,
ranges, a dice count or number of throws the game's house rules never allow (`throws: 0`, or
`throws: 4` where the house rules allow 3), a request that contradicts itself (a throw of two
dice after one die was set aside in the same `detail`). 409: the request is well-formed but
the rules forbid it in the game's current state — not this player's turn
(`turn_not_yours`), more throws than the opener allowed in this round
(`throw_limit_exceeded`), an open turn (`turn_open`), a finished game (`game_finished`), a
throw whose dice do not match what is left in the cup of the open turn (`cup_mismatch`).

Codes: """


def _codes_text() -> str:
    return ", ".join(
        f"`{code}` ({status}, {title})" for code, (status, title) in sorted(CATALOGUE.items())
    )


def document(api: Any) -> None:
    """Add this layer's headers and answers to the operations of the OpenAPI document, the
    links from a created resource to what can be done with it, and the game log's JSON Schema."""
    info = api.spec.options.setdefault("info", {})
    text = "\n\n".join(" ".join(part.split()) for part in ERRORS_TEXT.split("\n\n"))
    info["description"] = info.get("description", "") + text + " " + _codes_text() + "."
    api.spec.components.schema("PreconditionFailed", schema=PreconditionFailedSchema)
    # the game log of the import and export operations: the JSON Schema of
    # schemas/gamelog.schema.json, not the marshmallow schema that checks its shape
    schemas = api.spec.components.schemas
    for name, component in gamelog_components().items():
        schemas[name] = component
    stale = {
        "description": "The game moved on since the version in If-Match; nothing recorded.",
        "headers": {"ETag": _ETAG_HEADER},
        "content": {PROBLEM_JSON: {"schema": {"$ref": "#/components/schemas/PreconditionFailed"}}},
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
                if path not in READ_ONLY_POSTS:  # a computation stores nothing to replay
                    key = copy.deepcopy(_KEY_PARAM)  # no YAML aliases in openapi.yaml
                    operation.setdefault("parameters", []).append(key)
                responses["429"] = copy.deepcopy(_TOO_MANY)
                if on_game:
                    operation.setdefault("parameters", []).append(copy.deepcopy(_IF_MATCH_PARAM))
                    responses["412"] = copy.deepcopy(stale)
            creates_game = method.upper() == "POST" and path.endswith(("/games", "/imports"))
            if creates_game or (
                on_game and (method.upper() in WRITE_METHODS or path.endswith("{game_id}"))
            ):
                for code, answer in responses.items():
                    if str(code).startswith("2") and isinstance(answer, dict):
                        answer.setdefault("headers", {})["ETag"] = copy.deepcopy(_ETAG_HEADER)
            created = _CREATES.get((method.lower(), path))
            if created is not None and isinstance(responses.get("201"), dict):
                responses["201"]["links"] = _links(*created)
