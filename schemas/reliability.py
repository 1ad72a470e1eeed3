"""Answers of the reliability layer (api/idempotency.py): a stale If-Match."""

from __future__ import annotations

from marshmallow import fields, validate

from .common import ErrorSchema, Int, doc, req
from .game_state import GameSchema

_STALE = (
    'Das Spiel wurde inzwischen weitergeführt: Stand 7, gesendet wurde "5". Nichts wurde '
    "eingetragen; bitte den aktuellen Stand ansehen und den Zug neu eingeben."
)


class PreconditionFailedSchema(ErrorSchema):
    """412: the game moved on since the version sent in If-Match; nothing was recorded."""

    type = req(fields.String, "The problem's type.", "/api/v1/problems/precondition_failed")
    title = req(fields.String, "Short German summary.", "Spiel inzwischen weitergeführt")
    status = req(Int, "Always 412.", 412, validate=validate.Equal(412))
    detail = req(fields.String, "What happened, in German.", _STALE)
    code = req(
        fields.String,
        "Always precondition_failed.",
        "precondition_failed",
        validate=validate.Equal("precondition_failed"),
    )
    message = fields.String(
        required=True,
        metadata=doc("Deprecated alias of `detail`.", _STALE, deprecated=True),
    )
    game = fields.Nested(
        GameSchema, metadata=doc("The game's current state; its seq is the current version.", {})
    )
