"""Import a whole game log (paper tally sheets, other programs' histories)."""

from __future__ import annotations

from typing import Any

from flask import g
from flask.views import MethodView

from schemas import GameLogSchema, GameSchema

from ..http.auth import BEARER, write_access
from ..http.blueprint import Blueprint
from ..http.context import services

blp = Blueprint(
    "imports",
    __name__,
    url_prefix="/api/v1/stammtische/<slug>/imports",
    description="Import game logs (schemas/GAMELOG.md v1).",
)


@blp.route("")
class Imports(MethodView):
    @write_access
    @blp.arguments(GameLogSchema)
    @blp.response(201, GameSchema)
    @blp.alt_response(404, response="NOT_FOUND")
    @blp.alt_response(401, response="UNAUTHORIZED")
    @blp.alt_response(403, response="FORBIDDEN")
    @blp.alt_response(409, response="CONFLICT")
    @blp.doc(security=BEARER)
    @blp.doc(operationId="importGameLog")
    def post(self, doc: dict[str, Any], slug: str) -> dict[str, Any]:
        """Import a game log

        Validated completely before anything is stored; errors name the event
        ("event 7: …"). Players the Stammtisch does not know yet are added."""
        g.game_seq = (body := services().import_game(g.stammtisch, doc).to_dict())["seq"]
        return body  # its version noted: the answer carries the new game's ETag
