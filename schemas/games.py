"""Games, what clients send: start, list, recording (turn, throw, penalty, undo) and the game
log of import and export. The answers are in :mod:`schemas.game_state`."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from api.rules import MAX_EVENTS, MAX_PLAYERS, MAX_REASON, MIN_PLAYERS, limits

from .common import (
    PLAYER_NAME,
    Bool,
    Int,
    IsoDateTime,
    TextNumber,
    dice_field,
    different,
    doc,
    opt,
    player_field,
    req,
    within,
)
from .rules import RulesConfigSchema


class GameStartSchema(Schema):
    players = fields.List(
        player_field("Name."),
        required=True,
        validate=[validate.Length(min=MIN_PLAYERS, max=MAX_PLAYERS), different],
        metadata=doc(
            "Names of the Stammtisch's players in seat order (clockwise, the order of play).",
            ["Anna", "Bert", "Clara", "Dieter"],
            uniqueItems=True,
        ),
    )
    starter = player_field("Who opens the first round (Vorlegen).", required=True)
    played_at = IsoDateTime(
        metadata=doc(
            "When the game started, ISO 8601 with offset; statistics count it in that year. "
            "Default: now (UTC).",
            "2026-11-27T20:15:00+01:00",
            format="date-time",
        )
    )
    rules = fields.Nested(
        RulesConfigSchema,
        metadata=doc(
            "House rules for this game (default: the Stammtisch's). Stored expanded with the "
            "game, so later changes never rewrite history.",
            {"preset": "standard", "overrides": {}},
        ),
    )


class ThrowDetailSchema(Schema):
    dice = dice_field(
        "Pips rolled in this throw (3 minus the dice already set aside).",
        [1, 4, 6],
        minimum=1,
        maximum=3,
        required=True,
    )
    aside = dice_field(
        "Pips of this throw set aside afterwards (herauslegen).", [1], minimum=0, maximum=3
    )
    sixes = opt(
        Int,
        "Sixes turned (umdrehen): 1 = two sixes become one 1, 2 = three sixes become two 1s.",
        0,
        validate=validate.Range(0, 2),
    )


class TurnRequestSchema(Schema):
    """A whole turn: a summary (dice, throws, hand) or the throws in detail."""

    player = player_field("Whose turn it is.", required=True)
    dice = dice_field(
        "Summary: the final dice, any order (two under the two_dice option).",
        [1, 1, 4],
        minimum=2,
        maximum=3,
    )
    throws = opt(
        Int,
        "Summary: throws used, 1 to turn.limit (the round's limit set by the starter; "
        "while the starter throws, their cap options.max_throws).",
        3,
        validate=within(limits.THROWS),
    )
    hand = opt(
        Bool,
        "Summary: 'aus der Hand', the final throw threw all dice. Missing means throws == 1.",
        False,
    )
    blind = opt(Bool, "Announced blind (if the house rules allow it): exactly one throw.", False)
    detail = fields.List(
        fields.Nested(ThrowDetailSchema),
        validate=validate.Length(min=1, max=limits.THROWS.high),
        metadata=doc(
            "Instead of dice/throws/hand: every throw of the turn.",
            [{"dice": [3, 4, 1], "aside": [1]}, {"dice": [1, 5]}],
        ),
    )

    @validates_schema
    def _one_form(self, data: dict[str, Any], **kwargs: object) -> None:
        summary = {"dice", "throws", "hand"} & data.keys()
        if "detail" in data and summary:
            raise ValidationError(
                "Entweder „detail“ oder „dice“/„throws“/„hand“, nicht beides.", "detail"
            )
        if "detail" not in data:
            for key in ("dice", "throws"):
                if key not in data:
                    raise ValidationError("Pflichtfeld für eine Zusammenfassung.", key)


class ThrowRequestSchema(Schema):
    """One throw of a throw-by-throw turn, or only 'stop'."""

    player = player_field("Who throws.", required=True)
    dice = dice_field(
        "Pips rolled in this throw (the dice in the cup). Missing only with stop=true: then "
        "the player's open turn ends with their last throw.",
        [1, 4, 6],
        minimum=1,
        maximum=3,
    )
    aside = dice_field(
        "Pips of this throw set aside afterwards (herauslegen); the player throws again.",
        [1],
        minimum=0,
        maximum=3,
    )
    sixes = opt(
        Int,
        "Sixes turned (umdrehen) after this throw; the player must throw again.",
        0,
        validate=validate.Range(0, 2),
    )
    blind = opt(Bool, "This first throw is blind: the turn ends with it.", False)
    stop = opt(
        Bool,
        "The player stops after this throw (or, without dice, after their last one). A "
        "turn also ends at turn.limit, with a blind throw, or when another player's throw "
        "or turn arrives; stop is required when turn.must_stop is true and always allowed "
        "while turn.open.can_stop is (turn-closing rules: the games tag).",
        False,
    )

    @validates_schema
    def _stop_or_dice(self, data: dict[str, Any], **kwargs: object) -> None:
        if "dice" not in data:
            if not data.get("stop"):
                raise ValidationError("Würfel fehlen (nur mit stop=true ohne Würfel).", "dice")
            if data.keys() - {"player", "stop"}:
                raise ValidationError("Ohne Würfel ist nur „stop“ erlaubt.", "dice")
        if data.get("stop") and (data.get("aside") or data.get("sixes")):
            raise ValidationError("Wer aufhört, legt nichts heraus und dreht nichts um.", "stop")


class PenaltyRequestSchema(Schema):
    player = player_field("Who broke a rule.", "Bert", required=True)
    deckel = opt(
        Int,
        "Strafdeckel (penalty Deckel); missing means the house rules' amount.",
        1,
        validate=within(limits.PENALTY),
    )
    reason = req(
        fields.String,
        "Why, in the players' words.",
        "zu frühes Aufdecken",
        validate=validate.Length(min=1, max=MAX_REASON),
    )


class UndoRequestSchema(Schema):
    by = opt(
        fields.String,
        "Who undid the entry (kept in the audit record).",
        "Dieter",
        validate=validate.Length(min=1, max=80),
    )
    reason = opt(
        fields.String,
        "Why (kept in the audit record).",
        "vertippt",
        validate=validate.Length(min=1, max=200),
    )


class GameListQuerySchema(Schema):
    year = TextNumber(
        limits.YEAR,
        metadata=doc("Only games played in this calendar year (at the table).", 2026),
    )
    status = opt(
        fields.String,
        "Only running or only finished games.",
        "finished",
        validate=validate.OneOf(("running", "finished")),
    )
    player_id = TextNumber(limits.ID, metadata=doc("Only games this player (id) took part in.", 1))
    page = TextNumber(limits.PAGE, load_default=1, metadata=doc("Page, from 1.", 1))
    page_size = TextNumber(
        limits.PAGE_SIZE,
        load_default=20,
        metadata=doc("Games per page (at most 100).", 20),
    )


#: events in one imported game log (the engine's limit); the longest of thousands of simulated
#: games has about 220
MAX_IMPORT_EVENTS = MAX_EVENTS


class GameLogSchema(Schema):
    """A game log (schemas/GAMELOG.md v1): how games are imported and exported."""

    played_at = IsoDateTime(
        metadata=doc(
            "When the game started, ISO 8601 with offset.",
            "2026-11-27T20:15:00+01:00",
            format="date-time",
        )
    )
    rules = opt(
        fields.Raw,
        "House rules {preset, overrides} (validated by the rules engine).",
        {"preset": "standard", "overrides": {}},
    )
    players = fields.List(
        fields.String(validate=PLAYER_NAME, metadata=doc("Name.", "Anna")),
        required=True,
        validate=[validate.Length(min=MIN_PLAYERS, max=MAX_PLAYERS), different],
        metadata=doc(
            f"Seat order, clockwise ({MIN_PLAYERS} to {MAX_PLAYERS} players). Names not yet "
            "among the Stammtisch's players are added; they must be in Unicode NFC.",
            ["Anna", "Bert"],
            uniqueItems=True,
        ),
    )
    starter = req(fields.String, "Opens the first round.", "Anna", validate=PLAYER_NAME)
    events = fields.List(
        fields.Dict(keys=fields.String(), metadata=doc("One event.", {"player": "Anna"})),
        load_default=list,
        validate=validate.Length(max=MAX_IMPORT_EVENTS),
        metadata=doc(
            "Turn summaries, turns in detail and penalties in the order they happened.",
            [
                {"player": "Anna", "dice": [1, 1, 4], "throws": 3, "hand": False},
                {"player": "Bert", "dice": [6, 3, 2], "throws": 3, "hand": False},
            ],
        ),
    )
