"""The game-log format as a JSON Schema (draft 2020-12): ``schemas/gamelog.schema.json``,
described in prose in ``schemas/GAMELOG.md``.

The file is the contract third-party apps read; the OpenAPI document takes it as the component
``GameLog`` of the import and export operations (its ``$defs`` become components named
``GameLog…``)::

    >>> components = openapi_components()
    >>> sorted(components)[:3]
    ['GameLog', 'GameLogEvent', 'GameLogOverrides']
    >>> components["GameLog"]["properties"]["events"]["items"]
    {'$ref': '#/components/schemas/GameLogEvent'}

The import itself is checked by :class:`~schemas.games.GameLogSchema` (the shape) and by the
rules engine (every event); the tests validate exported logs against this schema.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

#: the JSON Schema of a game log
GAMELOG_SCHEMA_PATH = Path(__file__).with_name("gamelog.schema.json")
#: the OpenAPI component of a game log; its ``$defs`` are components with this prefix
COMPONENT = "GameLog"
_DEFS = "#/$defs/"


@cache
def _load() -> str:
    return GAMELOG_SCHEMA_PATH.read_text(encoding="utf-8")


def gamelog_schema() -> dict[str, Any]:
    """The JSON Schema of a game log (a fresh copy)."""
    schema: dict[str, Any] = json.loads(_load())
    return schema


def openapi_components() -> dict[str, dict[str, Any]]:
    """The schema as OpenAPI 3.1 components: ``GameLog`` and one ``GameLog<Name>`` per
    ``$defs`` entry, references rewritten to ``#/components/schemas/…``, and each
    ``examples`` list also given as ``example`` (what Swagger UI shows)."""
    schema = gamelog_schema()
    schema.pop("$schema", None)
    defs = schema.pop("$defs", {})
    components = {COMPONENT: schema} | {COMPONENT + name: body for name, body in defs.items()}
    return {name: _for_openapi(body) for name, body in components.items()}


def _for_openapi(node: Any) -> Any:
    if isinstance(node, list):
        return [_for_openapi(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _for_openapi(value) for key, value in node.items()}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS):
        out["$ref"] = "#/components/schemas/" + COMPONENT + ref.removeprefix(_DEFS)
    examples = out.get("examples")
    if isinstance(examples, list) and examples and "example" not in out:
        out["example"] = copy.deepcopy(examples[0])  # no YAML aliases
    return out
