"""Players of a Stammtisch: add, list, rename, retire (their history stays)."""

from __future__ import annotations

from flask.views import MethodView

from schemas import PlayerCreateSchema, PlayerSchema, PlayerUpdateSchema

from ._common import BEARER, OPTIONAL_BEARER, Blueprint, bearer_token, services

blp = Blueprint(
    "players",
    __name__,
    url_prefix="/api/v1/stammtische/<slug>/players",
    description="Players of a Stammtisch.",
)


@blp.route("")
class Players(MethodView):
    @blp.response(200, PlayerSchema(many=True))
    @blp.alt_response(404, response="NOT_FOUND")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, slug):
        """List players (retired ones included)"""
        svc = services()
        return svc.players(svc.readable(slug, bearer_token()))

    @blp.arguments(PlayerCreateSchema)
    @blp.response(201, PlayerSchema)
    @blp.alt_response(404, response="NOT_FOUND")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.alt_response(409, response="CONFLICT")
    @blp.doc(security=BEARER)
    def post(self, data, slug):
        """Add a player"""
        svc = services()
        return svc.add_player(svc.writable(slug, bearer_token()), data["name"])


@blp.route("/<int:player_id>")
class PlayerItem(MethodView):
    @blp.response(200, PlayerSchema)
    @blp.alt_response(404, response="NOT_FOUND")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.doc(security=OPTIONAL_BEARER)
    def get(self, slug, player_id):
        """Read a player"""
        svc = services()
        return svc.player(svc.readable(slug, bearer_token()), player_id)

    @blp.arguments(PlayerUpdateSchema)
    @blp.response(200, PlayerSchema)
    @blp.alt_response(404, response="NOT_FOUND")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.alt_response(409, response="CONFLICT")
    @blp.doc(security=BEARER)
    def patch(self, data, slug, player_id):
        """Rename, retire or bring back a player"""
        svc = services()
        return svc.update_player(svc.writable(slug, bearer_token()), player_id, data)
