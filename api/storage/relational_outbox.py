"""The relational adapter's outbox: the event rows read back, webhooks and their deliveries
(migrations 0012, 0013), written once for SQLite and PostgreSQL; each store claims its own way
(``claim_deliveries``: SQLite under its write lock, PostgreSQL with SKIP LOCKED)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from .records import StoredEvents
from .relational_tables import TableMethods
from .statements import doc, moment, to_json
from .webhook_records import Backlog, Delivery, Finished, Outgoing, Webhook, delivery_of, event_of


def _webhook(row: Sequence[Any]) -> Webhook:
    return Webhook(
        int(row[0]), int(row[1]), str(row[2]), tuple(doc(row[3])), str(row[4]), bool(row[5]),
        str(row[6]), moment(row[7]),
    )  # fmt: skip


def _delivery(row: Sequence[Any]) -> Delivery:
    values = list(row)
    values[5] = doc(values[5])
    for index in (8, 11, 12, 13):
        values[index] = moment(values[index])
    return delivery_of(tuple(values))


def outgoing(rows: Iterable[Sequence[Any]]) -> list[Outgoing]:
    """Claimed deliveries (their columns, then url, secret, slug and the entry's game, seq,
    events and time) as the sender's :class:`Outgoing`."""
    claimed = []
    for row in rows:
        delivery = _delivery(row[:15])
        url, secret, slug, game_id, seq, events, at = row[15:]
        event = event_of(delivery, game_id, seq, doc(events), moment(at))
        claimed.append(Outgoing(delivery, str(url), str(secret), str(slug), event))
    return claimed


def stored_events(row: Sequence[Any]) -> StoredEvents:
    return StoredEvents(
        int(row[0]), int(row[1]), int(row[2]), int(row[3]), doc(row[4]), moment(row[5])
    )  # fmt: skip


class RelationalRepository(TableMethods):
    """The repository of a SQL store (:mod:`.relational`); each store's subclass names its
    dialect's parts."""

    def stammtisch_events(self, stammtisch_id: int, after: int, limit: int) -> list[StoredEvents]:
        params = {"id": stammtisch_id, "after": after, "limit": limit}
        return [stored_events(row) for row in self._all("stammtisch_events", params)]

    def game_events(self, game_id: int, after: int, limit: int) -> list[StoredEvents]:
        params = {"id": game_id, "after": after, "limit": limit}
        return [stored_events(row) for row in self._all("game_events", params)]

    def last_event_position(self, stammtisch_id: int) -> int:
        row = self._one("last_position", {"id": stammtisch_id})
        return int(row[0]) if row else 0

    # webhooks and their outbox
    def add_webhook(self, webhook: Webhook) -> Webhook:
        w = webhook
        params = {"st": w.stammtisch_id, "url": w.url, "kinds": to_json(list(w.kinds)),
                  "secret": w.secret, "active": w.active, "description": w.description,
                  "at": self._time(w.created_at)}  # fmt: skip
        with self.transaction():
            return _webhook(self._one("add_webhook", params))

    def list_webhooks(self, stammtisch_id: int) -> list[Webhook]:
        return [_webhook(r) for r in self._all("list_webhooks", {"st": stammtisch_id})]

    def get_webhook(self, stammtisch_id: int, webhook_id: int) -> Webhook | None:
        row = self._one("get_webhook", {"id": webhook_id, "st": stammtisch_id})
        return None if row is None else _webhook(row)

    def update_webhook(self, webhook: Webhook) -> None:
        w = webhook
        params = {"url": w.url, "kinds": to_json(list(w.kinds)), "secret": w.secret,
                  "active": w.active, "description": w.description, "id": w.id}  # fmt: skip
        with self.transaction():
            self._x("update_webhook", params)

    def delete_webhook(self, webhook_id: int) -> None:
        with self.transaction():
            self._x("delete_webhook", {"id": webhook_id})

    def add_ping(self, webhook: Webhook, payload: dict[str, Any], now: datetime) -> Delivery:
        params = {"id": webhook.id, "st": webhook.stammtisch_id, "payload": to_json(payload),
                  "at": self._time(now)}  # fmt: skip
        with self.transaction():
            return _delivery(self._one("add_ping", params))

    def list_deliveries(
        self, webhook_id: int, offset: int, limit: int
    ) -> tuple[list[Delivery], int]:
        with self.reading():
            rows = self._all("deliveries", {"id": webhook_id, "limit": limit, "offset": offset})
            (total,) = self._one("count_deliveries", {"id": webhook_id})
        return [_delivery(r) for r in rows], int(total)

    def get_delivery(self, webhook_id: int, delivery_id: int) -> Delivery | None:
        row = self._one("get_delivery", {"id": delivery_id, "webhook": webhook_id})
        return None if row is None else _delivery(row)

    def redeliver(self, delivery_id: int, now: datetime) -> None:
        with self.transaction():
            self._x("redeliver", {"at": self._time(now), "id": delivery_id})

    def delivery_backlog(self, now: datetime) -> Backlog:
        with self.reading():
            count, oldest, waiting = self._one("backlog", {"now": self._time(now)})
        return Backlog(int(count), moment(oldest), moment(waiting))

    def finish_delivery(self, delivery_id: int, finished: Finished) -> None:
        a, done = finished, finished.delivered_at
        params = {"state": a.state, "next": self._time(a.next_attempt_at), "status": a.status,
                  "error": a.error, "id": delivery_id,
                  "delivered": None if done is None else self._time(done)}  # fmt: skip
        with self.transaction():
            self._x("free", {"id": delivery_id})
            self._x("finish", params)

    def purge_deliveries(self, before: datetime) -> int:
        with self.transaction():
            return int(self._x("purge_deliveries", {"before": self._time(before)}).rowcount)
