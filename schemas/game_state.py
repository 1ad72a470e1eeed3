"""Games, what the API answers: a game with its state and outcome, lists, undo records."""

from __future__ import annotations

from marshmallow import Schema, fields

from api.rules import Phase

from .common import (
    Bool,
    Int,
    PageSchema,
    UtcDateTime,
    Verbatim,
    doc,
    either,
    list_of,
    names_field,
    notation_field,
)
from .events import DomainEventSchema
from .games import ThrowDetailSchema
from .rules import RulesConfigSchema
from .turn_state import HALF, SEE_RULES, TurnStateSchema


class TurnFactSchema(Schema):
    half = fields.Raw(required=True, metadata=HALF)
    round = Int(required=True, metadata=doc("Index of the round in the game (0-based).", 0))
    order = Int(required=True, metadata=doc("Position in the round, 0 = the starter.", 0))
    player = fields.String(required=True, metadata=doc("Who threw.", "Anna"))
    dice = notation_field("Final dice, pips ascending.")
    throws = Int(required=True, metadata=doc("Throws used.", 3))
    hand = Bool(required=True, metadata=doc("From the hand (aus der Hand).", False))
    blind = Bool(required=True, metadata=doc("Thrown blind.", False))
    category = fields.String(required=True, metadata=doc("Result category.", "schock"))
    name = fields.String(required=True, metadata=doc("German name of the result.", "Schock 4"))
    deckel = Int(required=True, metadata=doc("What the result is worth as the round's best.", 4))
    key = Int(required=True, metadata=doc("Comparison key, higher is better.", 4400))


class RoundSchema(Schema):
    half = fields.Raw(required=True, metadata=HALF)
    starter = fields.String(required=True, metadata=doc("Who opened the round.", "Anna"))
    limit = Int(
        required=True,
        allow_none=True,
        metadata=doc("Throw limit the starter set for the round.", 3),
    )
    best = fields.String(
        required=True, allow_none=True, metadata=doc("Best result's player.", "Anna")
    )
    worst = fields.String(
        required=True, allow_none=True, metadata=doc("Worst result's player.", "Dieter")
    )
    deckel = Int(required=True, metadata=doc("Deckel the worst player actually received.", 4))
    from_ = fields.String(
        data_key="from",
        attribute="from",
        required=True,
        allow_none=True,
        metadata=doc(
            "Where they came from: 'mitte' (the pile in the middle of the table), the paying "
            "player's name, or 'all' (Schock aus collects everything); null when repeated.",
            "mitte",
        ),
    )
    repeated = Bool(required=True, metadata=doc("The round was repeated (a tie).", False))
    best_result = fields.String(
        allow_none=True, metadata=doc("Name of the best result.", "Schock 4")
    )
    worst_result = fields.String(
        allow_none=True, metadata=doc("Name of the worst result.", "Zahl 632")
    )
    value = Int(
        allow_none=True,
        metadata=doc("What the best result was worth, before caps (doubled if blind).", 4),
    )


class PenaltyFactSchema(Schema):
    half = fields.Raw(required=True, metadata=HALF)
    round = Int(required=True, metadata=doc("Round index when it happened.", 2))
    player = fields.String(required=True, metadata=doc("The offender.", "Bert"))
    deckel = Int(required=True, metadata=doc("Deckel the offender received.", 1))
    from_ = fields.String(
        data_key="from",
        attribute="from",
        required=True,
        metadata=doc("'mitte' or the paying player's name.", "mitte"),
    )
    reason = fields.String(required=True, metadata=doc("Why.", "zu frühes Aufdecken"))


class StateSchema(Schema):
    phase = fields.String(
        required=True,
        metadata=doc(f"{either(Phase)}.", "half1"),
    )
    mitte = Int(required=True, metadata=doc("Deckel in the Mitte (the middle of the table).", 9))
    stacks = fields.Dict(
        keys=fields.String(),
        values=Int(),
        required=True,
        metadata=doc("Deckel each player holds.", {"Anna": 0, "Dieter": 4}),
    )
    active = names_field("Players still in the half, seat order.", ["Anna", "Dieter"])
    next_player = fields.String(
        required=True, allow_none=True, metadata=doc("Who throws next.", "Dieter")
    )
    limit = Int(
        required=True,
        allow_none=True,
        metadata=doc(
            "The round's throw limit once its starter has finished, else null (while the "
            "opener throws, turn.limit is their cap).",
            None,
        ),
    )


class OutcomeSchema(Schema):
    """The outcome of schemas/GAMELOG.md (what `schocken replay` prints) plus result names."""

    rounds = list_of(RoundSchema, "Every resolved round.")
    half_losers = names_field("Loser of each finished half, in order.", ["Dieter"])
    finale = fields.List(
        fields.String(metadata=doc("Name.", "Bert")),
        required=True,
        allow_none=True,
        metadata=doc("The two finalists in seat order, or null.", None),
    )
    blattschuss = Bool(
        required=True,
        metadata=doc("Blattschuss: one player lost both halves, so no Finale.", False),
    )
    loser = fields.String(
        required=True,
        allow_none=True,
        metadata=doc("The game's loser (pays the round) once decided.", None),
    )
    state = fields.Nested(StateSchema, required=True, metadata=doc("Where the game stands.", {}))
    penalties = list_of(PenaltyFactSchema, "Every penalty.")
    current_round = list_of(TurnFactSchema, "Turns of the round in progress, in order.")


