"""Live events (``GET …/events``, Server-Sent Events): the query of a stream and the JSON of
each message's ``data:`` line (also what a webhook delivers per domain event)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.rules import limits

from .common import TextNumber, UtcDateTime, doc, opt, req
from .events import EVENT_KINDS


class EventStreamQuerySchema(Schema):
    last_event_id = TextNumber(
        limits.EVENT_ID,
        metadata=doc(
            "Resume after this id (the last `id:` the client has; the `Last-Event-ID` header "
            "wins when both are sent). For one game the entry's `seq` (e.g. the game's ETag "
            "after reading it), for the Stammtisch the `position`. Without either: only new "
            "events.",
            12,
        ),
    )


class EventStreamHeadersSchema(Schema):
    last_event_id = opt(
        fields.String,
        "Resume after this id (EventSource sends the last `id:` it got when it "
        "reconnects); a value that is no number of the id's range (ASCII digits, at most "
        "2**63 − 1) is ignored.",
        "12",
        data_key="Last-Event-ID",
    )


class LiveEventSchema(Schema):
    """One domain event as a stream message's ``data:`` line (one line of JSON)."""

    kind = req(
        fields.String,
        "The domain event (also the message's `event:` name).",
        "turn_recorded",
        validate=validate.OneOf(EVENT_KINDS),
    )
    message = req(fields.String, "German sentence for the table.", "Anna würfelt Schock aus.")
    data = req(fields.Dict, "The event's payload (see the kinds).", {})
    game_id = req(fields.Integer, "The game.", 7)
    seq = req(fields.Integer, "The log entry's sequence number in its game (the id per game).", 12)
    position = req(
        fields.Integer,
        "The entry's place in the Stammtisch's event log (the id per Stammtisch).",
        40,
    )
    recorded_at = req(UtcDateTime, "When the entry was stored.", "2026-12-01T20:15:00+00:00")
