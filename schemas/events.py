"""Domain events as the API sends them: the kinds and their payloads are the engine's own.

Every :class:`~api.rules.EventKind` is a value of ``kind``; its meaning and the keys of its
``data`` are read from the engine's payload class (first paragraph of its docstring, its
fields), so the documentation cannot name a kind nothing emits nor miss one.
"""

from __future__ import annotations

import dataclasses
import re

from marshmallow import Schema, fields, validate

from api.rules import PAYLOADS, EventData, EventKind

from .common import req

#: payload fields whose key in the event's ``data`` differs from their name, per kind (a
#: Deckel move's ``source`` is sent as ``from``; a game start's ``source`` keeps its name)
JSON_KEYS: dict[EventKind, dict[str, str]] = {
    EventKind.ROUND_LOST: {"source": "from"},
    EventKind.PENALTY: {"source": "from"},
}
#: the kinds the API sends, in the engine's order
EVENT_KINDS: tuple[str, ...] = tuple(kind.value for kind in EventKind)


def _renamed(payload: type[EventData]) -> dict[str, str]:
    return JSON_KEYS.get(payload.KIND, {})


def meaning(payload: type[EventData]) -> str:
    """What an event means: the first paragraph of its payload class's docstring (field
    names in ``…`` shown as the JSON keys, in Markdown)."""
    first = (payload.__doc__ or "").strip().split("\n\n")[0]
    keys = _renamed(payload)
    return re.sub(r"``([^`]+)``", lambda m: f"`{keys.get(m[1], m[1])}`", " ".join(first.split()))


def data_keys(payload: type[EventData]) -> dict[str, bool]:
    """The keys of an event's ``data`` → whether every event of the kind has it."""
    keys = _renamed(payload)
    return {
        keys.get(f.name, f.name): f.default is dataclasses.MISSING
        for f in dataclasses.fields(payload)
    }


def _kinds_doc() -> str:
    lines = []
    for kind in EventKind:
        payload = PAYLOADS[kind]
        keys = ", ".join(
            f"`{key}`" if always else f"`{key}` (optional)"
            for key, always in data_keys(payload).items()
        )
        lines.append(f"- `{kind.value}`: {meaning(payload)} Data: {keys}.")
    return (
        "What happened; `data` holds the details of the kind (a Hälfte is a half of the game, "
        "the Finale the decider between the two half losers, a Blattschuss one player losing "
        "both halves):\n\n" + "\n".join(lines)
    )


class DomainEventSchema(Schema):
    """Something the entry caused, with a German sentence a client can show as it is."""

    kind = req(
        fields.String,
        _kinds_doc(),
        EventKind.ROUND_LOST.value,
        validate=validate.OneOf(EVENT_KINDS),
    )
    message = req(
        fields.String,
        "German sentence for the players.",
        "Dieter bekommt 4 Deckel aus der Mitte – Schock 4 von Anna.",
    )
    data = req(
        fields.Dict,
        "Machine-readable details; keys depend on the kind (player, deckel, from, …).",
        {"player": "Dieter", "deckel": 4, "from": "mitte", "best": "Anna"},
        keys=fields.String(),
    )
