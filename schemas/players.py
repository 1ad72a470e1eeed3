"""Players of a Stammtisch."""

from __future__ import annotations

from marshmallow import Schema, fields

from .common import Bool, Int, UtcDateTime, doc, player_field


class PlayerCreateSchema(Schema):
    name = player_field("Name, unique among the Stammtisch's players.", required=True)


class PlayerUpdateSchema(Schema):
    name = player_field("New name (games keep the name they were played with).", "Anne")
    retired = Bool(
        metadata=doc(
            "Retire (true) or bring back (false). Retired players keep their history but "
            "cannot start new games.",
            True,
        )
    )


class PlayerSchema(Schema):
    id = Int(required=True, metadata=doc("Player id.", 1))
    name = fields.String(required=True, metadata=doc("Current name.", "Anna"))
    retired = Bool(required=True, metadata=doc("Retired from playing.", False))
    created_at = UtcDateTime(
        required=True, metadata=doc("When added (UTC).", "2026-11-27T19:00:00+00:00")
    )
    retired_at = UtcDateTime(
        required=True, allow_none=True, metadata=doc("When retired (UTC), or null.", None)
    )
