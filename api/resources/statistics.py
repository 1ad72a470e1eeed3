"""Statistics of a Stammtisch as JSON, read from the statistics read model
(:mod:`dashboard.readmodel`: computed by DuckDB, stored in the row store, kept up by the
refresher). A request never computes: every answer carries ``Statistics-Stale`` (``true``
while a game finished since the last refresh is not counted yet, or the Stammtisch was never
computed: then its statistics are empty), and the refresher catches up within seconds.

Per calendar year (``?year=2024``) or all time (no year); only finished games count. A private
Stammtisch's statistics need its token, like its games.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

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

from ..http.auth import OPTIONAL_BEARER, read_access
from ..http.blueprint import Blueprint
from ..http.context import services

F = TypeVar("F", bound=Callable[..., Any])

blp = Blueprint(
    "statistics",
    __name__,
    url_prefix="/api/v1/stammtische/<slug>/statistics",
    description=(
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


def _doc(func: F) -> F:
    """The responses every statistics view shares (after the success response)."""
    func = blp.alt_response(404, response="NOT_FOUND")(func)
    func = blp.alt_response(401, response="UNAUTHORIZED")(func)
    func = blp.alt_response(403, response="FORBIDDEN")(func)
    return blp.doc(security=OPTIONAL_BEARER)(func)


@blp.route("")
class AllStatistics(MethodView):
    @read_access
    @blp.arguments(StatisticsQuerySchema, location="query")
    @blp.response(200, StatisticsSchema, headers=_STALE_DOC)
    @_doc
    @blp.doc(operationId="getStatistics")
    def get(self, query: dict[str, Any], slug: str) -> kinds.Period:
        """Every statistic of one period (what a dashboard page shows)"""
        return _period(query)


@blp.route("/years")
class Years(MethodView):
    @read_access
    @blp.response(200, YearSchema(many=True), headers=_STALE_DOC)
    @_doc
    @blp.doc(operationId="listStatisticsYears")
    def get(self, slug: str) -> list[kinds.Row]:
        """Years with finished games, newest first"""
        return _stats().years(g.stammtisch.id)


@blp.route("/verlierer")
class Verlierer(MethodView):
    @read_access
    @blp.arguments(StatisticsQuerySchema, location="query")
    @blp.response(200, VerliererSchema, headers=_STALE_DOC)
    @_doc
    @blp.doc(operationId="getVerliererDesJahres")
    def get(self, query: dict[str, Any], slug: str) -> kinds.Verlierer:
        """Verlierer des Jahres: the ranking by games lost, and the safest player

        Ties: higher share of games lost, then more halves lost. The safest player has the
        lowest share lost among those with at least a quarter of the period's games."""
        return _period(query)["verlierer"]


@blp.route("/players")
class Players(MethodView):
    @read_access
    @blp.arguments(StatisticsQuerySchema, location="query")
    @blp.response(200, PlayerStatsSchema(many=True), headers=_STALE_DOC)
    @_doc
    @blp.doc(operationId="listPlayerStatistics")
    def get(self, query: dict[str, Any], slug: str) -> list[kinds.Row]:
        """Per player: games, halves, Finals, Blattschuss, Deckel, Schock aus, streak, attendance"""
        return _period(query)["players"]


@blp.route("/categories")
class Categories(MethodView):
    @read_access
    @blp.arguments(StatisticsQuerySchema, location="query")
    @blp.response(200, CategoriesSchema, headers=_STALE_DOC)
    @_doc
    @blp.doc(operationId="getDiceCategories")
    def get(self, query: dict[str, Any], slug: str) -> kinds.Categories:
        """Dice luck: fair single throws against the exact one-throw probabilities

        Counted are single throws from the hand that were blind or forced by a throw limit of
        one; a throw the player could repeat is biased towards good results."""
        return _period(query)["categories"]


@blp.route("/head-to-head")
class HeadToHead(MethodView):
    @read_access
    @blp.arguments(StatisticsQuerySchema, location="query")
    @blp.response(200, HeadToHeadSchema(many=True), headers=_STALE_DOC)
    @_doc
    @blp.doc(operationId="listFinaleHeadToHead")
    def get(self, query: dict[str, Any], slug: str) -> list[kinds.Row]:
        """Finale results for every pair of players that met in a Finale"""
        return _period(query)["head_to_head"]


@blp.route("/records")
class Records(MethodView):
    @read_access
    @blp.arguments(StatisticsQuerySchema, location="query")
    @blp.response(200, RecordsSchema, headers=_STALE_DOC)
    @_doc
    @blp.doc(operationId="getRecords")
    def get(self, query: dict[str, Any], slug: str) -> kinds.Records:
        """Records: longest games, most Schock aus in a game, most Deckel in a half"""
        return _period(query)["records"]


@blp.route("/trend")
class Trend(MethodView):
    @read_access
    @blp.arguments(StatisticsQuerySchema, location="query")
    @blp.response(200, TrendSchema(many=True), headers=_STALE_DOC)
    @_doc
    @blp.doc(operationId="listGamesLostPerMonth")
    def get(self, query: dict[str, Any], slug: str) -> list[kinds.Row]:
        """Games lost per month and player"""
        return _period(query)["trend"]


@blp.route("/attendance")
class Attendance(MethodView):
    @read_access
    @blp.arguments(StatisticsQuerySchema, location="query")
    @blp.response(200, AttendanceSchema(many=True), headers=_STALE_DOC)
    @_doc
    @blp.doc(operationId="listAttendance")
    def get(self, query: dict[str, Any], slug: str) -> list[kinds.Row]:
        """Games per player and calendar year"""
        return _period(query)["attendance"]
