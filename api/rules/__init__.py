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

from . import limits
from .dice import DICE_PATTERN, format_dice, parse_dice
from .errors import CodedError, InvalidRules, MalformedInput, RuleViolation, SchockenError
from .events import (
    PAYLOADS,
    Blattschuss,
    DomainEvent,
    EventData,
    EventKind,
    FinaleStarted,
    GameAbandoned,
    GameLost,
    GameStarted,
    HalfLost,
    PenaltyGiven,
    PlayerOut,
    RoundLost,
    RoundRepeated,
    ThrowRecorded,
    TurnRecorded,
    Undone,
)
from .game import MAX_PLAYERS, MIN_PLAYERS, Game, sort_key
from .help_texts import OPTION_HELP, OPTION_TITLES, PRESET_HELP
from .limits import OPTION_LIMITS, Limit, read_number
from .log import (
    MAX_EVENTS,
    OUT_OF_RANGE,
    GameHeader,
    in_range,
    new_game,
    parse_header,
    parse_played_at,
    replay_commands,
    replay_log,
    replay_text,
    to_log,
)
from .luck import PlayerLuck, TurnLuck, game_luck, turn_luck
from .odds import Decision, Odds, Target, odds, solver, worst_so_far
from .prose import describe as house_rules_prose
from .ranking import join_words
from .records import (
    GameState,
    Half,
    OpenTurnState,
    Outcome,
    PenaltyRecord,
    Phase,
    RoundRecord,
    TurnFact,
    TurnState,
)
from .results import Category, Evaluation, evaluate, evaluation_table
from .ruleset import (
    HAND_BEATS_VALUES,
    HAND_ONLY_VALUES,
    NAMED_SPECIALS,
    OPTION_NAMES,
    PRESETS,
    FinaleOpener,
    Jule,
    NextStarter,
    PenaltyMode,
    Ruleset,
    SchockAus,
    Special,
    Strassen,
    Ties,
    ruleset_from_config,
)
from .simulate import simulate_game, simulate_logs
from .text import name_key, name_problem, normalize_name, reason_problem
from .throws import (
    OpenTurn,
    RecordThrow,
    feed_entry,
    parse_throw,
    record_command,
    record_event,
    record_throw,
    turn_state,
)
from .turns import (
    MAX_NAME,
    MAX_REASON,
    Command,
    RecordPenalty,
    RecordTurn,
    Throw,
    parse_event,
    throws_word,
    turn_in_detail,
)
from .words import count

__all__ = [
    "house_rules_prose",
    "join_words",
    "odds",
    "game_luck",
    "turn_luck",
    "solver",
    "sort_key",
    "worst_so_far",
    "PlayerLuck",
    "TurnLuck",
    "Blattschuss",
    "Category",
    "Command",
    "DICE_PATTERN",
    "Decision",
    "DomainEvent",
    "Evaluation",
    "EventData",
    "EventKind",
    "FinaleOpener",
    "FinaleStarted",
    "GameAbandoned",
    "GameStarted",
    "Game",
    "GameHeader",
    "GameLost",
    "GameState",
    "HAND_BEATS_VALUES",
    "HAND_ONLY_VALUES",
    "Half",
    "HalfLost",
    "InvalidRules",
    "Jule",
    "Limit",
    "MAX_EVENTS",
    "MAX_NAME",
    "MAX_PLAYERS",
    "MAX_REASON",
    "MIN_PLAYERS",
    "MalformedInput",
    "NAMED_SPECIALS",
    "NextStarter",
    "OPTION_HELP",
    "OPTION_LIMITS",
    "OPTION_NAMES",
    "OPTION_TITLES",
    "Odds",
    "OpenTurn",
    "OpenTurnState",
    "Outcome",
    "PAYLOADS",
    "PRESETS",
    "PRESET_HELP",
    "PenaltyGiven",
    "PenaltyMode",
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
    "SchockAus",
    "SchockenError",
    "CodedError",
    "Special",
    "Strassen",
    "Target",
    "Throw",
    "ThrowRecorded",
    "Ties",
    "TurnFact",
    "TurnRecorded",
    "TurnState",
    "Undone",
    "evaluate",
    "evaluation_table",
    "feed_entry",
    "format_dice",
    "limits",
    "new_game",
    "parse_dice",
    "parse_event",
    "parse_header",
    "OUT_OF_RANGE",
    "in_range",
    "parse_played_at",
    "read_number",
    "parse_throw",
    "record_command",
    "record_event",
    "record_throw",
    "replay_commands",
    "replay_log",
    "replay_text",
    "ruleset_from_config",
    "throws_word",
    "count",
    "simulate_game",
    "simulate_logs",
    "to_log",
    "turn_in_detail",
    "turn_state",
    "name_key",
    "name_problem",
    "normalize_name",
    "reason_problem",
]
