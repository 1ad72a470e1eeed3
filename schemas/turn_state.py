"""The turn state every game answer carries: whose turn, the round's opener and throw limit,
the open throw-by-throw turn, and whether the client must send ``stop``
(:func:`api.rules.turn_state`). The turn-closing rules themselves are written once, in the
description of the games tag (``api/resources/games.py``)."""

from __future__ import annotations

from marshmallow import Schema, fields

from api.rules import Half

from .common import Bool, Int, doc, req

#: the outcome's labels of the halves (schemas/GAMELOG.md): the engine's Half.label, 1, 2 or "finale"
HALF = doc(
    f"Which part of the game: {Half.HALF1.label} or {Half.HALF2.label} (the two halves, "
    f"Hälften) or '{Half.FINALE.label}' (the decider between the two half losers).",
    Half.HALF1.label,
    oneOf=[
        {"type": "integer", "enum": [h.label for h in Half if isinstance(h.label, int)]},
        {"type": "string", "enum": [h.label for h in Half if isinstance(h.label, str)]},
    ],
)
#: where the turn-closing rules are written (once): the games tag of openapi.yaml
SEE_RULES = "See the turn-closing rules in the description of the games tag."


class OpenTurnStateSchema(Schema):
    throws_used = req(Int, "Throws of the open turn so far.", 1)
    throws_left = req(Int, "Further throws the turn's limit allows (0 after a blind throw).", 2)
    kept = fields.List(
        Int(metadata=doc("Pips of one die.", 1)),
        required=True,
        metadata=doc(
            "Dice out of the cup, pips ascending: set aside (herausgelegt) or sixes turned "
            "into ones (umgedreht). They are not thrown again.",
            [1],
        ),
    )
    dice_in_cup = req(Int, "Dice the next throw throws (dice minus kept).", 2)
    blind = req(Bool, "Announced blind.", False)
    can_stop = req(
        Bool,
        "The turn may end with the throws so far (stop, or another player's entry). "
        "False after turning sixes: the player must throw again.",
        True,
    )
    next_player = req(
        fields.String,
        "Who throws next once the turn ends as it stands (the round's loser, when it ends "
        "the round): that player's first throw ends it, unless it is the same player "
        "(must_stop). Null while it cannot end (can_stop false) or when it would end the "
        "game.",
        "Clara",
        allow_none=True,
    )


class TurnStateSchema(Schema):
    """The turn to be played next; null once the game is over."""

    half = fields.Raw(required=True, metadata=HALF)
    round = req(
        Int, "Index the round will have in outcome.rounds (0-based, as current_round[].round).", 0
    )
    round_of_half = req(Int, "Number of the round in its half (1 = first; a repetition counts).", 1)
    opener = req(
        fields.String,
        "Who opens (or opened) the round (Vorlegen): their number of throws is the limit "
        "for everybody else in the round.",
        "Anna",
    )
    player = req(fields.String, "Whose turn it is (as outcome.state.next_player).", "Bert")
    position = req(Int, "Position in the round, 0 = the opener.", 1)
    last_in_round = req(
        Bool,
        "This turn completes the round (unless, with schock_aus_ends_round, a Schock aus "
        "ends it earlier).",
        False,
    )
    limit = req(
        Int,
        "Throws this turn may use: while the opener throws, their cap (options.max_throws); "
        "afterwards the throws the opener used (outcome.state.limit).",
        2,
    )
    limit_fixed = req(
        Bool,
        "False while the opener throws (limit is only the cap), true once the opener "
        "finished and the limit holds for the rest of the round.",
        True,
    )
    opener_cap = req(Int, "The opener's cap: options.max_throws of the game.", 3)
    open = fields.Nested(
        OpenTurnStateSchema,
        required=True,
        allow_none=True,
        metadata=doc(
            "The throw-by-throw turn in progress (its throws are in open_turn), or null.",
            {
                "blind": False,
                "can_stop": True,
                "dice_in_cup": 2,
                "kept": [1],
                "next_player": "Clara",
                "throws_left": 1,
                "throws_used": 1,
            },
        ),
    )
    must_stop = req(
        Bool,
        "True when the open turn, if the player is done, must be ended with stop: ended "
        "as it stands it would end the game, or the same player would throw next (they "
        "would lose the round and open the next one, the next half or the Finale), so no "
        f"other player's entry can end it. Always false without an open turn. {SEE_RULES}",
        False,
    )
