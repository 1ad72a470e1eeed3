"""The webhook part of the storage port (:class:`~.repository.Repository` inherits it): the
webhooks a Stammtisch registered, and the outbox of their deliveries (migration 0013).

The outbox is written in the transaction of the game entry whose events it delivers
(:meth:`WebhooksPort.enqueue_deliveries`, called by ``append_events``): a rolled-back write
leaves no delivery, a committed one always has its deliveries. The sender
(:mod:`api.domain.sender`) claims due deliveries (:meth:`WebhooksPort.claim_deliveries`), each
for a lease, at most one attempt per webhook at a time, and records every attempt
(:meth:`WebhooksPort.finish_delivery`); a sender that dies mid-send leaves its claims to come
due again when their lease ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any

from .webhook_records import Backlog, Delivery, Finished, Outgoing, Webhook


class WebhooksPort:
    """Adapters that keep webhooks override every method (the defaults: none kept)."""

    def add_webhook(self, webhook: Webhook) -> Webhook:
        """Store ``webhook`` as a new one (the store gives its id; never one used before)."""
        raise NotImplementedError

    def list_webhooks(self, stammtisch_id: int) -> list[Webhook]:
        raise NotImplementedError

    def get_webhook(self, stammtisch_id: int, webhook_id: int) -> Webhook | None:
        """The webhook, if it belongs to that Stammtisch."""
        raise NotImplementedError

    def update_webhook(self, webhook: Webhook) -> None:
        """Store url, kinds, secret, active and description of ``webhook`` (by its id)."""
        raise NotImplementedError

    def delete_webhook(self, webhook_id: int) -> None:
        """The webhook and every delivery of it."""
        raise NotImplementedError

    def enqueue_deliveries(
        self, stammtisch_id: int, position: int, kinds: Sequence[str], at: datetime
    ) -> int:
        """Inside the caller's transaction: a pending delivery (due at ``at``) for each event
        of the entry stored at ``position`` (``kinds``: the kinds of its events, in order) and
        each active webhook of the Stammtisch that chose that kind; how many."""
        return 0

    def add_ping(self, webhook: Webhook, payload: dict[str, Any], now: datetime) -> Delivery:
        """A pending delivery of ``payload`` (a test ping), due now."""
        raise NotImplementedError

    def list_deliveries(
        self, webhook_id: int, offset: int, limit: int
    ) -> tuple[list[Delivery], int]:
        """One page of the webhook's deliveries, newest first, and their total."""
        raise NotImplementedError

    def get_delivery(self, webhook_id: int, delivery_id: int) -> Delivery | None:
        raise NotImplementedError

    def redeliver(self, delivery_id: int, now: datetime) -> None:
        """The delivery is pending again and due ``now`` (one more attempt, same id)."""
        raise NotImplementedError

    def claim_deliveries(self, now: datetime, lease_until: datetime, limit: int) -> list[Outgoing]:
        """Up to ``limit`` due pending deliveries of active webhooks, at most one per webhook
        and none of a webhook with an attempt in flight (claimed, its outcome not recorded, the
        lease not over), oldest due first, each claimed (its own transaction): attempts + 1,
        last attempt ``now``, due again at ``lease_until`` should no outcome be recorded by
        then, and its webhook busy until then. Several senders never claim one webhook at
        once."""
        raise NotImplementedError

    def finish_delivery(self, delivery_id: int, finished: Finished) -> None:
        """Record the outcome of the attempt just made (its own transaction); its webhook is
        free for the next attempt."""
        raise NotImplementedError

    def delivery_backlog(self, now: datetime) -> Backlog:
        """The due pending deliveries of active webhooks at ``now`` (for ``/health``)."""
        return Backlog(0, None, None)

    def purge_deliveries(self, before: datetime) -> int:
        """Forget the delivered and failed deliveries made before ``before`` (pending ones
        stay); how many."""
        raise NotImplementedError

    def sender_lock(self) -> AbstractContextManager[bool]:
        """Held by the one sender of a database where senders cannot share (SQLite: one per
        file); yields whether it was taken. PostgreSQL's senders share (SKIP LOCKED)."""
        return nullcontext(True)
