"""Ids in URL paths: the ``<id:…>`` converter of every route that names a stored row.

A path id is read like every number that comes as text (:func:`api.rules.read_number`): ASCII
digits only, within :data:`api.rules.limits.ID` (1 to 2**63 − 1, what SQLite's INTEGER and
PostgreSQL's BIGINT hold). Anything else — ``0``, ``²``, ``٣``, 2**63, five thousand digits —
matches no route: a 404 (problem+json under ``/api/``, the German error page elsewhere), never
a value the database refuses. werkzeug's own ``int`` converter would pass 2**63 on to the
database and call ``int()`` on any number of digits.

The OpenAPI document describes such a parameter as an ``int64`` integer from 1 to 2**63 − 1.
"""

from __future__ import annotations

from typing import Any

from flask import Flask
from werkzeug.routing import BaseConverter, ValidationError

from ..rules import limits, read_number

#: the converter's name in a rule: ``/games/<id:game_id>``
NAME = "id"


class IdConverter(BaseConverter):
    """``<id:name>``: a stored row's id (see the module's description)."""

    #: at most as many ASCII digits as the largest id has: a longer one is no id (404)
    regex = f"[0-9]{{1,{len(str(limits.ID.high))}}}"
    weight = 50  # as werkzeug's number converters: a literal segment beside it wins

    def to_python(self, value: str) -> int:
        number = read_number(value, limits.ID)
        if number is None:
            raise ValidationError()
        return number

    def to_url(self, value: Any) -> str:
        return str(int(value))


def id_parameter_schema(converter: IdConverter) -> dict[str, Any]:
    """The OpenAPI schema of an ``<id:…>`` path parameter."""
    return {
        "type": "integer",
        "format": "int64",
        "minimum": limits.ID.low,
        "maximum": limits.ID.high,
    }


def register_converters(app: Flask, api: Any) -> None:
    """Make ``<id:…>`` known to the app's routes and to the OpenAPI document: call before any
    blueprint with such a route is registered."""
    app.url_map.converters[NAME] = IdConverter
    api.register_converter(IdConverter, id_parameter_schema)
