"""Answers of the reliability layer (api/idempotency.py): a stale If-Match."""

from __future__ import annotations

from marshmallow import fields, validate

from .common import ErrorSchema, Int, doc
from .game_state import GameSchema

_STALE = (
    'Das Spiel wurde inzwischen weitergeführt: Stand 7, gesendet wurde "5". Nichts wurde '
    "eingetragen; bitte den aktuellen Stand ansehen und den Zug neu eingeben."
)


class PreconditionFailedSchema(ErrorSchema):
    """412: the game moved on since the version sent in If-Match; nothing was recorded."""

    type = fields.String(
        required=True,
        metadata=doc("The problem's type.", "/api/v1/problems/precondition_failed"),
    )
    title = fields.String(
        required=True, metadata=doc("Short German summary.", "Spiel inzwischen weitergeführt")
    )
    status = Int(required=True, validate=validate.Equal(412), metadata=doc("Always 412.", 412))
    detail = fields.String(required=True, metadata=doc("What happened, in German.", _STALE))
    code = fields.String(
        required=True,
        validate=validate.Equal("precondition_failed"),
        metadata=doc("Always precondition_failed.", "precondition_failed"),
    )
    message = fields.String(
        required=True,
        metadata=doc("Deprecated alias of `detail`.", _STALE, deprecated=True),
    )
    game = fields.Nested(
        GameSchema, metadata=doc("The game's current state; its seq is the current version.", {})
    )
