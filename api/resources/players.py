"""Players of a Stammtisch: add, list, rename, retire (their history stays)."""

from __future__ import annotations

from typing import Any

from flask import g
from flask.views import MethodView

from schemas import PlayerCreateSchema, PlayerSchema, PlayerUpdateSchema

from ..http.auth import BEARER, OPTIONAL_BEARER, read_access, write_access
from ..http.blueprint import Blueprint
from ..http.context import services
from ..storage import Player

blp = Blueprint(
    "players",
    __name__,
    url_prefix="/api/v1/stammtische/<slug>/players",
    description="Players of a Stammtisch.",
)


@blp.route("")
class Players(MethodView):
    @read_access
    @blp.response(200, PlayerSchema(many=True))
    @blp.alt_response(404, response="NOT_FOUND")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.doc(security=OPTIONAL_BEARER)
    @blp.doc(operationId="listPlayers")
    def get(self, slug: str) -> list[Player]:
        """List players (retired ones included)"""
        svc = services()
        return svc.players(g.stammtisch)

    @write_access
    @blp.arguments(PlayerCreateSchema)
    @blp.response(201, PlayerSchema)
    @blp.alt_response(404, response="NOT_FOUND")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.alt_response(409, response="CONFLICT")
    @blp.doc(security=BEARER)
    @blp.doc(operationId="addPlayer")
    def post(self, data: dict[str, Any], slug: str) -> Player:
        """Add a player"""
        svc = services()
        return svc.add_player(g.stammtisch, data["name"])


@blp.route("/<id:player_id>")
class PlayerItem(MethodView):
    @read_access
    @blp.response(200, PlayerSchema)
    @blp.alt_response(404, response="NOT_FOUND")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.doc(security=OPTIONAL_BEARER)
    @blp.doc(operationId="getPlayer")
    def get(self, slug: str, player_id: int) -> Player:
        """Read a player"""
        svc = services()
        return svc.player(g.stammtisch, player_id)

    @write_access
    @blp.arguments(PlayerUpdateSchema)
    @blp.response(200, PlayerSchema)
    @blp.alt_response(404, response="NOT_FOUND")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.alt_response(409, response="CONFLICT")
    @blp.doc(security=BEARER)
    @blp.doc(operationId="updatePlayer")
    def patch(self, data: dict[str, Any], slug: str, player_id: int) -> Player:
        """Rename, retire or bring back a player"""
        svc = services()
        return svc.update_player(g.stammtisch, player_id, data)
