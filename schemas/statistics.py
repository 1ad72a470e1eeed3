"""Statistics of a Stammtisch (responses only; the query takes an optional year).

Only finished games count. A period is one calendar year at the table or, without ``year``,
all time. The same numbers feed the static dashboard (``schocken dashboard build``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from marshmallow import Schema, fields

from api.rules import Half, limits

from .common import TextNumber, doc, either, list_of

Int = fields.Integer
Float = fields.Float
Str = fields.String


#: a wall-clock time at the table: ISO 8601 date and time, seconds, no offset
LOCAL_DATE_TIME = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$"


class LocalDateTime(fields.String):
    """A wall-clock time at the table, as the game was played there: no offset (games of
    one Stammtisch-year may come from several offsets, summer and winter time). A string
    with a pattern in the contract, since RFC 3339's ``date-time`` requires an offset."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):  # as the read model keeps it
            value = datetime.fromisoformat(value)
        return value.isoformat(timespec="seconds")


def _date(description: str) -> fields.String:
    return LocalDateTime(
        allow_none=True,
        metadata=doc(
            description + " (wall-clock time at the table, without offset).",
            "2024-03-01T20:00:00",
            pattern=LOCAL_DATE_TIME,
        ),
    )


class StatisticsQuerySchema(Schema):
    year = TextNumber(
        limits.YEAR, metadata=doc("Calendar year at the table; omit it for all time.", 2024)
    )


class YearSchema(Schema):
    year = Int(required=True, metadata=doc("Calendar year at the table.", 2024))
    games = Int(required=True, metadata=doc("Finished games in that year.", 52))


class OverviewSchema(Schema):
    year = Int(allow_none=True, metadata=doc("The year asked for; null means all time.", 2024))
    games = Int(required=True, metadata=doc("Finished games in the period.", 52))
    rounds = Int(required=True, metadata=doc("Rounds played in them (repeated ones too).", 1180))
    turns = Int(required=True, metadata=doc("Turns (Würfe) recorded in them.", 4185))
    blattschuss = Int(
        required=True,
        metadata=doc("Games ended by a Blattschuss (one player lost both halves).", 8),
    )
    finals = Int(
        required=True, metadata=doc("Games decided in a Finale (the two half losers).", 44)
    )
    players = Int(required=True, metadata=doc("Players who sat at a finished game.", 9))
    first_game = _date("Start of the first finished game")
    last_game = _date("Start of the last finished game")


class RankingRowSchema(Schema):
    rank = Int(
        required=True,
        metadata=doc(
            "Place in the Verlierer des Jahres ranking: more games lost first; ties go to the "
            "higher share lost, then more halves lost; equal on all three share a place.",
            1,
        ),
    )
    player_id = Int(required=True, metadata=doc("The player's id.", 3))
    name = Str(required=True, metadata=doc("The player's current name.", "Clara"))
    games_played = Int(required=True, metadata=doc("Finished games the player sat at.", 47))
    games_lost = Int(required=True, metadata=doc("Games the player lost (and paid for).", 12))
    share_lost = Float(required=True, metadata=doc("games_lost / games_played.", 0.2553))
    halves_lost = Int(
        required=True, metadata=doc("Halves (Hälfte 1 and 2) lost; the Finale not counted.", 20)
    )
    safe_rank = Int(
        allow_none=True,
        metadata=doc(
            "Place among the safest players (lowest share lost, then more games, then fewer "
            "halves lost); null when the player has fewer than min_games games.",
            9,
        ),
    )


class VerliererSchema(Schema):
    ranking = list_of(RankingRowSchema, "Every player of the period, Verlierer des Jahres first.")
    verlierer = list_of(
        RankingRowSchema,
        "The Verlierer des Jahres: rank 1 with at least one game lost (several when tied on "
        "every criterion; empty without games).",
    )
    safest = list_of(RankingRowSchema, "The safest player(s): safe_rank 1.")
    min_games = Int(
        required=True,
        metadata=doc(
            "Games needed to count as safest: a quarter of the period's games, rounded up, "
            "at least 1.",
            13,
        ),
    )


