"""Import a whole game log (paper tally sheets, other programs' histories)."""

from __future__ import annotations

from typing import Any

from flask import g
from flask.views import MethodView

from schemas import GameLogSchema, GameSchema

from ..http.context import services
from .access import STAMMTISCH, blueprint, writes

blp = blueprint(__name__, f"{STAMMTISCH}/imports", "Import game logs (schemas/GAMELOG.md v1).")


@blp.route("")
class Imports(MethodView):
    @writes(blp, "importGameLog", 409)
    @blp.arguments(GameLogSchema)
    @blp.response(201, GameSchema)
    def post(self, doc: dict[str, Any], slug: str) -> dict[str, Any]:
        """Import a game log

        Validated completely before anything is stored; errors name the event
        ("event 7: …"). Players the Stammtisch does not know yet are added."""
        g.game_seq = (body := services().import_game(g.stammtisch, doc).to_dict())["seq"]
        return body  # its version noted: the answer carries the new game's ETag
