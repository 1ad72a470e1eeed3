"""Small shared pieces: documented fields, health, errors."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any, TypeVar

from marshmallow import Schema, ValidationError, fields, validate

from api.domain.problems import CATALOGUE
from api.rules import (
    DICE_PATTERN,
    MAX_NAME,
    OUT_OF_RANGE,
    Limit,
    format_dice,
    in_range,
    limits,
    read_number,
)

#: printable text only: line breaks and other control characters in a name break logs, CSV
#: exports and pages (a carriage return in a name made the statistics fail)
PRINTABLE = validate.Regexp(
    r"^[^\x00-\x1f\x7f]*$",
    error="Nur druckbare Zeichen, keine Zeilenumbrüche oder Steuerzeichen.",
)
FieldT = TypeVar("FieldT", bound=fields.Field[Any])

PLAYER_NAME = [validate.Length(min=1, max=MAX_NAME), PRINTABLE]


class Bool(fields.Boolean):
    """JSON true/false only (no 0/1, no "yes"): the contract says boolean."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> bool:
        if not isinstance(value, bool):  # 0 == False in Python, so check the type itself
            raise self.make_error("invalid", input=value)
        return value


class Int(fields.Integer):
    """JSON integers only (no "3", no 3.5)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)


class TextNumber(fields.Integer):
    """A whole number written as text (a query parameter, a header), read the one way every
    such number is read (:func:`api.rules.read_number`: ASCII digits only, at most
    :data:`~api.rules.limits.MAX_DIGITS`; no sign, no blanks, no "²") and within ``limit``
    (documented as the parameter's minimum and maximum). An id's limit is
    :data:`~api.rules.limits.ID`: nothing beyond what the database holds gets through."""

    default_error_messages = {
        "invalid": f"Keine ganze Zahl: nur die Ziffern 0 bis 9, höchstens {limits.MAX_DIGITS}."
    }

    def __init__(self, limit: Limit, **kwargs: Any) -> None:
        super().__init__(validate=within(limit), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        number = read_number(value)
        if number is None:
            raise self.make_error("invalid")
        return number


def either(values: Iterable[str]) -> str:
    """``["a", "b", "c"]`` → ``"a, b or c"``: the values of a documented field."""
    *first, last = values
    return f"{', '.join(first)} or {last}" if first else last


def within(limit: Limit) -> validate.Range:
    """A whole number in one of the engine's ranges (:mod:`api.rules.limits`)."""
    return validate.Range(limit.low, limit.high)


def doc(description: str, example: Any, **extra: Any) -> dict[str, Any]:
    """The metadata every field carries: an English description and an example."""
    return {"description": description, "example": example, **extra}


def opt(kind: Callable[..., FieldT], description: str, example: Any, **kw: Any) -> FieldT:
    """A field of ``kind`` with its description and example."""
    return kind(metadata=doc(description, example), **kw)


def req(kind: Callable[..., FieldT], description: str, example: Any, **kw: Any) -> FieldT:
    """A required field of ``kind`` with its description and example."""
    return kind(required=True, metadata=doc(description, example), **kw)


class IsoDateTime(fields.String):
    """An ISO 8601 date-time *with* offset, kept as the exact string given (for round trips)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = super()._deserialize(value, attr, data, **kwargs)
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise ValidationError(
                "Kein Datum nach ISO 8601 (z. B. 2026-11-27T20:15:00+01:00)."
            ) from None
        if moment.tzinfo is None:
            raise ValidationError("Das Datum braucht eine Zeitzone (z. B. +01:00).")
        if not in_range(moment):
            raise ValidationError(f"Das Datum {OUT_OF_RANGE}")
        return text


class UtcDateTime(fields.DateTime):
    """A moment stored as naive UTC, sent as RFC 3339 with its offset (+00:00)."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        if isinstance(value, datetime) and value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return super()._serialize(value, attr, obj, **kwargs)


class Verbatim(fields.Nested):
    """A nested schema for the documentation, dumped as the JSON-ready value it already is.

    The service layer builds these values (game outcomes, domain events) with exactly the
    documented keys; marshmallow's field-by-field dump of a long game's history would cost
    more than recording the turn. The contract test checks every response against the schema."""

    # marshmallow's Nested calls the value nested_obj where its base class Field says value
    def _serialize(  # type: ignore[override]
        self, nested_obj: Any, attr: str | None, obj: Any, **kwargs: Any
    ) -> Any:
        return nested_obj


class Name(fields.String):
    """A name as sent, in Unicode NFC: names are stored in that form
    (:mod:`api.rules.text`), so a name typed with a combining accent finds its player."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        return unicodedata.normalize("NFC", super()._deserialize(value, attr, data, **kwargs))


def different(names: list[str]) -> None:
    """Every player once (the contract's ``uniqueItems``)."""
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ValidationError(f"Jeder Spieler nur einmal: {', '.join(twice)} steht doppelt.")


def player_field(description: str, example: str = "Anna", **kwargs: Any) -> fields.String:
    return Name(validate=PLAYER_NAME, metadata=doc(description, example), **kwargs)


def dice_field(
    description: str, example: list[int], *, minimum: int, maximum: int, **kw: Any
) -> fields.List[int]:
    return fields.List(
        Int(
            validate=within(limits.PIPS),
            metadata=doc(f"Pips of one die, {limits.PIPS.low} to {limits.PIPS.high}.", 4),
        ),
        validate=validate.Length(min=minimum, max=maximum),
        metadata=doc(description, example),
        **kw,
    )


def list_of(
    schema: type[Schema], description: str, example: list[Any] | None = None
) -> fields.List[Any]:
    """A list of nested objects that an answer always carries (the rows of a page, a ranking)."""
    return fields.List(
        fields.Nested(schema), required=True, metadata=doc(description, example or [])
    )


def names_field(description: str, example: list[str]) -> fields.List[str]:
    """Players' names that an answer always carries, e.g. in seat order."""
    return fields.List(
        fields.String(metadata=doc("Name.", example[0])),
        required=True,
        metadata=doc(description, example),
    )


def notation_field(description: str) -> fields.String:
    """A result in the engine's dice notation (``"1-1-4"``)."""
    return fields.String(
        required=True,
        validate=validate.Regexp(DICE_PATTERN),
        metadata=doc(description, format_dice((4, 1, 1))),
    )


class PageSchema(Schema):
    """One page of a list; a subclass adds ``items`` (the page's rows) and ``total``."""

    page = req(Int, "This page number.", 1)
    page_size = req(Int, "Page size.", 20)


class SenderHealthSchema(Schema):
    due = req(Int, "Webhook deliveries due now (of active webhooks).", 0)
    oldest_due_seconds = req(
        fields.Float,
        "Seconds since the oldest of them came due (null: none).",
        None,
        allow_none=True,
    )
    waiting_seconds = req(
        fields.Float,
        "Seconds the oldest due delivery of a webhook with no attempt in flight has waited "
        "for the sender (null: none; a slow receiver's own backlog does not count).",
        None,
        allow_none=True,
    )
    behind = req(
        Bool, "The sender is behind: that wait is over WEBHOOK_BEHIND_SECONDS (default 30).", False
    )


class HealthSchema(Schema):
    status = req(
        fields.String, "'ok', or 'degraded' (with 503) when the database cannot write.", "ok"
    )
    version = opt(fields.String, "Version of the server (only with the admin token).", "0.1.0")
    storage = req(fields.String, "Kind of store: sqlite, postgresql or memory.", "sqlite")
    database = opt(
        fields.String,
        "Only when degraded and asked with the admin token: why the database cannot "
        "write (for the operator; may name a file or host).",
        "SQLite: database or disk is full",
    )
    sender = fields.Nested(
        SenderHealthSchema,
        metadata=doc(
            "Only with the admin token: the webhook sender (is it behind?).",
            {"due": 0, "oldest_due_seconds": None, "waiting_seconds": None, "behind": False},
        ),
    )


class ErrorSchema(Schema):
    """RFC 9457 problem details (``application/problem+json``), every error of the API."""

    type = fields.String(
        required=True,
        metadata=doc(
            "The problem's type: `/api/v1/problems/<code>`, a reference relative to the "
            "request's URL; stable per code (GET it for the catalogue entry).",
            "/api/v1/problems/turn_not_yours",
            format="uri-reference",
        ),
    )
    title = req(
        fields.String,
        "Short German summary of the code, the same every time.",
        "Nicht an der Reihe",
    )
    status = req(Int, "The HTTP status code.", 409)
    detail = req(
        fields.String,
        "What went wrong, in German, for the player; for a rule violation it names the rule.",
        "Ben ist nicht an der Reihe, sondern Anna.",
    )
    code = req(
        fields.String,
        "Stable machine-readable code of the problem (snake_case); branch on this. "
        "Before API 0.9 it was the numeric status, which is `status` now.",
        "turn_not_yours",
        validate=validate.OneOf(sorted(CATALOGUE)),
    )
    message = fields.String(
        required=True,
        metadata=doc(
            "Deprecated alias of `detail` (the old error shape); removed in API v2.",
            "Ben ist nicht an der Reihe, sondern Anna.",
            deprecated=True,
        ),
    )
    errors = opt(
        fields.Dict,
        "Field errors by location (json, query, headers) and field name, whenever a field "
        "of the request is at fault (422 and 409 alike).",
        {"json": {"player": ["Ben ist nicht an der Reihe, sondern Anna."]}},
        keys=fields.String(),
    )