class PlayerStatsSchema(Schema):
    rank = Int(
        required=True,
        metadata=doc("Place in the Verlierer des Jahres ranking (see /verlierer).", 8),
    )
    safe_rank = Int(
        allow_none=True,
        metadata=doc("Place among the safest players; null with too few games.", 1),
    )
    player_id = Int(required=True, metadata=doc("The player's id.", 1))
    name = Str(required=True, metadata=doc("The player's current name.", "Anna"))
    games_played = Int(required=True, metadata=doc("Finished games the player sat at.", 52))
    games_lost = Int(required=True, metadata=doc("Games lost.", 2))
    share_lost = Float(required=True, metadata=doc("games_lost / games_played.", 0.0385))
    halves_lost = Int(required=True, metadata=doc("Halves (Hälfte 1 and 2) lost.", 6))
    finals_played = Int(required=True, metadata=doc("Finals played (as a half loser).", 6))
    finals_lost = Int(required=True, metadata=doc("Finals lost.", 2))
    blattschuss = Int(
        required=True, metadata=doc("Games lost by Blattschuss (both halves lost).", 0)
    )
    deckel = Int(
        required=True, metadata=doc("Deckel received in total (rounds and penalties).", 341)
    )
    deckel_per_game = Float(required=True, metadata=doc("deckel / games_played.", 6.56))
    schock_aus = Int(required=True, metadata=doc("Schock aus (1-1-1) thrown.", 9))
    turns = Int(required=True, metadata=doc("Turns taken.", 536))
    longest_without_loss = Int(
        required=True,
        metadata=doc("Longest run of consecutive games the player sat at without losing one.", 23),
    )
    attendance = Float(
        required=True,
        metadata=doc("Share of the period's finished games the player sat at.", 1.0),
    )
    first_game = _date("The player's first finished game in the period")
    last_game = _date("The player's last finished game in the period")


_CATEGORY_DOC = "schock_aus, schock (Schock 6 to 2), general, strasse (Straße) or zahl"


class CategoryCountsSchema(Schema):
    schock_aus = Float(required=True, metadata=doc("Schock aus (1-1-1).", 1))
    schock = Float(required=True, metadata=doc("Schock 6 to 2 (1-1-x).", 42))
    general = Float(required=True, metadata=doc("General (three of a kind, not 1-1-1).", 17))
    strasse = Float(required=True, metadata=doc("Straße (three in a row).", 74))
    zahl = Float(required=True, metadata=doc("Zahl (everything else).", 525))


class CategoryThrowsSchema(Schema):
    player_id = Int(allow_none=True, metadata=doc("The player's id; null for the total.", 1))
    name = Str(required=True, metadata=doc("The player's name, or Alle for the total.", "Anna"))
    throws = Int(required=True, metadata=doc("Fair single throws counted.", 659))
    counts = fields.Nested(
        CategoryCountsSchema, required=True, metadata=doc("Observed throws per category.", {})
    )
    expected = fields.Nested(
        CategoryCountsSchema,
        required=True,
        metadata=doc("Expected throws per category: throws × exact probability.", {}),
    )


class CategorySchema(Schema):
    category = Str(required=True, metadata=doc(f"The category: {_CATEGORY_DOC}.", "schock"))
    name = Str(required=True, metadata=doc("German name.", "Schock (6 bis 2)"))
    probability = Float(
        required=True, metadata=doc("Exact probability of one throw of three dice.", 0.0694)
    )
    outcomes = Int(required=True, metadata=doc("Outcomes of the 216 equally likely ones.", 15))


class CategoriesSchema(Schema):
    categories = list_of(
        CategorySchema,
        "The five categories with their exact probabilities (1, 15, 5, 24, 171 of 216).",
    )
    players = list_of(
        CategoryThrowsSchema,
        "Per player: single throws from the hand that were blind or forced by a throw "
        "limit of one (not chosen: a throw one may repeat is biased towards good results), "
        "categorised by their dice.",
    )
    total = fields.Nested(
        CategoryThrowsSchema, required=True, metadata=doc("All players together.", {})
    )


