"""What every resource's routes stand on: the Blueprint (flask-smorest's, with our body parsing
rules and types), the request body read and checked first by the one reader of JSON bodies, and
the ``<id:…>`` path converter.

flask-smorest ships no type information, so to mypy its Blueprint is ``Any`` and every view it
decorates would become untyped. :class:`Blueprint` therefore states the signatures of the
decorators the resources use (each keeps the decorated function's type) and delegates to
flask-smorest at run time; for the type checker its base is ``object``.

**The body first** (:func:`init_body`): the whole body of a write is read before anything else
of the request (the rate limit, the key's look-up) takes a database connection, so a client that
sends it slowly holds only its own task (a greenlet of ``schocken serve``), never a connection of
the pool. A JSON body the one reader refuses (below) is a 422 with the reader's German sentence
once the rate limit has counted the write (:func:`init_limits`), before any view reads the
body. A body that is no JSON at all is left to the view (422 "Kein gültiges JSON.", or 415 for
another content type). Oversized bodies are Flask's own 413 (``MAX_CONTENT_LENGTH``).

**The one reader of JSON bodies** (:func:`read_json`: the API's bodies, read once per request by
:func:`body_json`, and JSON in a form field). Python's :func:`json.loads` takes more than JSON
and fails in ways a server must not pass on: it raises a bare ``ValueError`` for an integer of
more than 4,300 digits (a 500 where it goes unhandled), takes ``NaN`` and ``Infinity`` (no JSON
has them, and no answer could write them back as JSON), turns ``1e999`` into infinity, hits the
recursion limit on deep nesting, and gives lone UTF-16 surrogates (``"\\ud800"``) that no store
can keep. :func:`read_json` refuses each of them with a German sentence (:class:`JsonRefused`),
which the API answers as a 422:

* an integer outside what a signed 64-bit integer holds (no field of the API takes one; an id
  is at most 2**63 − 1, e.g. one of 5,000 digits that Python's ``int()`` refuses): refused by
  the number's digits, read the one way every number is (:func:`api.rules.read_number`), before
  ``int()`` could fail on them;
* a non-finite number: ``NaN``, ``Infinity``, ``-Infinity``, or a float literal beyond the
  largest float;
* nesting deeper than ``max_depth`` (the setting ``MAX_JSON_DEPTH``; Python's parser would
  otherwise hit its recursion limit);
* text (keys or values) that cannot be written as UTF-8 (a lone surrogate escape such as
  ``"A\\ud800B"``);
* anything that is no JSON in UTF-8 at all ("Kein gültiges JSON."; ``malformed`` set).

**Ids in URL paths**: ``<id:…>``, the converter of every route that names a stored row
(:class:`IdConverter`). A path id is ASCII digits only, within :data:`api.rules.limits.ID` (1 to
2**63 − 1, what SQLite's INTEGER and PostgreSQL's BIGINT hold). Anything else — ``0``, ``²``,
``٣``, 2**63, five thousand digits — matches no route: a 404 (problem+json under ``/api/``, the
German error page elsewhere), never a value the database refuses. werkzeug's own ``int``
converter would pass 2**63 on to the database and call ``int()`` on any number of digits. The
OpenAPI document describes such a parameter as an ``int64`` integer from 1 to 2**63 − 1.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

import flask_smorest as smorest
from flask import Flask, current_app, request
from marshmallow import RAISE, missing
from webargs.flaskparser import FlaskParser, abort
from werkzeug.routing import BaseConverter, ValidationError

from ..rules import Limit, limits, read_number
from .context import WRITE_METHODS

F = TypeVar("F", bound=Callable[..., Any])
C = TypeVar("C", bound=type)

if TYPE_CHECKING:
    _Base = object
else:
    _Base = smorest.Blueprint


# ------------------------------------------------------------------- the JSON reader

#: the integers a JSON body may hold: what a signed 64-bit integer holds
JSON_INT = Limit(0, 2**63 - 1)
NOT_JSON = "Kein gültiges JSON."
#: a ``\\uD800``–``\\uDFFF`` escape in raw JSON (the only way a lone surrogate gets in)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
#: a run of digits as long as the largest integer a body may hold
_LONG_DIGITS = re.compile(f"[0-9]{{{len(str(JSON_INT.high))}}}")


class JsonRefused(ValueError):
    """A body :func:`read_json` does not take. ``message``: German; ``where``: the field it
    names (``_schema``: the whole body); ``malformed``: it is no JSON at all."""

    def __init__(self, message: str, where: str = "_schema", malformed: bool = False) -> None:
        super().__init__(message)
        self.message, self.where, self.malformed = message, where, malformed


def _shown(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}…{text[-4:]} ({len(text)} Zeichen)"


def _integer(text: str) -> int:
    magnitude = read_number(text.removeprefix("-"), JSON_INT)
    if magnitude is None:
        raise JsonRefused(
            f"Die Zahl {_shown(text)} ist zu groß: ganze Zahlen im JSON-Inhalt liegen zwischen "
            f"−{JSON_INT.high} und {JSON_INT.high}."
        )
    return -magnitude if text.startswith("-") else magnitude


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonRefused(f"Die Zahl {_shown(text)} ist zu groß für eine Kommazahl.")
    return value


def _constant(name: str) -> Any:
    raise JsonRefused(f"{name} ist keine Zahl in JSON: NaN und Infinity gibt es dort nicht.")


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return deepest


def _unencodable(value: Any) -> str | None:
    """The path of the first string (key or value) that cannot be written as UTF-8."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return where or "json"
        elif isinstance(item, dict):
            for key, child in item.items():
                stack.append((key, where or "json"))
                stack.append((child, f"{where}.{key}" if where else str(key)))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(item))
    return None


