"""Webhooks of a Stammtisch: register, list, read, change, delete, rotate the secret, the
delivery log, redeliver, ping. Every operation needs the Stammtisch's token."""

from __future__ import annotations

from typing import Any

from flask import g
from flask.views import MethodView

from schemas.webhooks import (
    DeliveryListQuerySchema,
    DeliveryListSchema,
    DeliverySchema,
    WebhookCreatedSchema,
    WebhookCreateSchema,
    WebhookSchema,
    WebhookUpdateSchema,
)

from ..domain.sender import SCHEDULE, TIMEOUT
from ..http.context import services
from ..storage.webhook_records import Delivery, Webhook
from .access import STAMMTISCH, blueprint, writes


def _schedule() -> str:
    def span(seconds: int) -> str:
        return f"{seconds // 3600} h" if seconds >= 3600 else (
            f"{seconds // 60} min" if seconds >= 60 else f"{seconds} s")  # fmt: skip

    return ", ".join(span(s) for s in SCHEDULE)


WEBHOOKS = f"""Webhooks: the server POSTs the events of a Stammtisch's games to URLs it \
registered, one event per request, for the event kinds each chose (`game_started`, \
`game_lost`, ...).

**Transactional outbox.** A delivery is stored in the same transaction as the game entry whose \
event it carries: a refused write delivers nothing, an `undone` entry delivers `undone`. A \
sender process beside the server sends them; no receiver can slow down or fail a write.

**Body** (`Content-Type: application/json`): the event as the event stream sends it, \
`{{"kind", "message", "data", "game_id", "seq", "position", "recorded_at", "stammtisch"}}` \
(`message` a German sentence, `data` the event's fields, `stammtisch` the slug). A test \
ping: `{{"kind": "ping", "message", "data": {{"webhook_id"}}, "stammtisch"}}`.

**Signature** (Standard Webhooks, https://www.standardwebhooks.com): headers `webhook-id` \
(the idempotency id: the same on every attempt and redelivery, dedupe by it), \
`webhook-timestamp` (Unix seconds of this attempt) and `webhook-signature: v1,<base64>`, the \
HMAC-SHA256 with the key `base64decode(secret without "whsec_")` over \
`<webhook-id>.<webhook-timestamp>.<raw body>`. To verify: compute it over the raw body as \
received, compare in constant time with each `v1,` value of the header (space-separated; \
several after a rotation is possible), and reject a timestamp more than 5 minutes from your \
clock (the replay window). Standard Webhooks' libraries (`standardwebhooks` for Python, \
JavaScript, Go, ...) do exactly this.

**Targets.** `https://` to a public address or name. IP literals outside the public ranges \
(private, loopback, link-local, metadata, unique-local, in any spelling) are refused at \
registration and change; this machine's loopback (`http://localhost`, 127.0.0.0/8, [::1]) only \
where the server allows it (`WEBHOOK_LOOPBACK`: by default on the embedded SQLite store, not \
when hosted on PostgreSQL). The sender resolves a name when it connects and refuses it if any \
of its addresses is not public (the delivery log says so); it connects to the address it \
checked.

**Sending.** At most one attempt per webhook is in flight at a time (in order of the events), \
each with a hard deadline of {TIMEOUT:g} s for connecting, sending and the answer's head; a \
slow receiver delays only its own deliveries. The log keeps the answer's status and a fixed \
reason, never its body.

**Retries.** A 2xx answer within {TIMEOUT:g} s delivers. Anything else (a timeout, a refused \
connection, a 4xx/5xx, a 3xx: redirects are not followed) is retried after {_schedule()} \
(each ± 10 %), then the delivery is marked `failed` (about 8.6 hours after the event: a \
receiver down for an hour still gets everything). Order is not guaranteed across retries: \
`position` and `seq` tell. The delivery log shows every delivery's state, attempts and last \
answer (delivered and failed ones for 30 days); `redeliver` makes one more attempt now with \
the same `webhook-id`. A paused webhook (`active: false`) gets no deliveries for new events; \
those already pending wait until it is resumed. Rotating the Stammtisch's key pauses every \
webhook (resume them with the new key)."""

blp = blueprint(__name__, f"{STAMMTISCH}/webhooks", WEBHOOKS)


@blp.route("")
class Webhooks(MethodView):
    @writes(blp, "listWebhooks")
    @blp.response(200, WebhookSchema(many=True))
    def get(self, slug: str) -> list[Webhook]:
        """List the webhooks (without their secrets)"""
        return services().webhooks(g.stammtisch)

    @writes(blp, "addWebhook", 409)
    @blp.arguments(WebhookCreateSchema)
    @blp.response(201, WebhookCreatedSchema)
    def post(self, data: dict[str, Any], slug: str) -> Webhook:
        """Register a webhook (the answer holds its signing secret, shown only now)"""
        return services().add_webhook(g.stammtisch, data)


@blp.route("/<id:webhook_id>")
class WebhookItem(MethodView):
    @writes(blp, "getWebhook")
    @blp.response(200, WebhookSchema)
    def get(self, slug: str, webhook_id: int) -> Webhook:
        """Read a webhook"""
        return services().webhook(g.stammtisch, webhook_id)

    @writes(blp, "updateWebhook")
    @blp.arguments(WebhookUpdateSchema)
    @blp.response(200, WebhookSchema)
    def patch(self, data: dict[str, Any], slug: str, webhook_id: int) -> Webhook:
        """Change URL, kinds, note, or pause / resume"""
        return services().update_webhook(g.stammtisch, webhook_id, data)

    @writes(blp, "deleteWebhook")
    @blp.response(204)
    def delete(self, slug: str, webhook_id: int) -> None:
        """Delete a webhook and its delivery log"""
        services().delete_webhook(g.stammtisch, webhook_id)


@blp.route("/<id:webhook_id>/secret")
class WebhookSecret(MethodView):
    @writes(blp, "rotateWebhookSecret")
    @blp.response(200, WebhookCreatedSchema)
    def post(self, slug: str, webhook_id: int) -> Webhook:
        """Rotate the signing secret: a new one, shown only now, signs every delivery from now"""
        return services().rotate_secret(g.stammtisch, webhook_id)


@blp.route("/<id:webhook_id>/ping")
class WebhookPing(MethodView):
    @writes(blp, "pingWebhook")
    @blp.response(202, DeliverySchema)
    def post(self, slug: str, webhook_id: int) -> Delivery:
        """Send a test event (kind `ping`) now; its delivery shows in the log"""
        return services().ping(g.stammtisch, webhook_id)


@blp.route("/<id:webhook_id>/deliveries")
class Deliveries(MethodView):
    @writes(blp, "listWebhookDeliveries")
    @blp.arguments(DeliveryListQuerySchema, location="query")
    @blp.response(200, DeliveryListSchema)
    def get(self, query: dict[str, Any], slug: str, webhook_id: int) -> dict[str, Any]:
        """The delivery log, newest first: state, attempts, last answer"""
        page, size = query["page"], query["page_size"]
        items, total = services().deliveries(g.stammtisch, webhook_id, page, size)
        return {"items": items, "total": total, "page": page, "page_size": size}


@blp.route("/<id:webhook_id>/deliveries/<id:delivery_id>/redeliver")
class Redeliver(MethodView):
    @writes(blp, "redeliverWebhookDelivery")
    @blp.response(202, DeliverySchema)
    def post(self, slug: str, webhook_id: int, delivery_id: int) -> Delivery:
        """Deliver again: one more attempt now, with the same `webhook-id`"""
        return services().redeliver(g.stammtisch, webhook_id, delivery_id)
