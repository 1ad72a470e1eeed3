"""Statistics of a Stammtisch (responses only; the query takes an optional year).

Only finished games count. A period is one calendar year at the table or, without ``year``,
all time. The same numbers feed the static dashboard (``schocken dashboard build``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from marshmallow import Schema, fields

from api.rules import Half, limits

from .common import TextNumber, doc, either, list_of, opt, req

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
    year = req(Int, "Calendar year at the table.", 2024)
    games = req(Int, "Finished games in that year.", 52)


class OverviewSchema(Schema):
    year = opt(Int, "The year asked for; null means all time.", 2024, allow_none=True)
    games = req(Int, "Finished games in the period.", 52)
    rounds = req(Int, "Rounds played in them (repeated ones too).", 1180)
    turns = req(Int, "Turns (Würfe) recorded in them.", 4185)
    blattschuss = req(Int, "Games ended by a Blattschuss (one player lost both halves).", 8)
    finals = req(Int, "Games decided in a Finale (the two half losers).", 44)
    players = req(Int, "Players who sat at a finished game.", 9)
    first_game = _date("Start of the first finished game")
    last_game = _date("Start of the last finished game")


class RankingRowSchema(Schema):
    rank = req(
        Int,
        "Place in the Verlierer des Jahres ranking: more games lost first; ties go to the "
        "higher share lost, then more halves lost; equal on all three share a place.",
        1,
    )
    player_id = req(Int, "The player's id.", 3)
    name = req(Str, "The player's current name.", "Clara")
    games_played = req(Int, "Finished games the player sat at.", 47)
    games_lost = req(Int, "Games the player lost (and paid for).", 12)
    share_lost = req(Float, "games_lost / games_played.", 0.2553)
    halves_lost = req(Int, "Halves (Hälfte 1 and 2) lost; the Finale not counted.", 20)
    safe_rank = opt(
        Int,
        "Place among the safest players (lowest share lost, then more games, then fewer "
        "halves lost); null when the player has fewer than min_games games.",
        9,
        allow_none=True,
    )


class VerliererSchema(Schema):
    ranking = list_of(RankingRowSchema, "Every player of the period, Verlierer des Jahres first.")
    verlierer = list_of(
        RankingRowSchema,
        "The Verlierer des Jahres: rank 1 with at least one game lost (several when tied on "
        "every criterion; empty without games).",
    )
    safest = list_of(RankingRowSchema, "The safest player(s): safe_rank 1.")
    min_games = req(
        Int,
        "Games needed to count as safest: a quarter of the period's games, rounded up, at least 1.",
        13,
    )


class PlayerStatsSchema(Schema):
    rank = req(Int, "Place in the Verlierer des Jahres ranking (see /verlierer).", 8)
    safe_rank = opt(
        Int, "Place among the safest players; null with too few games.", 1, allow_none=True
    )
    player_id = req(Int, "The player's id.", 1)
    name = req(Str, "The player's current name.", "Anna")
    games_played = req(Int, "Finished games the player sat at.", 52)
    games_lost = req(Int, "Games lost.", 2)
    share_lost = req(Float, "games_lost / games_played.", 0.0385)
    halves_lost = req(Int, "Halves (Hälfte 1 and 2) lost.", 6)
    finals_played = req(Int, "Finals played (as a half loser).", 6)
    finals_lost = req(Int, "Finals lost.", 2)
    blattschuss = req(Int, "Games lost by Blattschuss (both halves lost).", 0)
    deckel = req(Int, "Deckel received in total (rounds and penalties).", 341)
    deckel_per_game = req(Float, "deckel / games_played.", 6.56)
    schock_aus = req(Int, "Schock aus (1-1-1) thrown.", 9)
    turns = req(Int, "Turns taken.", 536)
    longest_without_loss = req(
        Int, "Longest run of consecutive games the player sat at without losing one.", 23
    )
    attendance = req(Float, "Share of the period's finished games the player sat at.", 1.0)
    first_game = _date("The player's first finished game in the period")
    last_game = _date("The player's last finished game in the period")


_CATEGORY_DOC = "schock_aus, schock (Schock 6 to 2), general, strasse (Straße) or zahl"


class CategoryCountsSchema(Schema):
    schock_aus = req(Float, "Schock aus (1-1-1).", 1)
    schock = req(Float, "Schock 6 to 2 (1-1-x).", 42)
    general = req(Float, "General (three of a kind, not 1-1-1).", 17)
    strasse = req(Float, "Straße (three in a row).", 74)
    zahl = req(Float, "Zahl (everything else).", 525)


class CategoryThrowsSchema(Schema):
    player_id = opt(Int, "The player's id; null for the total.", 1, allow_none=True)
    name = req(Str, "The player's name, or Alle for the total.", "Anna")
    throws = req(Int, "Fair single throws counted.", 659)
    counts = fields.Nested(
        CategoryCountsSchema, required=True, metadata=doc("Observed throws per category.", {})
    )
    expected = fields.Nested(
        CategoryCountsSchema,
        required=True,
        metadata=doc("Expected throws per category: throws × exact probability.", {}),
    )


class CategorySchema(Schema):
    category = req(Str, f"The category: {_CATEGORY_DOC}.", "schock")
    name = req(Str, "German name.", "Schock (6 bis 2)")
    probability = req(Float, "Exact probability of one throw of three dice.", 0.0694)
    outcomes = req(Int, "Outcomes of the 216 equally likely ones.", 15)


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
    player_a_id = req(Int, "Id of the first player (the smaller id).", 4)
    player_a = req(Str, "Name of the first player.", "Dieter")
    player_b_id = req(Int, "Id of the second player.", 7)
    player_b = req(Str, "Name of the second player.", "Gabi")
    finals = req(Int, "Finals the two played against each other.", 5)
    wins_a = req(Int, "Finals the first player won.", 3)
    wins_b = req(Int, "Finals the second player won.", 2)


class LongestGameSchema(Schema):
    game_id = req(Int, "The game's id.", 219)
    played_local = _date("Start of the game")
    rounds = req(Int, "Rounds played (repeated ones too).", 52)
    turns = req(Int, "Turns recorded.", 132)
    loser = req(Str, "Who lost the game.", "Anna")


class SchockAusRecordSchema(Schema):
    game_id = req(Int, "The game's id.", 225)
    played_local = _date("Start of the game")
    player_id = req(Int, "The player's id.", 7)
    name = req(Str, "The player's name.", "Gabi")
    schock_aus = req(Int, "Schock aus the player threw in that game.", 2)


class DeckelRecordSchema(Schema):
    game_id = req(Int, "The game's id.", 219)
    played_local = _date("Start of the game")
    half = req(Str, f"{either(Half)} (the decider between the half losers).", Half.HALF1.value)
    player_id = req(Int, "The player's id.", 1)
    name = req(Str, "The player's name.", "Anna")
    deckel = req(Int, "Deckel the player received in that half.", 44)


class RecordsSchema(Schema):
    longest_games = list_of(LongestGameSchema, "The five longest games by rounds.")
    most_schock_aus = list_of(
        SchockAusRecordSchema, "The five highest counts of Schock aus by one player in one game."
    )
    most_deckel_in_half = list_of(
        DeckelRecordSchema, "The five highest counts of Deckel received by one player in one half."
    )


class TrendSchema(Schema):
    month = req(Str, "Month at the table, YYYY-MM.", "2024-03")
    player_id = req(Int, "The loser's id.", 3)
    name = req(Str, "The loser's name.", "Clara")
    games_lost = req(Int, "Games the player lost that month (never 0: absent).", 2)


class AttendanceSchema(Schema):
    year = req(Int, "Calendar year at the table.", 2024)
    player_id = req(Int, "The player's id.", 7)
    name = req(Str, "The player's name.", "Gabi")
    games_played = req(Int, "Finished games the player sat at.", 24)
    games = req(Int, "Finished games of the Stammtisch that year.", 52)


class LuckSchema(Schema):
    """A player's luck and decisions in the period (api/rules/RULES.md §13)."""

    player_id = req(Int, "The player's id.", 4)
    name = req(Str, "The player's name.", "Dieter")
    turns = req(Int, "Rated turns: every turn after the first of its round.", 212)
    expected = req(
        Float,
        "Sum of their chances, at the start of each, of beating the round's worst result "
        "so far (playing on optimally).",
        121.3125,
    )
    survived = req(Int, "Of them, the turns that beat it.", 118)
    split = req(
        Int,
        "Of them, the turns whose every throw is known (recorded throw by throw, or in a "
        "round of one throw): only these are split into luck and decisions.",
        96,
    )
    luck = req(
        Float,
        "Sum over the split turns of the dice's share of (outcome − chance at the start): "
        "positive is more luck than average (0 on average whatever one's play). The list is "
        "ordered by it, luckiest first.",
        3.1416,
    )
    given_away = req(
        Float,
        "Sum over the split turns of the chances the decisions gave away (the best "
        "decision's chance minus the chosen one's).",
        0.4375,
    )


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
    luck = list_of(
        LuckSchema,
        "Luck and decisions per player, luckiest first (first: the Glückspilz, last: the "
        "Pechvogel of the period).",
    )
