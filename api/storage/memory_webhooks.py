"""Webhooks and their outbox in the in-memory fake (:class:`~.memory.MemoryRepository`), as the
SQL adapters keep them (:mod:`.sqlite.webhooks`): same records, same order, same claims."""

from __future__ import annotations

import copy
import threading
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from .records import Stammtisch
from .webhook_records import PENDING, Backlog, Delivery, Finished, Outgoing, Webhook, event_of


class MemoryWebhooksMixin:
    """Needs the fake's lock, ``transaction``, its Stammtische and the stored events of its
    entries (``events``)."""

    _lock: threading.RLock
    stammtische: dict[str, Stammtisch]
    webhooks: dict[int, Webhook]
    deliveries: dict[int, Delivery]
    busy: dict[int, datetime]

    def transaction(self) -> Any: ...  # provided by MemoryRepository

    def _stored_event(self, stammtisch_id: int, position: int) -> Any:
        """(game_id, seq, events, recorded_at) of a stored entry; None if there is none."""
        for row in getattr(self, "events", ()):
            if (row.stammtisch_id, row.position) == (stammtisch_id, position):
                return row.game_id, row.seq, row.events, row.recorded_at
        return None

    def add_webhook(self, webhook: Webhook) -> Webhook:
        with self.transaction():
            webhook_id = max(max(self.webhooks, default=0), getattr(self, "_hook_ids", 0)) + 1
            self._hook_ids = webhook_id  # never used twice, as AUTOINCREMENT
            hook = replace(webhook, id=webhook_id, kinds=tuple(webhook.kinds))
            self.webhooks[webhook_id] = hook
            return hook

    def list_webhooks(self, stammtisch_id: int) -> list[Webhook]:
        return [w for _, w in sorted(self.webhooks.items()) if w.stammtisch_id == stammtisch_id]

    def get_webhook(self, stammtisch_id: int, webhook_id: int) -> Webhook | None:
        hook = self.webhooks.get(webhook_id)
        return hook if hook is not None and hook.stammtisch_id == stammtisch_id else None

    def update_webhook(self, webhook: Webhook) -> None:
        with self.transaction():
            if webhook.id in self.webhooks:  # deleted meanwhile: not brought back
                self.webhooks[webhook.id] = webhook

    def delete_webhook(self, webhook_id: int) -> None:
        with self.transaction():
            self.webhooks.pop(webhook_id, None)
            for key in [k for k, d in self.deliveries.items() if d.webhook_id == webhook_id]:
                del self.deliveries[key]

    def _new_delivery(
        self, hook: Webhook, position: int | None, index: int, payload: Any, at: datetime,
        kind: str,
    ) -> Delivery:  # fmt: skip
        delivery_id = max(max(self.deliveries, default=0), getattr(self, "_delivery_ids", 0)) + 1
        self._delivery_ids = delivery_id  # never used twice, as AUTOINCREMENT
        made = Delivery(delivery_id, hook.id, hook.stammtisch_id, position, index, payload,
                        PENDING, 0, at, None, None, None, None, at, kind)  # fmt: skip
        self.deliveries[delivery_id] = made
        return made

    def enqueue_deliveries(
        self, stammtisch_id: int, position: int, kinds: Sequence[str], at: datetime
    ) -> int:
        made = 0
        with self._lock:
            for hook in self.list_webhooks(stammtisch_id):
                for index, kind in enumerate(kinds):
                    if hook.active and kind in hook.kinds:
                        self._new_delivery(hook, position, index, None, at, kind)
                        made += 1
        return made

    def add_ping(self, webhook: Webhook, payload: dict[str, Any], now: datetime) -> Delivery:
        with self.transaction():
            return self._new_delivery(webhook, None, 0, dict(payload), now, "ping")

    def list_deliveries(
        self, webhook_id: int, offset: int, limit: int
    ) -> tuple[list[Delivery], int]:
        with self._lock:
            found = [d for _, d in sorted(self.deliveries.items(), reverse=True)
                     if d.webhook_id == webhook_id]  # fmt: skip
        return copy.deepcopy(found[offset : offset + limit]), len(found)

    def get_delivery(self, webhook_id: int, delivery_id: int) -> Delivery | None:
        found = self.deliveries.get(delivery_id)
        return (
            copy.deepcopy(found) if found is not None and found.webhook_id == webhook_id else None
        )

    def redeliver(self, delivery_id: int, now: datetime) -> None:
        with self.transaction():
            found = self.deliveries.get(delivery_id)
            if found is not None:  # deleted with its webhook meanwhile: nothing to send
                self.deliveries[delivery_id] = replace(found, state=PENDING, next_attempt_at=now)

    def claim_deliveries(self, now: datetime, lease_until: datetime, limit: int) -> list[Outgoing]:
        slugs = {s.id: s.slug for s in self.stammtische.values()}
        busy = self.busy
        with self.transaction():
            first: dict[int, Delivery] = {}
            for d in sorted(self._due(now), key=lambda d: (d.next_attempt_at, d.id)):
                if busy.get(d.webhook_id, now) <= now:
                    first.setdefault(d.webhook_id, d)

            def turn(d: Delivery) -> tuple[Any, ...]:  # least recently served first
                last = busy.get(d.webhook_id)
                return (last is not None, last or now, d.next_attempt_at, d.id)

            claimed = []
            for d in sorted(first.values(), key=turn)[:limit]:
                d = replace(d, attempts=d.attempts + 1, last_attempt_at=now,
                            next_attempt_at=lease_until)  # fmt: skip
                self.deliveries[d.id] = d
                busy[d.webhook_id] = lease_until
                hook = self.webhooks[d.webhook_id]
                stored = None if d.position is None else self._stored_event(d.stammtisch_id,
                                                                            d.position)  # fmt: skip
                event = event_of(d, *(stored or (None, None, None, None)))
                claimed.append(Outgoing(d, hook.url, hook.secret, slugs[d.stammtisch_id], event))
            return claimed

    def _due(self, now: datetime) -> list[Delivery]:
        return [d for d in self.deliveries.values()
                if d.state == PENDING and d.next_attempt_at <= now
                and self.webhooks[d.webhook_id].active]  # fmt: skip

    def delivery_backlog(self, now: datetime) -> Backlog:
        busy = self.busy
        with self._lock:
            due = self._due(now)
        waiting = [d.next_attempt_at for d in due if busy.get(d.webhook_id, now) <= now]
        return Backlog(len(due), min((d.next_attempt_at for d in due), default=None),
                       min(waiting, default=None))  # fmt: skip

    def finish_delivery(self, delivery_id: int, finished: Finished) -> None:
        with self.transaction():
            found = self.deliveries.get(delivery_id)
            if found is not None:
                held = self.busy.get(found.webhook_id) == found.next_attempt_at  # its lease
                if held and found.last_attempt_at is not None:  # busy until its claim: past
                    self.busy[found.webhook_id] = found.last_attempt_at
                self.deliveries[delivery_id] = replace(
                    found, state=finished.state, next_attempt_at=finished.next_attempt_at,
                    last_status=finished.status, last_error=finished.error,
                    delivered_at=finished.delivered_at or found.delivered_at,
                )  # fmt: skip

    def purge_deliveries(self, before: datetime) -> int:
        with self.transaction():
            gone = [k for k, d in self.deliveries.items()
                    if d.state != PENDING and d.created_at < before]  # fmt: skip
            for key in gone:
                del self.deliveries[key]
            return len(gone)
