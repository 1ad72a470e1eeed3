"""Players of a Stammtisch: add, list, rename, retire (their history stays)."""

from __future__ import annotations

from typing import Any

from flask import g
from flask.views import MethodView

from schemas import PlayerCreateSchema, PlayerSchema, PlayerUpdateSchema

from ..http.context import services
from ..storage import Player
from .access import STAMMTISCH, blueprint, reads, writes

blp = blueprint(__name__, f"{STAMMTISCH}/players", "Players of a Stammtisch.")


@blp.route("")
class Players(MethodView):
    @reads(blp, "listPlayers")
    @blp.response(200, PlayerSchema(many=True))
    def get(self, slug: str) -> list[Player]:
        """List players (retired ones included)"""
        return services().players(g.stammtisch)

    @writes(blp, "addPlayer", 409)
    @blp.arguments(PlayerCreateSchema)
    @blp.response(201, PlayerSchema)
    def post(self, data: dict[str, Any], slug: str) -> Player:
        """Add a player"""
        return services().add_player(g.stammtisch, data["name"])


@blp.route("/<id:player_id>")
class PlayerItem(MethodView):
    @reads(blp, "getPlayer")
    @blp.response(200, PlayerSchema)
    def get(self, slug: str, player_id: int) -> Player:
        """Read a player"""
        return services().player(g.stammtisch, player_id)

    @writes(blp, "updatePlayer", 409)
    @blp.arguments(PlayerUpdateSchema)
    @blp.response(200, PlayerSchema)
    def patch(self, data: dict[str, Any], slug: str, player_id: int) -> Player:
        """Rename, retire or bring back a player"""
        return services().update_player(g.stammtisch, player_id, data)
