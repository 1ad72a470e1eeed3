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
    >>> game.state().mitte, game.next_player
    (9, 'Dieter')
"""

from .dice import format_dice, parse_dice
from .errors import InvalidRules, MalformedInput, RuleViolation, SchockenError
from .events import (
    Blattschuss,
    DomainEvent,
    EventData,
    EventKind,
    FinaleStarted,
    GameLost,
    HalfLost,
    PenaltyGiven,
    PlayerOut,
    RoundLost,
    RoundRepeated,
    ThrowRecorded,
    TurnRecorded,
    Undone,
)
from .game import MAX_PLAYERS, MIN_PLAYERS, Game
from .help_texts import OPTION_HELP, PRESET_HELP
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
from .records import GameState, Half, Outcome, PenaltyRecord, Phase, RoundRecord, TurnFact
from .results import Category, Evaluation, evaluate, evaluation_table
from .ruleset import OPTION_NAMES, PRESETS, Ruleset, Special, ruleset_from_config
from .throws import (
    OpenTurn,
    RecordThrow,
    parse_throw,
    record_command,
    record_event,
    record_throw,
)
from .turns import Command, RecordPenalty, RecordTurn, Throw, parse_event, turn_in_detail

__all__ = [
    "Blattschuss",
    "Category",
    "Command",
    "DomainEvent",
    "Evaluation",
    "EventData",
    "EventKind",
    "FinaleStarted",
    "Game",
    "GameHeader",
    "GameLost",
    "GameState",
    "Half",
    "HalfLost",
    "InvalidRules",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "MalformedInput",
    "OPTION_HELP",
    "OPTION_NAMES",
    "OpenTurn",
    "Outcome",
    "PRESETS",
    "PRESET_HELP",
    "PenaltyGiven",
    "PenaltyRecord",
    "Phase",
    "PlayerOut",
    "RecordPenalty",
    "RecordThrow",
    "RecordTurn",
    "RoundLost",
    "RoundRecord",
    "RoundRepeated",
    "RuleViolation",
    "Ruleset",
    "SchockenError",
    "Special",
    "Throw",
    "ThrowRecorded",
    "TurnFact",
    "TurnRecorded",
    "Undone",
    "evaluate",
    "evaluation_table",
    "format_dice",
    "new_game",
    "parse_dice",
    "parse_event",
    "parse_header",
    "parse_played_at",
    "parse_throw",
    "record_command",
    "record_event",
    "record_throw",
    "replay_commands",
    "replay_log",
    "replay_text",
    "ruleset_from_config",
    "to_log",
    "turn_in_detail",
]
