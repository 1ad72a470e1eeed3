"""House rules (Hausregeln): presets, overrides, evaluating a result."""

from __future__ import annotations

from enum import StrEnum

from marshmallow import Schema, fields, validate

from api.rules import (
    HAND_BEATS_VALUES,
    HAND_ONLY_VALUES,
    OPTION_HELP,
    OPTION_LIMITS,
    PRESETS,
    FinaleOpener,
    Jule,
    NextStarter,
    PenaltyMode,
    SchockAus,
    Strassen,
    Ties,
    limits,
)

from .common import Bool, Int, dice_field, doc, list_of, notation_field, opt, req, within

#: the engine's presets, in its order
PRESET_NAMES: tuple[str, ...] = tuple(PRESETS)


def _values(option: type[StrEnum]) -> tuple[str, ...]:
    """The values of one of the engine's options, in its order."""
    return tuple(member.value for member in option)


def _flag(description: str, example: bool = True) -> fields.Boolean:
    return Bool(metadata=doc(description, example))


def _choice(values: tuple[str, ...], description: str) -> fields.String:
    return fields.String(validate=validate.OneOf(values), metadata=doc(description, values[-1]))


def _subset(values: tuple[str, ...], description: str) -> fields.List[str]:
    return fields.List(
        fields.String(validate=validate.OneOf(values), metadata=doc("One value.", values[0])),
        validate=validate.Length(max=len(values)),
        metadata=doc(description, [values[0]]),
    )


class OverridesSchema(Schema):
    """Every house-rule option (schemas/GAMELOG.md table); each overrides the preset's value."""

    deckel = opt(
        Int,
        "Deckel in the game (beer mats, the penalty tokens); usually 13.",
        15,
        validate=within(OPTION_LIMITS["deckel"]),
    )
    max_throws = opt(
        Int,
        "Most throws the round's starter may use (Bördeschock: 5).",
        3,
        validate=within(OPTION_LIMITS["max_throws"]),
    )
    sixes_turning = _flag("Two sixes of one throw may be turned into a one (umdrehen).")
    ones_only_aside = _flag("Only ones may be set aside.")
    general_over_schock2 = _flag("A General (three of a kind) beats Schock 2.")
    strassen = _choice(_values(Strassen), "Straßen (runs) ranked by height or all equal.")
    hand_only = _subset(
        HAND_ONLY_VALUES, "Results that count only from the hand (else they are a Zahl)."
    )
    hand_beats_assembled = _subset(
        HAND_BEATS_VALUES, "Results where one from the hand beats an equal assembled one."
    )
    ties = _choice(
        _values(Ties),
        "Tie rule between equal results (api/rules/RULES.md §4.4).",
    )
    jule = _choice(_values(Jule), "Jule 4-2-1: off, top (takes all) or sieben (7).")
    specials = fields.List(
        fields.Raw(
            metadata=doc(
                "A name (neuner, siebener, achter) or {name, pips, rank, deckel}.", "neuner"
            )
        ),
        metadata=doc(
            "Special results of the house (Neuner, Siebener, Achter or your own).",
            ["neuner", {"name": "Zwicker", "pips": [2, 1, 1], "rank": 405, "deckel": 5}],
        ),
    )
    two_fives_never_lose = _flag("A result with two fives never loses the round.")
    schock_aus = _choice(
        _values(SchockAus),
        "Schock aus (1-1-1): the worst takes every Deckel and loses the half (half), or it is "
        "worth the game's Deckel under the normal rules (total, 'Schock aus kostet 13').",
    )
    schock_aus_ends_round = _flag("A Schock aus ends the round at once.")
    passing_on = _flag("The best player passes own Deckel on even while the Mitte holds some.")
    next_starter = _choice(_values(NextStarter), "Who opens the next round.")
    finale_opener = _choice(
        _values(FinaleOpener),
        "Who opens the Finale (the decider between the two half losers).",
    )
    blind = _flag("Blind allowed: one throw, the round's best result counts double.")
    penalty = opt(
        Int,
        "Strafdeckel (penalty Deckel) per violation; null: no fixed amount.",
        1,
        allow_none=True,
        validate=within(OPTION_LIMITS["penalty"]),
    )
    penalty_mode = _choice(
        _values(PenaltyMode), "A penalty gives Deckel, or makes the offender lose the round."
    )
    two_dice = _flag("Played with two dice; the third is imagined to fit best.", False)


class RulesConfigSchema(Schema):
    """House rules as a preset plus single overridden options (schemas/GAMELOG.md, rules.overrides)."""

    preset = opt(
        fields.String,
        "Name of the preset the house rules start from (a full set of options; see "
        "GET /api/v1/rules/presets).",
        "wolbeck",
        load_default="standard",
        validate=validate.OneOf(PRESET_NAMES),
    )
    overrides = fields.Nested(
        OverridesSchema,
        load_default=dict,
        metadata=doc(
            "Options that differ from the preset, by key (deckel, max_throws, sixes_turning, "
            "jule, …; the table in schemas/GAMELOG.md). An unknown key or value is rejected with 422. "
            "Stored and answered as the differences only: an override equal to the preset's "
            "value changes nothing and is left out of the answer's `rules.overrides` (every "
            "option's value is in `options`).",
            {"deckel": 15, "jule": "sieben"},
        ),
    )


