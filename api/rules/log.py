"""The game log (schemas/GAMELOG.md v1): parse, replay, export.

>>> doc = {"rules": {"preset": "standard"}, "players": ["Anna", "Bert"], "starter": "Anna",
...        "events": [{"player": "Anna", "dice": [1, 1, 4], "throws": 2, "hand": False},
...                   {"player": "Bert", "dice": [6, 3, 2], "throws": 1}]}
>>> game = replay_log(doc)
>>> game.rounds[0].worst, game.rounds[0].deckel, game.state().mitte
('Bert', 4, 9)
>>> exported = to_log(game)
>>> exported["rules"], exported["events"][1]
({'preset': 'standard', 'overrides': {}}, {'player': 'Bert', 'dice': [6, 3, 2], 'throws': 1, 'hand': True})
>>> to_log(replay_log(exported)) == exported
True
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from .errors import MalformedInput, SchockenError
from .game import Game
from .ruleset import Ruleset, ruleset_from_config
from .turns import Command, check_keys, parse_event

LOG_KEYS = frozenset({"played_at", "rules", "players", "starter", "events"})
MAX_EVENTS = 5000


@dataclass(frozen=True, slots=True)
class GameHeader:
    rules: Ruleset
    players: tuple[str, ...]
    starter: str
    played_at: str | None


def parse_played_at(value: Any) -> str | None:
    """ISO 8601 with an offset, or None. Returned as given."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise MalformedInput("„played_at“ muss ein Datum nach ISO 8601 sein.", field="played_at")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise MalformedInput(
            f"„played_at“: {value!r} ist kein Datum nach ISO 8601 "
            "(z. B. 2026-11-27T20:15:00+01:00).",
            field="played_at",
        ) from None
    if moment.tzinfo is None:
        raise MalformedInput(
            f"„played_at“: {value!r} braucht eine Zeitzone (z. B. +01:00).", field="played_at"
        )
    if not in_range(moment):
        raise MalformedInput(f"„played_at“: {value!r} {OUT_OF_RANGE}", field="played_at")
    return value


#: why a moment whose UTC time lies before year 1 or after year 9999 is refused
OUT_OF_RANGE = "liegt außerhalb der Jahre 1 bis 9999 (in UTC gerechnet)."


def in_range(moment: datetime) -> bool:
    """Whether an aware moment is also a moment in UTC between the years 1 and 9999
    (``9999-12-31T23:59:59-12:00`` is not: in UTC it is the year 10000)."""
    try:
        moment.astimezone(UTC)
    except OverflowError:
        return False
    return True


def parse_header(doc: Any) -> tuple[GameHeader, list[Any]]:
    """Validate everything of a game log but its events; return the header and the raw events."""
    if not isinstance(doc, Mapping):
        raise MalformedInput("Ein Spielprotokoll muss ein JSON-Objekt sein.")
    check_keys(doc, LOG_KEYS, "im Spielprotokoll", name_field=False)
    for key in ("players", "starter"):
        if key not in doc:
            raise MalformedInput(
                f"Im Spielprotokoll fehlt „{key}“.", field=key, code="missing_field"
            )
    rules = ruleset_from_config(doc.get("rules"))
    played_at = parse_played_at(doc.get("played_at"))
    events = doc.get("events", [])
    if not isinstance(events, list):
        raise MalformedInput("„events“ muss eine Liste sein.", field="events")
    if len(events) > MAX_EVENTS:
        raise MalformedInput(
            f"Zu viele Einträge: höchstens {MAX_EVENTS}, nicht {len(events)}.", field="events"
        )
    game = Game.start(rules, doc["players"], doc["starter"])
    return GameHeader(rules, game.players, game.starter, played_at), events


def new_game(header: GameHeader) -> Game:
    """A fresh game from a validated header."""
    game = Game(header.rules, header.players, header.starter)
    game.played_at = header.played_at
    return game


def replay_log(doc: Any) -> Game:
    """Validate and replay a whole game log. Errors name the event: ``event 7: …``."""
    header, events = parse_header(doc)
    game = new_game(header)
    for index, raw in enumerate(events):
        try:
            game.apply(parse_event(raw, header.rules))
        except SchockenError as err:
            raise err.at_event(index) from err
    return game


def replay_commands(header: GameHeader, commands: list[Command]) -> Game:
    """Replay already parsed commands (the service layer's undo and rebuild)."""
    game = new_game(header)
    for index, command in enumerate(commands):
        try:
            game.apply(command)
        except SchockenError as err:
            raise err.at_event(index) from err
    return game


def to_log(game: Game) -> dict[str, Any]:
    """Export a game (finished or not) as a game log; replaying it gives the same game."""
    doc: dict[str, Any] = {}
    if game.played_at is not None:
        doc["played_at"] = game.played_at
    doc["rules"] = game.rules.to_config()
    doc["players"] = list(game.players)
    doc["starter"] = game.first_starter
    doc["events"] = [c.to_json() for c in game.commands]
    return doc


def replay_text(text: str) -> dict[str, Any]:
    """``schocken replay``: a game log as JSON text → the outcome, or ``{"error": …}``."""
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        return {"error": f"Kein gültiges JSON: {err}"}
    try:
        return replay_log(doc).outcome().to_json()
    except SchockenError as err:
        return {"error": err.message}