def read_json(data: bytes | str, max_depth: int) -> Any:
    """The JSON document of ``data`` (UTF-8), or :class:`JsonRefused` (see the module)."""
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as err:
        raise JsonRefused(NOT_JSON, malformed=True) from err
    too_deep = JsonRefused(f"Der JSON-Inhalt ist tiefer als {max_depth} Ebenen verschachtelt.")
    # a number of 19 digits or more may be out of range: only then is every integer checked
    # (a call per integer costs; fewer digits always fit)
    integer = _integer if _LONG_DIGITS.search(text) else None
    try:
        doc = json.loads(text, parse_int=integer, parse_float=_float, parse_constant=_constant)
    except JsonRefused:
        raise
    except RecursionError as err:
        raise too_deep from err
    except ValueError as err:  # json.JSONDecodeError
        raise JsonRefused(NOT_JSON, malformed=True) from err
    if text.count("[") + text.count("{") > max_depth and _depth(doc) > max_depth:
        raise too_deep
    if _SURROGATE_ESCAPE.search(text):
        where = _unencodable(doc)
        if where is not None:
            raise JsonRefused(
                f"„{where}“ enthält ein Zeichen, das es nicht gibt (ein einzelnes UTF-16-"
                "Ersatzzeichen wie \\ud800): bitte den Text neu eingeben.",
                where,
            )
    return doc


def body_json() -> Any:
    """The JSON document of the request's body (:func:`read_json` with ``MAX_JSON_DEPTH``),
    read once per request: the body check, the parser of the views and the idempotency
    fingerprint share it (kept in the request's environ; a refusal is raised again each time)."""
    known = request.environ.get(_KEPT, _UNREAD)
    if known is _UNREAD:
        try:
            known = read_json(request.get_data(cache=True), current_app.config["MAX_JSON_DEPTH"])
        except JsonRefused as err:
            known = err
        request.environ[_KEPT] = known
    if isinstance(known, JsonRefused):
        raise known
    return known


_UNREAD = object()
_KEPT = "schocken.body_json"


# ------------------------------------------------------------------- the Blueprint


class _Parser(FlaskParser):
    """webargs' parser, but JSON bodies are read by the one reader (:func:`read_json`):
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
        """Another documented answer (an error): documentation only (:func:`_documented`)."""
        return _documented(super().alt_response(status_code, **kw))  # type: ignore[misc]

    def doc(self, **kwargs: Any) -> Callable[[F], F]:
        """Add to the operation's OpenAPI document: documentation only (:func:`_documented`)."""
        return _documented(super().doc(**kwargs))  # type: ignore[misc]

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


def _documented(decorator: Callable[[Any], Any]) -> Callable[[F], F]:
    """flask-smorest's documenting ``decorator`` (``doc``, ``alt_response``) as documentation
    only. Its wrapper does nothing but call the view, one more call per request for each
    documented answer; so the view itself is kept, carrying the wrapper's description of the
    operation (``_apidoc``, the attribute where flask-smorest collects it, see its
    ``Blueprint``: every later decorator and the OpenAPI document read it from there)."""

    def apply(func: F) -> F:
        func._apidoc = decorator(func)._apidoc  # type: ignore[attr-defined]
        return func

    return apply


def _read_body() -> None:
    """The whole body of a write first (see the module's description), kept for the views
    (werkzeug's cache; a form is parsed from it as well)."""
    if request.method in WRITE_METHODS:
        request.get_data(cache=True)


def _check_json() -> None:
    """Under ``/api/``, a JSON body the one reader refuses is a 422 (after the rate limit took
    its token: a refused body counts as a write)."""
    if request.method not in WRITE_METHODS or not request.path.startswith("/api/"):
        return
    if not request.get_data(cache=True):
        return
    try:
        body_json()
    except JsonRefused as err:
        if err.malformed:
            return  # not JSON: the view says so (422, or 415 for another content type)
        abort(422, message=err.message, messages={"json": {err.where: [err.message]}})


def init_body(app: Flask) -> None:
    """First of the app's ``before_request`` functions (see :func:`_read_body`)."""
    app.before_request(_read_body)


def init_limits(app: Flask) -> None:
    """After the rate limit's hook: the body check (see :func:`_check_json`)."""
    app.before_request(_check_json)


#: the converter's name in a rule: ``/games/<id:game_id>``
ID_CONVERTER = "id"


class IdConverter(BaseConverter):
    """``<id:name>``: a stored row's id (see the module's description)."""

    #: ASCII digits only, at most as many as the largest id has: a longer one is no id (404);
    #: so ``int()`` reads every match exactly, and only the range is left to check
    regex = f"[0-9]{{1,{len(str(limits.ID.high))}}}"
    weight = 50  # as werkzeug's number converters: a literal segment beside it wins

    def to_python(self, value: str) -> int:
        number = int(value)
        if not limits.ID.low <= number <= limits.ID.high:
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
    app.url_map.converters[ID_CONVERTER] = IdConverter
    api.register_converter(IdConverter, id_parameter_schema)
