"""The one reader of JSON request bodies (the API's bodies, and JSON in a form field).

Python's :func:`json.loads` takes more than JSON and fails in ways a server must not pass on:
it raises a bare ``ValueError`` for an integer of more than 4,300 digits (a 500 where it goes
unhandled), takes ``NaN`` and ``Infinity`` (no JSON has them, and no answer could write them
back as JSON), turns ``1e999`` into infinity, hits the recursion limit on deep nesting, and
gives lone UTF-16 surrogates (``"\\ud800"``) that no store can keep. :func:`read_json` refuses
each of them with a German sentence (:class:`JsonRefused`), which the API answers as a 422:

* an integer outside what a signed 64-bit integer holds (no field of the API takes one; an id
  is at most 2**63 − 1): refused by the number's digits, read the one way every number is
  (:func:`api.rules.read_number`), before ``int()`` could fail on them;
* a non-finite number: ``NaN``, ``Infinity``, ``-Infinity``, or a float literal beyond the
  largest float;
* nesting deeper than ``max_depth`` (the setting ``MAX_JSON_DEPTH``);
* text (keys or values) that cannot be written as UTF-8;
* anything that is no JSON in UTF-8 at all ("Kein gültiges JSON."; ``malformed`` set).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..rules import Limit, read_number

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
    from flask import current_app, request

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
