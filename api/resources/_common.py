"""What every resource shares: the request's services, the bearer token, doc snippets."""

from __future__ import annotations

from typing import Any, NoReturn

import flask_smorest as smorest
from flask import current_app, g, request
from webargs.flaskparser import FlaskParser, abort

from ..services import Services, Unauthorized

BEARER = [{"bearerAuth": []}]
#: reads: public, but a private Stammtisch needs its token
OPTIONAL_BEARER = [{}, {"bearerAuth": []}]


def services() -> Services:
    state = current_app.extensions["schocken"]
    if "repo" not in g:
        g.repo = state.store.repository()
    return Services(g.repo, state.cache)


def bearer_token() -> str | None:
    """The token of ``Authorization: Bearer …``; a header of another scheme is a 401."""
    header = request.headers.get("Authorization")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Erwartet wird „Authorization: Bearer <Schlüssel>“.")
    return token.strip()


class _Parser(FlaskParser):
    """webargs' parser, but a body that is not JSON is malformed input: 422, like the rest."""

    def _handle_invalid_json_error(
        self, error: Any, req: Any, *args: Any, **kwargs: Any
    ) -> NoReturn:
        abort(
            422,
            exc=error,
            message="Kein gültiges JSON.",
            messages={"json": {"_schema": ["Kein gültiges JSON."]}},
        )


class Blueprint(smorest.Blueprint):
    ARGUMENTS_PARSER = _Parser()
