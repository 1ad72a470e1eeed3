"""The Blueprint every resource uses: flask-smorest's, with our body parsing rules and types.

flask-smorest ships no type information, so to mypy its Blueprint is ``Any`` and every view it
decorates would become untyped. :class:`Blueprint` therefore states the signatures of the
decorators the resources use (each keeps the decorated function's type) and delegates to
flask-smorest at run time; for the type checker its base is ``object``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import flask_smorest as smorest
from flask import request
from marshmallow import RAISE, missing
from webargs.flaskparser import FlaskParser, abort

from .jsonread import JsonRefused, body_json

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

if TYPE_CHECKING:
    _Base = object
else:
    _Base = smorest.Blueprint


class _Parser(FlaskParser):
    """webargs' parser, but JSON bodies are read by the one reader (:mod:`api.http.jsonread`):
    a body that is not JSON is malformed input, 422 like the rest (and so is every other body
    the reader refuses); and an unknown query parameter is refused (422) like an unknown body
    field, on every operation that takes query parameters (a misspelt ``?yaer=2024`` would
    otherwise answer all time as if it were the year asked for)."""

    DEFAULT_UNKNOWN_BY_LOCATION = {
        **FlaskParser.DEFAULT_UNKNOWN_BY_LOCATION,
        "query": RAISE,
        "querystring": RAISE,
    }

    def load_json(self, req: Any, schema: Any) -> Any:
        """The request's JSON body (``missing`` without one, or with another content type)."""
        if not req.is_json:
            return missing
        if not req.get_data(cache=True):
            return missing
        try:
            return body_json()
        except JsonRefused as err:
            abort(422, message=err.message, messages={"json": {err.where: [err.message]}})


class Blueprint(_Base):
    """flask-smorest's Blueprint; a required JSON body must be there and be JSON."""

    ARGUMENTS_PARSER = _Parser()

    if TYPE_CHECKING:

        def __init__(self, name: str, import_name: str, **kwargs: Any) -> None: ...

    def route(self, rule: str, **options: Any) -> Callable[[C], C]:
        """Register a MethodView class under ``rule``."""
        return cast(Callable[[C], C], super().route(rule, **options))  # type: ignore[misc]

    def response(self, status_code: int, schema: Any = None, **kw: Any) -> Callable[[F], F]:
        """The success answer: status and schema (serialises the view's return value)."""
        decorator = super().response(status_code, schema, **kw)  # type: ignore[misc]
        return cast(Callable[[F], F], decorator)

    def alt_response(self, status_code: int, **kw: Any) -> Callable[[F], F]:
        """Another documented answer (an error)."""
        return cast(Callable[[F], F], super().alt_response(status_code, **kw))  # type: ignore[misc]

    def doc(self, **kwargs: Any) -> Callable[[F], F]:
        """Add to the operation's OpenAPI document."""
        return cast(Callable[[F], F], super().doc(**kwargs))  # type: ignore[misc]

    def arguments(
        self, schema: Any, *, location: str = "json", required: bool = True, **kw: Any
    ) -> Callable[[F], F]:
        """Parse and validate the request's ``location`` with ``schema``; the view gets it."""
        if isinstance(schema, type):  # one instance: webargs would build one per request
            schema = schema()
        decorator = cast(
            Callable[[F], F],
            super().arguments(schema, location=location, required=required, **kw),  # type: ignore[misc]
        )
        if location != "json":
            return decorator

        def wrap(func: F) -> F:
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

            return cast(F, view)

        return wrap
