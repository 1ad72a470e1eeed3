"""Webhooks of a Stammtisch and their delivery log."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields, validate

from api.domain.webhooks import KINDS, MAX_URL
from api.rules import limits

from .common import (
    PRINTABLE,
    Bool,
    Int,
    PageSchema,
    TextNumber,
    UtcDateTime,
    doc,
    either,
    list_of,
    opt,
    req,
)

_URL = (
    "The receiver: https:// to a public address or name; IP literals outside the public "
    "ranges are refused. http:// (and https://) to localhost, 127.0.0.0/8 or [::1] only where "
    "the server allows loopback receivers (WEBHOOK_LOOPBACK). Redirects are not followed: "
    "give the final address."
)
_KINDS = f"The event kinds to deliver (at least one): {either(KINDS)}."
_STATES = ("pending", "delivered", "failed")


def _kinds(required: bool) -> Any:
    return fields.List(
        fields.String(validate=validate.Length(max=40)),
        required=required,
        validate=validate.Length(min=1, max=len(KINDS)),
        metadata=doc(_KINDS, ["game_lost", "half_lost"]),
    )


def _url(required: bool) -> Any:
    return fields.String(
        required=required,
        validate=validate.Length(min=1, max=MAX_URL),
        metadata=doc(_URL, "https://chat.example/hooks/schocken"),
    )


def _description() -> Any:
    return fields.String(
        validate=[validate.Length(max=200), PRINTABLE],
        metadata=doc("A note for yourself: what the receiver is.", "Discord #stammtisch"),
    )


class WebhookCreateSchema(Schema):
    url = _url(True)
    kinds = _kinds(True)
    description = _description()


class WebhookUpdateSchema(Schema):
    url = _url(False)
    kinds = _kinds(False)
    active = opt(Bool, "Pause (false) or resume (true) deliveries.", True)
    description = _description()


class WebhookSchema(Schema):
    id = req(Int, "Webhook id.", 1)
    url = req(fields.String, _URL, "https://chat.example/hooks/schocken")
    kinds = fields.List(
        fields.String(), required=True, metadata=doc(_KINDS, ["game_lost", "half_lost"])
    )
    active = req(Bool, "Deliveries are made (a paused webhook gets none for new events).", True)
    description = req(fields.String, "Your note.", "Discord #stammtisch")
    created_at = req(UtcDateTime, "When registered (UTC).", "2026-11-27T19:00:00+00:00")


class WebhookCreatedSchema(WebhookSchema):
    secret = req(
        fields.String,
        "The signing secret, shown only now (and when rotated): `whsec_` + base64 of 32 "
        "bytes. The HMAC key is the base64-decoded part after `whsec_`.",
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    )


class DeliverySchema(Schema):
    id = req(Int, "Delivery id (for redelivery).", 7)
    message_id = req(
        fields.String,
        "The idempotency id the receiver gets as `webhook-id`: the same on every attempt "
        "and redelivery (`<webhook>-<position>-<index>`; a ping `<webhook>-ping-<id>`).",
        "1-42-0",
    )
    kind = req(fields.String, "The event's kind (`ping` for a test).", "game_lost")
    position = req(
        Int, "The event's entry: its position in the Stammtisch's stream.", 42, allow_none=True
    )
    event_index = req(Int, "The event's index within the entry.", 0)
    state = fields.String(
        required=True,
        metadata=doc(f"{either(_STATES)}.", "delivered", enum=list(_STATES)),
    )
    attempts = req(Int, "Attempts made so far.", 1)
    next_attempt_at = req(
        UtcDateTime, "Pending: when it is tried next (UTC).", "2026-11-27T19:00:10+00:00"
    )
    last_status = req(
        Int, "The receiver's HTTP status at the last attempt (null: none).", 200, allow_none=True
    )
    last_error = req(
        fields.String, "Why the last attempt failed (null: it did not).", None, allow_none=True
    )
    last_attempt_at = req(UtcDateTime, "Last attempt (UTC).", None, allow_none=True)
    delivered_at = req(UtcDateTime, "When a 2xx came (UTC).", None, allow_none=True)
    created_at = req(UtcDateTime, "When the event was stored (UTC).", "2026-11-27T19:00:00+00:00")


class DeliveryListSchema(PageSchema):
    items = list_of(DeliverySchema, "This page.")
    total = req(Int, "Deliveries of this webhook.", 42)


class DeliveryListQuerySchema(Schema):
    page = TextNumber(limits.PAGE, load_default=1, metadata=doc("Page, from 1.", 1))
    page_size = TextNumber(
        limits.PAGE_SIZE,
        load_default=20,
        metadata=doc("Deliveries per page (at most 100), newest first.", 20),
    )
