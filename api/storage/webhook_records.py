"""The records of webhooks and their deliveries (migration 0013) that cross the repository
boundary, and the columns of their tables (for :mod:`.convert`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

#: column order of the webhook tables (DDL in migrations/0013_webhooks.sql), parents first
WEBHOOK_COLUMNS: dict[str, tuple[str, ...]] = {
    "webhooks": (
        "id", "stammtisch_id", "url", "kinds", "secret", "active", "description", "created_at",
    ),
    "webhook_deliveries": (
        "id", "webhook_id", "stammtisch_id", "position", "event_index", "payload", "state",
        "attempts", "next_attempt_at", "last_status", "last_error", "last_attempt_at",
        "delivered_at", "created_at", "kind",
    ),
}  # fmt: skip

#: the states of a delivery
PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"


@dataclass(frozen=True, slots=True)
class Webhook:
    """A URL a Stammtisch registered for the event kinds it chose; ``secret`` signs."""

    id: int
    stammtisch_id: int
    url: str
    kinds: tuple[str, ...]
    secret: str
    active: bool
    description: str
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Delivery:
    """One event (the ``event_index``-th of the stored entry at ``position``) or a test ping
    (``position`` None, its body in ``payload``) for one webhook, and how sending it went."""

    id: int
    webhook_id: int
    stammtisch_id: int
    position: int | None
    event_index: int
    payload: dict[str, Any] | None
    state: str
    attempts: int
    next_attempt_at: datetime
    last_status: int | None
    last_error: str | None
    last_attempt_at: datetime | None
    delivered_at: datetime | None
    created_at: datetime
    kind: str  # the event's kind ("ping" for a test)

    @property
    def message_id(self) -> str:
        """The idempotency id the receiver gets (``webhook-id``): the same on every attempt
        and redelivery, never another delivery's."""
        if self.position is None:
            return f"{self.webhook_id}-ping-{self.id}"
        return f"{self.webhook_id}-{self.position}-{self.event_index}"


@dataclass(frozen=True, slots=True)
class Finished:
    """How an attempt to send a delivery went: its new ``state``, when it is due again, the
    receiver's HTTP status and the error (None: none), when it arrived (None: it did not)."""

    state: str
    next_attempt_at: datetime
    status: int | None = None
    error: str | None = None
    delivered_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class Backlog:
    """The due deliveries of the outbox at a moment (for ``/health``): how many, when the
    oldest came due, and when the oldest of a webhook with no attempt in flight came due (it
    waits for the sender, not for its own receiver); None when there is none."""

    due: int
    oldest: datetime | None
    waiting: datetime | None


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A claimed delivery with what sending it needs: where, the secret, and the body's parts
    (the event as stored with its entry, or the ping's payload)."""

    delivery: Delivery
    url: str
    secret: str
    slug: str
    event: dict[str, Any]  # {"kind", "message", "data", "game_id", "seq", "position", ...}


def delivery_of(row: tuple[Any, ...]) -> Delivery:
    """A row of ``webhook_deliveries`` (the columns of :data:`WEBHOOK_COLUMNS`, decoded)."""
    return Delivery(*row)


def event_of(
    delivery: Delivery, game_id: Any, seq: Any, events: list[Any] | None, at: datetime | None
) -> dict[str, Any]:
    """The body's event of a claimed delivery: the stored event with where it stands (the
    ping's payload as it is; {} when the entry is not stored, which fails the delivery)."""
    if delivery.payload is not None:
        return delivery.payload
    if events is None or at is None or delivery.event_index >= len(events):
        return {}
    return {
        **events[delivery.event_index],
        "game_id": game_id,
        "seq": seq,
        "position": delivery.position,
        "recorded_at": at.isoformat(sep="T") + "+00:00",
    }