class OpenTurnSchema(Schema):
    player = fields.String(required=True, metadata=doc("Who is throwing.", "Bert"))
    throws = list_of(ThrowDetailSchema, "Throws so far.", [{"dice": [3, 4, 1], "aside": [1]}])
    blind = Bool(required=True, metadata=doc("Announced blind.", False))


class GameSchema(Schema):
    id = Int(required=True, metadata=doc("Game id (across every Stammtisch; in URLs).", 1))
    number = Int(
        required=True,
        metadata=doc("The game's number in its Stammtisch: its first game is 1.", 1),
    )
    stammtisch = fields.String(required=True, metadata=doc("Slug of the Stammtisch.", "zur-post"))
    played_at = fields.String(
        required=True,
        allow_none=True,
        metadata=doc(
            "When it started, as given (null if an import gave none).", "2026-11-27T20:15:00+01:00"
        ),
    )
    year = Int(required=True, metadata=doc("Calendar year at the table.", 2026))
    status = fields.String(
        required=True,
        metadata=doc(
            "running, finished or abandoned (called off; not in the statistics).", "running"
        ),
    )
    source = fields.String(
        required=True, metadata=doc("api (recorded here) or import (a game log).", "api")
    )
    players = names_field("Seat order.", ["Anna", "Bert", "Clara", "Dieter"])
    starter = fields.String(required=True, metadata=doc("Opened the first round.", "Anna"))
    rules = fields.Nested(
        RulesConfigSchema,
        required=True,
        metadata=doc("Rules of this game.", {"preset": "standard", "overrides": {}}),
    )
    options = fields.Dict(
        keys=fields.String(),
        required=True,
        metadata=doc("Every option of the rules, expanded.", {"deckel": 13, "max_throws": 3}),
    )
    seq = Int(
        required=True,
        metadata=doc("Sequence number of the last entry in the game's log (0: none).", 7),
    )
    open_turn = fields.Nested(
        OpenTurnSchema,
        required=True,
        allow_none=True,
        metadata=doc("A throw-by-throw turn not finished yet, or null.", None),
    )
    turn = fields.Nested(
        TurnStateSchema,
        required=True,
        allow_none=True,
        metadata=doc(
            "The turn to be played next: whose turn, the round's opener and throw limit, the "
            f"open turn's throws and kept dice, whether stop is needed; null once the game is "
            f"over. {SEE_RULES}",
            {
                "half": 1,
                "round": 0,
                "round_of_half": 1,
                "opener": "Anna",
                "player": "Dieter",
                "position": 3,
                "last_in_round": True,
                "limit": 3,
                "limit_fixed": True,
                "opener_cap": 3,
                "open": {
                    "throws_used": 1,
                    "throws_left": 2,
                    "kept": [],
                    "dice_in_cup": 3,
                    "blind": False,
                    "can_stop": True,
                    "next_player": "Dieter",
                },
                "must_stop": True,
            },
        ),
    )
    outcome = Verbatim(OutcomeSchema, required=True, metadata=doc("The game so far.", {}))


class WriteResultSchema(Schema):
    seq = Int(required=True, metadata=doc("Sequence number of the new entry.", 8))
    events = fields.List(
        Verbatim(DomainEventSchema),
        required=True,
        metadata=doc(
            "What the entry caused, in order.",
            [
                {
                    "kind": "round_lost",
                    "message": "Dieter bekommt 4 Deckel aus der Mitte – Schock 4 von Anna.",
                    "data": {"player": "Dieter", "deckel": 4},
                }
            ],
        ),
    )
    game = fields.Nested(GameSchema, required=True, metadata=doc("The new game state.", {}))


class GameSummarySchema(Schema):
    id = Int(required=True, metadata=doc("Game id (across every Stammtisch; in URLs).", 1))
    number = Int(
        required=True,
        metadata=doc("The game's number in its Stammtisch: its first game is 1.", 1),
    )
    played_at = fields.String(
        required=True, allow_none=True, metadata=doc("As given.", "2026-11-27T20:15:00+01:00")
    )
    year = Int(required=True, metadata=doc("Calendar year at the table.", 2026))
    status = fields.String(
        required=True,
        metadata=doc(
            "running, finished or abandoned (called off; not in the statistics).", "finished"
        ),
    )
    phase = fields.String(required=True, metadata=doc(f"{either(Phase)}.", "finished"))
    players = names_field("Seat order.", ["Anna", "Bert"])
    loser = fields.String(
        required=True, allow_none=True, metadata=doc("Who lost (pays), once decided.", "Bert")
    )
    source = fields.String(required=True, metadata=doc("api or import.", "api"))


class GameListSchema(PageSchema):
    items = list_of(GameSummarySchema, "This page.")
    total = Int(required=True, metadata=doc("Games matching the filters.", 42))


class UndoRecordSchema(Schema):
    seq = Int(required=True, metadata=doc("Sequence number of the undo entry.", 9))
    undone_seq = Int(required=True, metadata=doc("Sequence number of the entry undone.", 8))
    undone_kind = fields.String(required=True, metadata=doc("turn, throw or penalty.", "turn"))
    undone = fields.Dict(
        keys=fields.String(),
        required=True,
        metadata=doc(
            "The entry that was undone, as recorded.",
            {"player": "Bert", "dice": [6, 6, 6], "throws": 1},
        ),
    )
    by = fields.String(
        required=True, allow_none=True, metadata=doc("Who undid it, if given.", "Dieter")
    )
    reason = fields.String(
        required=True, allow_none=True, metadata=doc("Why, if given.", "vertippt")
    )
    recorded_at = UtcDateTime(
        required=True, metadata=doc("When (UTC).", "2026-11-27T20:47:11+00:00")
    )
