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
    opt,
    req,
)
from .events import DomainEventSchema
from .games import ThrowDetailSchema
from .rules import RulesConfigSchema
from .turn_state import HALF, SEE_RULES, TurnStateSchema


class TurnFactSchema(Schema):
    half = fields.Raw(required=True, metadata=HALF)
    round = req(Int, "Index of the round in the game (0-based).", 0)
    order = req(Int, "Position in the round, 0 = the starter.", 0)
    player = req(fields.String, "Who threw.", "Anna")
    dice = notation_field("Final dice, pips ascending.")
    throws = req(Int, "Throws used.", 3)
    hand = req(Bool, "From the hand (aus der Hand).", False)
    blind = req(Bool, "Thrown blind.", False)
    category = req(fields.String, "Result category.", "schock")
    name = req(fields.String, "German name of the result.", "Schock 4")
    deckel = req(Int, "What the result is worth as the round's best.", 4)
    key = req(Int, "Comparison key, higher is better.", 4400)


class RoundSchema(Schema):
    half = fields.Raw(required=True, metadata=HALF)
    starter = req(fields.String, "Who opened the round.", "Anna")
    limit = req(Int, "Throw limit the starter set for the round.", 3, allow_none=True)
    best = req(fields.String, "Best result's player.", "Anna", allow_none=True)
    worst = req(fields.String, "Worst result's player.", "Dieter", allow_none=True)
    deckel = req(Int, "Deckel the worst player actually received.", 4)
    from_ = req(
        fields.String,
        "Where they came from: 'mitte' (the pile in the middle of the table), the paying "
        "player's name, or 'all' (Schock aus collects everything); null when repeated.",
        "mitte",
        data_key="from",
        attribute="from",
        allow_none=True,
    )
    repeated = req(Bool, "The round was repeated (a tie).", False)
    best_result = opt(fields.String, "Name of the best result.", "Schock 4", allow_none=True)
    worst_result = opt(fields.String, "Name of the worst result.", "Zahl 632", allow_none=True)
    value = opt(
        Int, "What the best result was worth, before caps (doubled if blind).", 4, allow_none=True
    )


class PenaltyFactSchema(Schema):
    half = fields.Raw(required=True, metadata=HALF)
    round = req(Int, "Round index when it happened.", 2)
    player = req(fields.String, "The offender.", "Bert")
    deckel = req(Int, "Deckel the offender received.", 1)
    from_ = req(
        fields.String,
        "'mitte' or the paying player's name.",
        "mitte",
        data_key="from",
        attribute="from",
    )
    reason = req(fields.String, "Why.", "zu frühes Aufdecken")


class StateSchema(Schema):
    phase = req(fields.String, f"{either(Phase)}.", "half1")
    mitte = req(Int, "Deckel in the Mitte (the middle of the table).", 9)
    stacks = req(
        fields.Dict,
        "Deckel each player holds.",
        {"Anna": 0, "Dieter": 4},
        keys=fields.String(),
        values=Int(),
    )
    active = names_field("Players still in the half, seat order.", ["Anna", "Dieter"])
    next_player = req(fields.String, "Who throws next.", "Dieter", allow_none=True)
    limit = req(
        Int,
        "The round's throw limit once its starter has finished, else null (while the "
        "opener throws, turn.limit is their cap).",
        None,
        allow_none=True,
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
    blattschuss = req(Bool, "Blattschuss: one player lost both halves, so no Finale.", False)
    loser = req(
        fields.String, "The game's loser (pays the round) once decided.", None, allow_none=True
    )
    state = fields.Nested(StateSchema, required=True, metadata=doc("Where the game stands.", {}))
    penalties = list_of(PenaltyFactSchema, "Every penalty.")
    current_round = list_of(TurnFactSchema, "Turns of the round in progress, in order.")


class OpenTurnSchema(Schema):
    player = req(fields.String, "Who is throwing.", "Bert")
    throws = list_of(ThrowDetailSchema, "Throws so far.", [{"dice": [3, 4, 1], "aside": [1]}])
    blind = req(Bool, "Announced blind.", False)


class GameSchema(Schema):
    id = req(Int, "Game id (across every Stammtisch; in URLs).", 1)
    number = req(Int, "The game's number in its Stammtisch: its first game is 1.", 1)
    stammtisch = req(fields.String, "Slug of the Stammtisch.", "zur-post")
    played_at = req(
        fields.String,
        "When it started, as given (null if an import gave none).",
        "2026-11-27T20:15:00+01:00",
        allow_none=True,
    )
    year = req(Int, "Calendar year at the table.", 2026)
    status = req(
        fields.String,
        "running, finished or abandoned (called off; not in the statistics).",
        "running",
    )
    source = req(fields.String, "api (recorded here) or import (a game log).", "api")
    players = names_field("Seat order.", ["Anna", "Bert", "Clara", "Dieter"])
    starter = req(fields.String, "Opened the first round.", "Anna")
    rules = fields.Nested(
        RulesConfigSchema,
        required=True,
        metadata=doc("Rules of this game.", {"preset": "standard", "overrides": {}}),
    )
    options = req(
        fields.Dict,
        "Every option of the rules, expanded.",
        {"deckel": 13, "max_throws": 3},
        keys=fields.String(),
    )
    seq = req(Int, "Sequence number of the last entry in the game's log (0: none).", 7)
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
    seq = req(Int, "Sequence number of the new entry.", 8)
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
    id = req(Int, "Game id (across every Stammtisch; in URLs).", 1)
    number = req(Int, "The game's number in its Stammtisch: its first game is 1.", 1)
    played_at = req(fields.String, "As given.", "2026-11-27T20:15:00+01:00", allow_none=True)
    year = req(Int, "Calendar year at the table.", 2026)
    status = req(
        fields.String,
        "running, finished or abandoned (called off; not in the statistics).",
        "finished",
    )
    phase = req(fields.String, f"{either(Phase)}.", "finished")
    players = names_field("Seat order.", ["Anna", "Bert"])
    loser = req(fields.String, "Who lost (pays), once decided.", "Bert", allow_none=True)
    source = req(fields.String, "api or import.", "api")


class GameListSchema(PageSchema):
    items = list_of(GameSummarySchema, "This page.")
    total = req(Int, "Games matching the filters.", 42)


class UndoRecordSchema(Schema):
    seq = req(Int, "Sequence number of the undo entry.", 9)
    undone_seq = req(Int, "Sequence number of the entry undone.", 8)
    undone_kind = req(fields.String, "turn, throw or penalty.", "turn")
    undone = req(
        fields.Dict,
        "The entry that was undone, as recorded.",
        {"player": "Bert", "dice": [6, 6, 6], "throws": 1},
        keys=fields.String(),
    )
    by = req(fields.String, "Who undid it, if given.", "Dieter", allow_none=True)
    reason = req(fields.String, "Why, if given.", "vertippt", allow_none=True)
    recorded_at = req(UtcDateTime, "When (UTC).", "2026-11-27T20:47:11+00:00")
