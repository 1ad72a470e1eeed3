"""House rules (Hausregeln): presets, overrides, evaluating a result."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from .common import dice_field, doc

PRESET_NAMES = ("standard", "wikipedia", "bvb", "hennef", "wolbeck", "party", "nrw")


class RulesConfigSchema(Schema):
    """House rules as a preset plus single overridden options (GAMELOG.md, rules.overrides)."""

    preset = fields.String(
        load_default="standard",
        validate=validate.OneOf(PRESET_NAMES),
        metadata=doc(
            "Name of the preset the house rules start from (a full set of options; see "
            "GET /api/v1/rules/presets).",
            "wolbeck",
        ),
    )
    overrides = fields.Dict(
        keys=fields.String(),
        load_default=dict,
        metadata=doc(
            "Options that differ from the preset, by key (deckel, max_throws, sixes_turning, "
            "jule, …; the table in GAMELOG.md). An unknown key or value is rejected with 422.",
            {"deckel": 15, "jule": "sieben"},
        ),
    )


class OptionSchema(Schema):
    key = fields.String(required=True, metadata=doc("Option key.", "deckel"))
    value = fields.Raw(
        required=True,
        allow_none=True,
        metadata=doc("Option value (number, boolean, text, list or null).", 13),
    )
    description = fields.String(
        required=True,
        metadata=doc("German explanation.", "Anzahl der Deckel im Spiel (2–99, üblich 13)."),
    )


class PresetSchema(Schema):
    name = fields.String(required=True, metadata=doc("Preset name.", "standard"))
    description = fields.String(
        required=True,
        metadata=doc(
            "German description of the preset's origin.",
            "Rheinische Grundregeln (Knobeln – Schocken, die Regeln)",
        ),
    )
    options = fields.List(
        fields.Nested(OptionSchema),
        required=True,
        metadata=doc(
            "Every option with its value and a German explanation.",
            [{"key": "deckel", "value": 13, "description": "Anzahl der Deckel im Spiel."}],
        ),
    )


class EvaluateRequestSchema(Schema):
    dice = dice_field(
        "The final dice of a turn: three pips (two under the two_dice option), any order.",
        [1, 1, 4],
        minimum=2,
        maximum=3,
        required=True,
    )
    hand = fields.Boolean(
        load_default=True,
        metadata=doc(
            "'Aus der Hand': all dice fell in one single throw, nothing set aside or turned.",
            False,
        ),
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
    dice = fields.String(
        required=True, metadata=doc("Canonical notation, pips ascending.", "1-1-4")
    )
    hand = fields.Boolean(required=True, metadata=doc("From the hand (aus der Hand).", False))
    category = fields.String(
        required=True,
        metadata=doc(
            "schock_aus (1-1-1), schock (1-1-h), general (three of a kind), strasse (a run), "
            "zahl (anything else) or special (Jule, Neuner, … by house rule).",
            "schock",
        ),
    )
    name = fields.String(required=True, metadata=doc("German name of the result.", "Schock 4"))
    deckel = fields.Integer(
        required=True,
        metadata=doc(
            "Deckel (beer mats, the penalty tokens) the round's worst player receives when "
            "this is the best result.",
            4,
        ),
    )
    takes_all = fields.Boolean(
        required=True,
        metadata=doc(
            "The result takes every Deckel (Schock aus): the worst player loses the half.", False
        ),
    )
    key = fields.Integer(
        required=True,
        metadata=doc("Comparison key under these rules: higher beats lower.", 4400),
    )
