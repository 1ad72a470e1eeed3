"""Answers of the reliability layer (api/idempotency.py): a stale If-Match."""

from __future__ import annotations

from marshmallow import fields

from .common import ErrorSchema, doc
from .game_state import GameSchema


class PreconditionFailedSchema(ErrorSchema):
    """412: the game moved on since the version sent in If-Match; nothing was recorded."""

    game = fields.Nested(
        GameSchema, metadata=doc("The game's current state; its seq is the current version.", {})
    )
