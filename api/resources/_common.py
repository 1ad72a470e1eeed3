"""What every resource shares: the request's services, the bearer token, doc snippets."""

from __future__ import annotations

from flask import current_app, g, request

from ..services import Services, Unauthorized

BEARER = [{"bearerAuth": []}]


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
