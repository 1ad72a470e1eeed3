"""Who may do what: the Stammtisch's write token from ``Authorization: Bearer …``.

Writes need the Stammtisch's token; reads are public unless the Stammtisch is private. The
decorators run before the body is parsed, so an unauthorised request learns nothing about its
body (401/403/404 first). The token check itself is a use case (``api/domain/stammtische.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from flask import g, request

from ..domain import Unauthorized
from .context import services

F = TypeVar("F", bound=Callable[..., Any])

#: writes: the Stammtisch's token
BEARER: list[dict[str, list[str]]] = [{"bearerAuth": []}]
#: reads: public, but a private Stammtisch needs its token
OPTIONAL_BEARER: list[dict[str, list[str]]] = [{}, {"bearerAuth": []}]


def bearer_token() -> str | None:
    """The token of ``Authorization: Bearer …``; a header of another scheme is a 401."""
    header = request.headers.get("Authorization")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Erwartet wird „Authorization: Bearer <Schlüssel>“.")
    return token.strip()


def write_access(func: F) -> F:
    """Outermost decorator of a write: the Stammtisch's token first (401/403/404), then the
    body is parsed. The Stammtisch is left on ``g.stammtisch``."""

    @functools.wraps(func)
    def view(*args: Any, **kwargs: Any) -> Any:
        g.stammtisch = services().writable(kwargs["slug"], bearer_token())
        return func(*args, **kwargs)

    return view  # type: ignore[return-value]  # same signature, wrapped


def read_access(func: F) -> F:
    """Outermost decorator of a read below a Stammtisch (private ones need the token)."""

    @functools.wraps(func)
    def view(*args: Any, **kwargs: Any) -> Any:
        g.stammtisch = services().readable(kwargs["slug"], bearer_token())
        return func(*args, **kwargs)

    return view  # type: ignore[return-value]  # same signature, wrapped