class HeadToHeadSchema(Schema):
    player_a_id = Int(required=True, metadata=doc("Id of the first player (the smaller id).", 4))
    player_a = Str(required=True, metadata=doc("Name of the first player.", "Dieter"))
    player_b_id = Int(required=True, metadata=doc("Id of the second player.", 7))
    player_b = Str(required=True, metadata=doc("Name of the second player.", "Gabi"))
    finals = Int(required=True, metadata=doc("Finals the two played against each other.", 5))
    wins_a = Int(required=True, metadata=doc("Finals the first player won.", 3))
    wins_b = Int(required=True, metadata=doc("Finals the second player won.", 2))


class LongestGameSchema(Schema):
    game_id = Int(required=True, metadata=doc("The game's id.", 219))
    played_local = _date("Start of the game")
    rounds = Int(required=True, metadata=doc("Rounds played (repeated ones too).", 52))
    turns = Int(required=True, metadata=doc("Turns recorded.", 132))
    loser = Str(required=True, metadata=doc("Who lost the game.", "Anna"))


class SchockAusRecordSchema(Schema):
    game_id = Int(required=True, metadata=doc("The game's id.", 225))
    played_local = _date("Start of the game")
    player_id = Int(required=True, metadata=doc("The player's id.", 7))
    name = Str(required=True, metadata=doc("The player's name.", "Gabi"))
    schock_aus = Int(required=True, metadata=doc("Schock aus the player threw in that game.", 2))


class DeckelRecordSchema(Schema):
    game_id = Int(required=True, metadata=doc("The game's id.", 219))
    played_local = _date("Start of the game")
    half = Str(
        required=True,
        metadata=doc(
            f"{either(Half)} (the decider between the half losers).",
            Half.HALF1.value,
        ),
    )
    player_id = Int(required=True, metadata=doc("The player's id.", 1))
    name = Str(required=True, metadata=doc("The player's name.", "Anna"))
    deckel = Int(required=True, metadata=doc("Deckel the player received in that half.", 44))


class RecordsSchema(Schema):
    longest_games = list_of(LongestGameSchema, "The five longest games by rounds.")
    most_schock_aus = list_of(
        SchockAusRecordSchema, "The five highest counts of Schock aus by one player in one game."
    )
    most_deckel_in_half = list_of(
        DeckelRecordSchema, "The five highest counts of Deckel received by one player in one half."
    )


class TrendSchema(Schema):
    month = Str(required=True, metadata=doc("Month at the table, YYYY-MM.", "2024-03"))
    player_id = Int(required=True, metadata=doc("The loser's id.", 3))
    name = Str(required=True, metadata=doc("The loser's name.", "Clara"))
    games_lost = Int(
        required=True, metadata=doc("Games the player lost that month (never 0: absent).", 2)
    )


class AttendanceSchema(Schema):
    year = Int(required=True, metadata=doc("Calendar year at the table.", 2024))
    player_id = Int(required=True, metadata=doc("The player's id.", 7))
    name = Str(required=True, metadata=doc("The player's name.", "Gabi"))
    games_played = Int(required=True, metadata=doc("Finished games the player sat at.", 24))
    games = Int(required=True, metadata=doc("Finished games of the Stammtisch that year.", 52))


class StatisticsSchema(Schema):
    overview = fields.Nested(OverviewSchema, required=True, metadata=doc("Totals.", {}))
    verlierer = fields.Nested(
        VerliererSchema, required=True, metadata=doc("Verlierer des Jahres and the safest.", {})
    )
    players = list_of(PlayerStatsSchema, "Per player.")
    categories = fields.Nested(
        CategoriesSchema,
        required=True,
        metadata=doc("Fair single throws against the exact probabilities.", {}),
    )
    head_to_head = list_of(HeadToHeadSchema, "Finale results for every pair that met in a Finale.")
    records = fields.Nested(RecordsSchema, required=True, metadata=doc("Records.", {}))
    trend = list_of(TrendSchema, "Games lost per month.")
    attendance = list_of(AttendanceSchema, "Games per player and year.")
