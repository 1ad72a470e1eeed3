"""Webhooks and their outbox on PostgreSQL: the port methods of
:class:`~api.storage.webhook_port.WebhooksPort` (migration 0013), mixed into
:class:`~.repository.PostgresRepository`, as :mod:`api.storage.sqlite.webhooks` does on SQLite.

Senders on several servers share the outbox: a claim locks the rows of the webhooks it takes
with ``FOR UPDATE SKIP LOCKED`` (two claims at one moment never take the same webhook, nor wait
for each other), marks them busy and moves one due delivery of each past its lease, in its own
short transaction: at most one attempt per webhook is in flight across every sender.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from ..sqlite.rows import to_json
from ..webhook_records import (
    WEBHOOK_COLUMNS,
    Backlog,
    Delivery,
    Outgoing,
    Webhook,
    delivery_of,
    event_of,
)
from .rows import naive

_HOOK = ", ".join(WEBHOOK_COLUMNS["webhooks"])
_DELIVERY = ", ".join(WEBHOOK_COLUMNS["webhook_deliveries"])
_D_DELIVERY = ", ".join(f"d.{c}" for c in WEBHOOK_COLUMNS["webhook_deliveries"])

_ADD = (
    "INSERT INTO webhooks (stammtisch_id, url, kinds, secret, active, description, created_at) "
    f"VALUES (%s, %s, %s, %s, true, %s, %s) RETURNING {_HOOK}"
)
_UPDATE = (
    "UPDATE webhooks SET url = %s, kinds = %s, secret = %s, active = %s, description = %s "
    "WHERE id = %s"
)
#: the outbox write of an entry: one INSERT … SELECT, nothing read when no webhook is there
_ENQUEUE = """
INSERT INTO webhook_deliveries (webhook_id, stammtisch_id, position, event_index, state,
                                attempts, next_attempt_at, created_at, kind)
SELECT w.id, w.stammtisch_id, %(position)s, e.ord - 1, 'pending', 0, %(at)s, %(at)s, e.kind
FROM webhooks w, jsonb_array_elements_text(%(kinds)s::jsonb) WITH ORDINALITY AS e(kind, ord)
WHERE w.stammtisch_id = %(stammtisch_id)s AND w.active AND jsonb_exists(w.kinds, e.kind)
ORDER BY w.id, e.ord
"""
#: the notification of a new entry (api/storage/postgres/events.py) and its outbox write, one
#: statement (a data-modifying WITH runs whether read or not); parameters: channel, note, st,
#: position, kinds (a JSON list of the entry's event kinds), at
NOTIFY_AND_ENQUEUE = """
WITH outbox AS (
    INSERT INTO webhook_deliveries (webhook_id, stammtisch_id, position, event_index, state,
                                    attempts, next_attempt_at, created_at, kind)
    SELECT w.id, w.stammtisch_id, %(position)s, e.ord - 1, 'pending', 0, %(at)s, %(at)s, e.kind
    FROM webhooks w, jsonb_array_elements_text(%(kinds)s::jsonb) WITH ORDINALITY AS e(kind, ord)
    WHERE w.stammtisch_id = %(st)s AND w.active AND jsonb_exists(w.kinds, e.kind)
    ORDER BY w.id, e.ord
)
SELECT pg_notify(%(channel)s, %(note)s)
"""
_PING = (
    "INSERT INTO webhook_deliveries (webhook_id, stammtisch_id, position, event_index, payload, "
    "state, attempts, next_attempt_at, created_at, kind) "
    "VALUES (%s, %s, NULL, 0, %s, 'pending', 0, %s, %s, 'ping') "
    f"RETURNING {_DELIVERY}"
)
#: the claim: the oldest due delivery of each active webhook with no attempt in flight, the
#: least recently served webhook first (never, then the oldest last claim); their rows locked (SKIP LOCKED: a webhook another sender is claiming
#: right now is left to it) and marked busy until the lease ends
_CLAIM = f"""
WITH free AS (
    SELECT w.id FROM webhooks w
    JOIN (SELECT d.webhook_id, min(d.next_attempt_at) AS due FROM webhook_deliveries d
          WHERE d.state = 'pending' AND d.next_attempt_at <= %(now)s
          GROUP BY d.webhook_id) q ON q.webhook_id = w.id
    WHERE w.active AND (w.busy_until IS NULL OR w.busy_until <= %(now)s)
    ORDER BY w.busy_until NULLS FIRST, q.due, w.id LIMIT %(limit)s
    FOR UPDATE OF w SKIP LOCKED
), busy AS (
    UPDATE webhooks w SET busy_until = %(lease)s FROM free WHERE w.id = free.id
), pick AS (
    SELECT DISTINCT ON (d.webhook_id) d.id
    FROM webhook_deliveries d JOIN free ON free.id = d.webhook_id
    WHERE d.state = 'pending' AND d.next_attempt_at <= %(now)s
    ORDER BY d.webhook_id, d.next_attempt_at, d.id
), claimed AS (
    UPDATE webhook_deliveries d
    SET attempts = d.attempts + 1, last_attempt_at = %(now)s, next_attempt_at = %(lease)s
    FROM pick WHERE d.id = pick.id
    RETURNING {_D_DELIVERY}
)
SELECT d.*, w.url, w.secret, s.slug, e.game_id, e.seq, e.events, e.recorded_at
FROM claimed d JOIN webhooks w ON w.id = d.webhook_id
JOIN stammtische s ON s.id = d.stammtisch_id
LEFT JOIN game_events e ON e.stammtisch_id = d.stammtisch_id AND e.position = d.position
ORDER BY d.next_attempt_at, d.id
"""  # noqa: S608 - column names only
#: the due deliveries (how many, the oldest due), and the oldest due of a webhook without an
#: attempt in flight (one that waits for the sender, not for its receiver)
_BACKLOG = """
SELECT count(*), min(d.next_attempt_at),
       min(CASE WHEN w.busy_until IS NULL OR w.busy_until <= %(now)s THEN d.next_attempt_at END)
FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
WHERE d.state = 'pending' AND d.next_attempt_at <= %(now)s AND w.active
"""
_PURGE = "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created_at < %s"
_FINISH = (
    "UPDATE webhook_deliveries SET state = %s, next_attempt_at = %s, last_status = %s, "
    "last_error = %s, delivered_at = coalesce(%s, delivered_at) WHERE id = %s"
)
#: before its outcome is stored: the webhook of a finished attempt is free for its next one,
#: busy until the attempt's claim (past; it orders the turns of the webhooks), if this attempt
#: still holds it (the lease it was claimed with: a late outcome frees no one else's claim)
_FREE = """
UPDATE webhooks w SET busy_until = d.last_attempt_at
FROM webhook_deliveries d
WHERE d.id = %s AND w.id = d.webhook_id AND w.busy_until = d.next_attempt_at
"""


def _webhook(row: Sequence[Any]) -> Webhook:
    return Webhook(
        int(row[0]), int(row[1]), str(row[2]), tuple(row[3]), str(row[4]), bool(row[5]),
        str(row[6]), row[7],
    )  # fmt: skip


def _delivery(row: Sequence[Any]) -> Delivery:
    return delivery_of(tuple(row))


class WebhooksMixin:
    """Needs the repository's ``_sql``, ``transaction`` and ``reading``."""

    def _sql(self, sql: str, params: Any = None) -> Any: ...  # provided by PostgresRepository

    def transaction(self) -> Any: ...  # provided by PostgresRepository

    def reading(self) -> Any: ...  # provided by PostgresRepository

    def add_webhook(
        self,
        stammtisch_id: int,
        url: str,
        kinds: Sequence[str],
        secret: str,
        description: str,
        now: datetime,
    ) -> Webhook:
        params = (stammtisch_id, url, to_json(list(kinds)), secret, description, naive(now))
        with self.transaction():
            return _webhook(self._sql(_ADD, params).fetchone())

    def list_webhooks(self, stammtisch_id: int) -> list[Webhook]:
        sql = f"SELECT {_HOOK} FROM webhooks WHERE stammtisch_id = %s ORDER BY id"  # noqa: S608
        return [_webhook(r) for r in self._sql(sql, (stammtisch_id,)).fetchall()]

    def get_webhook(self, stammtisch_id: int, webhook_id: int) -> Webhook | None:
        sql = f"SELECT {_HOOK} FROM webhooks WHERE id = %s AND stammtisch_id = %s"  # noqa: S608
        row = self._sql(sql, (webhook_id, stammtisch_id)).fetchone()
        return None if row is None else _webhook(row)

    def update_webhook(self, webhook: Webhook) -> None:
        w = webhook
        params = (w.url, to_json(list(w.kinds)), w.secret, w.active, w.description, w.id)
        with self.transaction():
            self._sql(_UPDATE, params)

    def delete_webhook(self, webhook_id: int) -> None:
        with self.transaction():
            self._sql("DELETE FROM webhooks WHERE id = %s", (webhook_id,))

    def enqueue_deliveries(
        self, stammtisch_id: int, position: int, kinds: Sequence[str], at: datetime
    ) -> int:
        params = {
            "stammtisch_id": stammtisch_id,
            "position": position,
            "kinds": to_json(list(kinds)),
            "at": naive(at),
        }
        return int(self._sql(_ENQUEUE, params).rowcount)

    def add_ping(self, webhook: Webhook, payload: dict[str, Any], now: datetime) -> Delivery:
        at = naive(now)
        params = (webhook.id, webhook.stammtisch_id, to_json(payload), at, at)
        with self.transaction():
            return _delivery(self._sql(_PING, params).fetchone())

    def list_deliveries(
        self, webhook_id: int, offset: int, limit: int
    ) -> tuple[list[Delivery], int]:
        sql = (
            f"SELECT {_DELIVERY} FROM webhook_deliveries WHERE webhook_id = %s "  # noqa: S608
            "ORDER BY id DESC LIMIT %s OFFSET %s"
        )
        count = "SELECT count(*) FROM webhook_deliveries WHERE webhook_id = %s"
        with self.reading():
            rows = self._sql(sql, (webhook_id, limit, offset)).fetchall()
            (total,) = self._sql(count, (webhook_id,)).fetchone()
        return [_delivery(r) for r in rows], int(total)

    def get_delivery(self, webhook_id: int, delivery_id: int) -> Delivery | None:
        sql = f"SELECT {_DELIVERY} FROM webhook_deliveries WHERE id = %s AND webhook_id = %s"  # noqa: S608
        row = self._sql(sql, (delivery_id, webhook_id)).fetchone()
        return None if row is None else _delivery(row)

    def redeliver(self, delivery_id: int, now: datetime) -> None:
        sql = "UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = %s WHERE id = %s"
        with self.transaction():
            self._sql(sql, (naive(now), delivery_id))

    def claim_deliveries(self, now: datetime, lease_until: datetime, limit: int) -> list[Outgoing]:
        params = {"now": naive(now), "lease": naive(lease_until), "limit": limit}
        with self.transaction():
            rows = self._sql(_CLAIM, params).fetchall()
        claimed = []
        for row in rows:
            delivery = _delivery(row[:15])
            url, secret, slug, game_id, seq, events, at = row[15:]
            event = event_of(delivery, game_id, seq, events, at)
            claimed.append(Outgoing(delivery, str(url), str(secret), str(slug), event))
        return claimed

    def delivery_backlog(self, now: datetime) -> Backlog:
        with self.reading():
            count, oldest, waiting = self._sql(_BACKLOG, {"now": naive(now)}).fetchone()
        return Backlog(int(count), oldest, waiting)

    def finish_delivery(
        self,
        delivery_id: int,
        state: str,
        next_attempt_at: datetime,
        status: int | None,
        error: str | None,
        delivered_at: datetime | None,
    ) -> None:
        done = None if delivered_at is None else naive(delivered_at)
        params = (state, naive(next_attempt_at), status, error, done, delivery_id)
        with self.transaction():
            self._sql(_FREE, (delivery_id,))
            self._sql(_FINISH, params)

    def purge_deliveries(self, before: datetime) -> int:
        with self.transaction():
            return int(self._sql(_PURGE, (naive(before),)).rowcount)