class OptionSchema(Schema):
    key = req(fields.String, "Option key.", "deckel")
    value = req(
        fields.Raw, "Option value (number, boolean, text, list or null).", 13, allow_none=True
    )
    description = req(fields.String, "German explanation.", OPTION_HELP["deckel"])


class PresetSchema(Schema):
    name = req(fields.String, "Preset name.", "standard")
    description = req(
        fields.String,
        "German description of the preset's origin.",
        "Rheinische Grundregeln (Knobeln – Schocken, die Regeln)",
    )
    options = list_of(
        OptionSchema,
        "Every option with its value and a German explanation.",
        [{"key": "deckel", "value": 13, "description": "Anzahl der Deckel im Spiel."}],
    )


class EvaluateRequestSchema(Schema):
    dice = dice_field(
        "The final dice of a turn: three pips (two under the two_dice option), any order.",
        [1, 1, 4],
        minimum=2,
        maximum=3,
        required=True,
    )
    hand = opt(
        Bool,
        "'Aus der Hand': all dice fell in one single throw, nothing set aside or turned.",
        False,
        load_default=True,
    )
    rules = fields.Nested(
        RulesConfigSchema,
        load_default=lambda: {"preset": "standard", "overrides": {}},
        metadata=doc(
            "House rules to evaluate under (default: the standard preset).",
            {"preset": "standard", "overrides": {}},
        ),
    )


class EvaluationSchema(Schema):
    dice = notation_field("Canonical notation, pips ascending.")
    hand = req(Bool, "From the hand (aus der Hand).", False)
    category = req(
        fields.String,
        "schock_aus (1-1-1), schock (1-1-h), general (three of a kind), strasse (a run), "
        "zahl (anything else) or special (Jule, Neuner, … by house rule).",
        "schock",
    )
    name = req(fields.String, "German name of the result.", "Schock 4")
    deckel = req(
        Int,
        "Deckel (beer mats, the penalty tokens) the round's worst player receives when "
        "this is the best result.",
        4,
    )
    takes_all = req(
        Bool, "The result takes every Deckel (Schock aus): the worst player loses the half.", False
    )
    key = req(Int, "Comparison key under these rules: higher beats lower.", 4400)


class OddsTargetSchema(Schema):
    dice = dice_field(
        "The result to beat: three pips (two under two_dice), any order.",
        [1, 1, 5],
        minimum=2,
        maximum=3,
        required=True,
    )
    throws = req(Int, "The throws it took.", 2, validate=within(limits.THROWS))
    hand = opt(
        Bool,
        "It was thrown aus der Hand (every die in its final throw).",
        False,
        load_default=False,
    )


class OddsRequestSchema(Schema):
    rules = fields.Nested(
        RulesConfigSchema,
        load_default=lambda: {"preset": "standard", "overrides": {}},
        metadata=doc(
            "House rules, as for a Stammtisch (default: the standard preset).",
            {"preset": "standard"},
        ),
    )
    aside = dice_field(
        "The pips set aside in earlier throws of this turn (a turned six counts as its 1).",
        [1, 1],
        minimum=0,
        maximum=2,
        load_default=list,
    )
    dice = dice_field(
        "The pips of the throw just made: the dice not set aside (3 − len(aside); two dice "
        "in all under two_dice).",
        [4],
        minimum=1,
        maximum=3,
        required=True,
    )
    throws = req(
        Int,
        "The throws made so far in this turn, this one included.",
        2,
        validate=within(limits.THROWS),
    )
    limit = req(
        Int,
        "The turn's throw limit (set by the round's opener).",
        3,
        validate=within(limits.THROWS),
    )
    target = fields.Nested(
        OddsTargetSchema,
        required=True,
        metadata=doc(
            "The result to beat, thrown earlier in the same round by another player.",
            {"dice": [1, 1, 5], "throws": 2, "hand": False},
        ),
    )


class OddsDecisionSchema(Schema):
    stop = req(Bool, "Stop now (keep the dice as they lie).", False)
    aside = req(
        fields.List,
        "The pips of the throw just made that are set aside before throwing again.",
        [],
        cls_or_instance=Int(),
    )
    sixes = req(Int, "Sixes turned into 1s (sixes_turning): 0, 1 or 2.", 0)
    p_beat = req(
        fields.Float,
        "Probability that the turn's final result beats the target, going on optimally.",
        0.3333333333,
    )
    p_tie = req(
        fields.Float,
        "Probability of a final result the ruleset treats as equal to the target.",
        0.0,
    )


class OddsSchema(Schema):
    decisions = list_of(
        OddsDecisionSchema,
        "Every legal decision, stop first (api/rules/RULES.md §12 gives the order).",
    )
    best = req(Int, "Index of the decision with the highest p_beat (the first of equal ones).", 1)
