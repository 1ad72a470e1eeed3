"""Stammtische: a group of regulars with its house rules and a secret write token."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from flask import g
from flask.views import MethodView

from schemas import (
    StammtischCreatedSchema,
    StammtischCreateSchema,
    StammtischKeySchema,
    StammtischSchema,
    StammtischUpdateSchema,
)

from ..http.context import services
from ..storage import Stammtisch
from .access import blueprint, reads, writes

blp = blueprint(
    __name__,
    "/stammtische",
    "A Stammtisch (group of regulars) with its house rules; owns players and games.",
)


@blp.route("")
class Stammtische(MethodView):
    @blp.arguments(StammtischCreateSchema)
    @blp.response(201, StammtischCreatedSchema)
    @blp.alt_response(409, response="CONFLICT")
    @blp.doc(operationId="createStammtisch")
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Create a Stammtisch

        The response carries the write token once; only its hash is stored."""
        st, token = services().create_stammtisch(data)
        return {**asdict(st), "token": token}


@blp.route("/<slug>")
class StammtischItem(MethodView):
    @reads(blp, "getStammtisch")
    @blp.response(200, StammtischSchema)
    def get(self, slug: str) -> Stammtisch:
        """Read a Stammtisch (a private one needs its token; without it: 404)"""
        st: Stammtisch = g.stammtisch
        return st

    @writes(blp, "updateStammtisch")
    @blp.arguments(StammtischUpdateSchema)
    @blp.response(200, StammtischSchema)
    def patch(self, data: dict[str, Any], slug: str) -> Stammtisch:
        """Update name, house rules or privacy

        New house rules apply only to games started afterwards."""
        return services().update_stammtisch(g.stammtisch, data)


@blp.route("/<slug>/key")
class StammtischKey(MethodView):
    @writes(blp, "rotateStammtischKey")
    @blp.response(201, StammtischKeySchema)
    def post(self, slug: str) -> dict[str, Any]:
        """Replace the write token

        Needs the current token. The response carries the new token once (only its hash is
        stored); the old token stops working at once, and every login of the pub form made
        with it ends. Every webhook of the Stammtisch is paused and listed in the response:
        resume those you know with the new token (`active: true`), delete the others. The
        same as `schocken key rotate <slug>` and the form's "Schlüssel erneuern"."""
        svc = services()
        st, token = svc.rotate_key(g.stammtisch)
        return {**asdict(st), "token": token, "webhooks": svc.webhooks(st)}
