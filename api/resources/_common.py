"""What every resource shares: the request's services, the bearer token, doc snippets."""

from __future__ import annotations

import functools
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


def write_access(func: Any) -> Any:
    """Outermost decorator of a write: the Stammtisch's token first (401/403/404), then the
    body is parsed. The Stammtisch is left on ``g.stammtisch``."""

    @functools.wraps(func)
    def view(*args: Any, **kwargs: Any) -> Any:
        g.stammtisch = services().writable(kwargs["slug"], bearer_token())
        return func(*args, **kwargs)

    return view


def read_access(func: Any) -> Any:
    """Outermost decorator of a read below a Stammtisch (private ones need the token)."""

    @functools.wraps(func)
    def view(*args: Any, **kwargs: Any) -> Any:
        g.stammtisch = services().readable(kwargs["slug"], bearer_token())
        return func(*args, **kwargs)

    return view


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
    """flask-smorest's Blueprint; a required JSON body must be there and be JSON."""

    ARGUMENTS_PARSER = _Parser()

    def arguments(self, schema: Any, *, location: str = "json", required: bool = True, **kw: Any):
        if isinstance(schema, type):  # one instance: webargs would build one per request
            schema = schema()
        decorator = super().arguments(schema, location=location, required=required, **kw)
        if location != "json":
            return decorator

        def wrap(func: Any) -> Any:
            inner = decorator(func)

            @functools.wraps(inner)
            def view(*args: Any, **kwargs: Any) -> Any:
                if request.get_data(cache=True):
                    if not request.is_json:
                        abort(415, message="Erwartet wird JSON (Content-Type: application/json).")
                elif required:
                    msg = "Der Anfrage fehlt der JSON-Inhalt."
                    abort(422, message=msg, messages={"json": {"_schema": [msg]}})
                return inner(*args, **kwargs)

            return view

        return wrap
