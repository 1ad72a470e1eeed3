"""The Blueprint every resource uses: flask-smorest's, with our body parsing rules."""

from __future__ import annotations

import functools
from typing import Any, NoReturn

import flask_smorest as smorest
from flask import request
from webargs.flaskparser import FlaskParser, abort


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

    def arguments(  # type: ignore[override]  # narrower keywords than the base
        self, schema: Any, *, location: str = "json", required: bool = True, **kw: Any
    ) -> Any:
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
