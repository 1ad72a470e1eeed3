"""Statistics of a Stammtisch as JSON, read from the statistics read model
(:mod:`dashboard.readmodel`: computed by DuckDB, stored in the row store, kept up by the
refresher). A request never computes: every answer carries ``Statistics-Stale`` (``true``
while a game finished since the last refresh is not counted yet, or the Stammtisch was never
computed: then its statistics are empty), and the refresher catches up within seconds.

Per calendar year (``?year=2024``) or all time (no year); only finished games count. A private
Stammtisch's statistics need its token, like its games.
"""

from __future__ import annotations

from typing import Any, cast

from flask import Response, after_this_request, g
from flask.views import MethodView

from dashboard import stats as kinds
from dashboard.readmodel import ReadModel
from schemas.statistics import (
    AttendanceSchema,
    CategoriesSchema,
    HeadToHeadSchema,
    PlayerStatsSchema,
    RecordsSchema,
    StatisticsQuerySchema,
    StatisticsSchema,
    TrendSchema,
    VerliererSchema,
    YearSchema,
)

from ..http.context import services
from .access import STAMMTISCH, blueprint, reads

blp = blueprint(
    __name__,
    f"{STAMMTISCH}/statistics",
    (
        "Statistics of a Stammtisch per calendar year or all time: Verlierer des Jahres, "
        "per player numbers, Finale head-to-head, records, trend, attendance, dice luck."
    ),
)


#: the header of every statistics answer (documented in openapi.yaml)
STALE_HEADER = "Statistics-Stale"
_STALE_DOC = {
    STALE_HEADER: {
        "description": (
            "`true` while the stored statistics lag behind the games (a game finished, "
            "undone or imported since the last refresh, or the Stammtisch never computed: "
            "then empty); the server's refresher catches up within seconds, so ask again. "
            "`false`: up to date."
        ),
        "schema": {"type": "string", "enum": ["true", "false"]},
    }
}


def _stats() -> ReadModel:
    """The read model of the request's Stammtisch; whether it is stale goes into the
    answer's ``Statistics-Stale`` header."""
    model = ReadModel(services().repo)
    stale = model.stale(g.stammtisch.id)

    @after_this_request
    def _mark(response: Response) -> Response:
        response.headers[STALE_HEADER] = "true" if stale else "false"
        return response

    return model


def _period(query: dict[str, Any]) -> kinds.Period:
    """The requested period of the request's Stammtisch."""
    return _stats().collect(g.stammtisch.id, query.get("year"))


@blp.route("")
class AllStatistics(MethodView):
    @reads(blp, "getStatistics")
    @blp.arguments(StatisticsQuerySchema, location="query")
    @blp.response(200, StatisticsSchema, headers=_STALE_DOC)
    def get(self, query: dict[str, Any], slug: str) -> kinds.Period:
        """Every statistic of one period (what a dashboard page shows)"""
        return _period(query)


@blp.route("/years")
class Years(MethodView):
    @reads(blp, "listStatisticsYears")
    @blp.response(200, YearSchema(many=True), headers=_STALE_DOC)
    def get(self, slug: str) -> list[kinds.Row]:
        """Years with finished games, newest first"""
        return _stats().years(g.stammtisch.id)


def _part(key: str, schema: Any, operation_id: str, doc: str) -> None:
    """``/<key>`` (hyphens for underscores): one part of the period."""

    def get(self: MethodView, query: dict[str, Any], slug: str) -> Any:
        return cast(dict[str, Any], _period(query))[key]

    get.__doc__ = doc
    get = blp.response(200, schema, headers=_STALE_DOC)(get)
    get = blp.arguments(StatisticsQuerySchema, location="query")(get)
    view = type(key.title().replace("_", ""), (MethodView,), {"get": reads(blp, operation_id)(get)})
    blp.route("/" + key.replace("_", "-"))(view)


_part(
    "verlierer",
    VerliererSchema,
    "getVerliererDesJahres",
    """Verlierer des Jahres: the ranking by games lost, and the safest player

        Ties: higher share of games lost, then more halves lost. The safest player has the
        lowest share lost among those with at least a quarter of the period's games.""",
)
_part(
    "players",
    PlayerStatsSchema(many=True),
    "listPlayerStatistics",
    "Per player: games, halves, Finals, Blattschuss, Deckel, Schock aus, streak, attendance",
)
_part(
    "categories",
    CategoriesSchema,
    "getDiceCategories",
    """Dice luck: fair single throws against the exact one-throw probabilities

        Counted are single throws from the hand that were blind or forced by a throw limit of
        one; a throw the player could repeat is biased towards good results.""",
)
_part(
    "head_to_head",
    HeadToHeadSchema(many=True),
    "listFinaleHeadToHead",
    "Finale results for every pair of players that met in a Finale",
)
_part(
    "records",
    RecordsSchema,
    "getRecords",
    "Records: longest games, most Schock aus in a game, most Deckel in a half",
)
_part(
    "trend",
    TrendSchema(many=True),
    "listGamesLostPerMonth",
    "Games lost per month and player",
)
_part(
    "attendance",
    AttendanceSchema(many=True),
    "listAttendance",
    "Games per player and calendar year",
)
