"""Who may do what: the Stammtisch's write token from ``Authorization: Bearer …``, and the
server's admin token for administration.

Writes need the Stammtisch's token; reads are public unless the Stammtisch is private. The
decorators run before the body is parsed, so an unauthorised request learns nothing about its
body (401/403/404 first). The token check itself is a use case (``api/domain/stammtische.py``).
"""

from __future__ import annotations

import functools
import hmac
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from flask import Flask, current_app, g, request

from ..domain import Forbidden, Unauthorized
from ..domain.backup import stored_admin_token
from ..domain.stammtische import Caller
from .context import services

F = TypeVar("F", bound=Callable[..., Any])

#: writes: the Stammtisch's token
BEARER: list[dict[str, list[str]]] = [{"bearerAuth": []}]
#: reads: public, but a private Stammtisch needs its token
OPTIONAL_BEARER: list[dict[str, list[str]]] = [{}, {"bearerAuth": []}]


def _bearer(header: str) -> str | None:
    """The token of an ``Authorization: Bearer …`` header; None for another scheme."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def bearer_token() -> str | None:
    """The token of ``Authorization: Bearer …``; a header of another scheme is a 401."""
    header = request.headers.get("Authorization")
    if not header:
        return None
    token = _bearer(header)
    if token is None:
        raise Unauthorized("Erwartet wird „Authorization: Bearer <Schlüssel>“.")
    return token


def caller(slug: str) -> Caller:
    """The request's Stammtisch (of ``slug``) and whether its bearer token is the
    Stammtisch's key: looked up and hashed once per request (kept in the request's environ;
    the rate limit, the access check and the idempotent write share it). A header of another
    scheme is a 401 (:func:`bearer_token`)."""
    known: Caller | None = request.environ.get("schocken.caller")
    if known is None or known.slug != slug:
        known = request.environ["schocken.caller"] = services().caller(slug, bearer_token())
    return known


def admin_token(app: Flask) -> str:
    """The server's admin token: configured (``ADMIN_TOKEN``), else the one generated once
    into the instance folder."""
    token = app.config.get("ADMIN_TOKEN")
    if token:
        return str(token)
    token = stored_admin_token(Path(app.instance_path), create=True) or ""
    app.config["ADMIN_TOKEN"] = token
    return token


def check_admin() -> None:
    """Server administration (a backup of every Stammtisch) needs the admin token."""
    token = _bearer(request.headers.get("Authorization", ""))
    if token is None:
        raise Unauthorized("Dafür braucht es den Admin-Schlüssel des Servers (Bearer-Token).")
    if not hmac.compare_digest(token.encode(), admin_token(current_app).encode()):
        raise Forbidden("Das ist nicht der Admin-Schlüssel dieses Servers.")


def write_access(func: F) -> F:
    """Outermost decorator of a write: the Stammtisch's token first (401/403/404), then the
    body is parsed. The Stammtisch is left on ``g.stammtisch``."""

    @functools.wraps(func)
    def view(*args: Any, **kwargs: Any) -> Any:
        g.stammtisch = caller(kwargs["slug"]).writable()
        return func(*args, **kwargs)

    return view  # type: ignore[return-value]  # same signature, wrapped


def read_access(func: F) -> F:
    """Outermost decorator of a read below a Stammtisch (private ones need the token)."""

    @functools.wraps(func)
    def view(*args: Any, **kwargs: Any) -> Any:
        g.stammtisch = caller(kwargs["slug"]).readable()
        return func(*args, **kwargs)

    return view  # type: ignore[return-value]  # same signature, wrapped
