"""Players of a Stammtisch."""

from __future__ import annotations

from marshmallow import Schema, fields

from .common import Bool, Int, UtcDateTime, opt, player_field, req


class PlayerCreateSchema(Schema):
    name = player_field("Name, unique among the Stammtisch's players.", required=True)


class PlayerUpdateSchema(Schema):
    name = player_field("New name (games keep the name they were played with).", "Anne")
    retired = opt(
        Bool,
        "Retire (true) or bring back (false). Retired players keep their history but "
        "cannot start new games.",
        True,
    )


class PlayerSchema(Schema):
    id = req(Int, "Player id.", 1)
    name = req(fields.String, "Current name.", "Anna")
    retired = req(Bool, "Retired from playing.", False)
    created_at = req(UtcDateTime, "When added (UTC).", "2026-11-27T19:00:00+00:00")
    retired_at = req(UtcDateTime, "When retired (UTC), or null.", None, allow_none=True)
