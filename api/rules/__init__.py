"""The pure Schocken rules engine (standard library only).

It takes a ruleset, a game and one command, and returns the domain events the command caused,
or raises a precise error (:class:`MalformedInput` vs :class:`RuleViolation`)::

    >>> from api.rules import PRESETS, Game, parse_event
    >>> rules = PRESETS["standard"]
    >>> game = Game.start(rules, ["Anna", "Bert", "Clara", "Dieter"], "Anna")
    >>> for e in [{"player": "Anna", "dice": [1, 1, 4], "throws": 3, "hand": False},
    ...           {"player": "Bert", "dice": [3, 4, 5], "throws": 3, "hand": False},
    ...           {"player": "Clara", "dice": [5, 5, 5], "throws": 1}]:
    ...     _ = game.apply(parse_event(e, rules))
    >>> [ev.message for ev in game.apply(parse_event(
    ...     {"player": "Dieter", "dice": [6, 3, 2], "throws": 3, "hand": False}, rules))]
    ['Dieter: Zahl 632 (2-3-6, 3 Würfe).', 'Dieter bekommt 4 Deckel aus der Mitte – Schock 4 von Anna.']
    >>> game.state()["mitte"], game.next_player
    (9, 'Dieter')
"""

from .errors import InvalidRules, MalformedInput, RuleViolation, SchockenError
from .game import MAX_PLAYERS, MIN_PLAYERS, DomainEvent, EventKind, Game, Phase
from .log import (
    GameHeader,
    new_game,
    parse_header,
    parse_played_at,
    replay_commands,
    replay_log,
    replay_text,
    to_log,
)
from .results import Category, Evaluation, evaluate, evaluation_table, format_dice, parse_dice
from .ruleset import (
    OPTION_HELP,
    OPTION_NAMES,
    PRESET_HELP,
    PRESETS,
    Ruleset,
    Special,
    ruleset_from_config,
)
from .turns import Command, RecordPenalty, RecordTurn, Throw, parse_event

__all__ = [
    "Category",
    "Command",
    "DomainEvent",
    "Evaluation",
    "EventKind",
    "Game",
    "GameHeader",
    "InvalidRules",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "MalformedInput",
    "OPTION_HELP",
    "OPTION_NAMES",
    "PRESETS",
    "PRESET_HELP",
    "Phase",
    "RecordPenalty",
    "RecordTurn",
    "RuleViolation",
    "Ruleset",
    "SchockenError",
    "Special",
    "Throw",
    "evaluate",
    "evaluation_table",
    "format_dice",
    "new_game",
    "parse_dice",
    "parse_event",
    "parse_header",
    "parse_played_at",
    "replay_commands",
    "replay_log",
    "replay_text",
    "ruleset_from_config",
    "to_log",
]
