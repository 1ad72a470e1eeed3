"""Webhooks and their outbox on SQLite: the port methods of
:class:`~api.storage.webhook_port.WebhooksPort` (migration 0013), mixed into
:class:`~.repository.SQLiteRepository`.

Claims run in a write transaction (``BEGIN IMMEDIATE``: one writer at a time anyway), and one
sender per database file holds :meth:`WebhooksMixin.sender_lock` (a file lock beside it).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from ..webhook_records import (
    WEBHOOK_COLUMNS,
    Backlog,
    Delivery,
    Outgoing,
    Webhook,
    delivery_of,
    event_of,
)
from .locks import file_lock
from .rows import moment, timestamp, to_json

_HOOK = ", ".join(WEBHOOK_COLUMNS["webhooks"])
_DELIVERY = ", ".join(WEBHOOK_COLUMNS["webhook_deliveries"])
_D_DELIVERY = ", ".join(f"d.{c}" for c in WEBHOOK_COLUMNS["webhook_deliveries"])

_ADD = (
    "INSERT INTO webhooks (stammtisch_id, url, kinds, secret, active, description, created_at) "
    f"VALUES (?, ?, ?, ?, 1, ?, ?) RETURNING {_HOOK}"
)
_UPDATE = "UPDATE webhooks SET url = ?, kinds = ?, secret = ?, active = ?, description = ? "
_UPDATE += "WHERE id = ?"
#: the outbox write of an entry: one INSERT … SELECT, nothing read when no webhook is there
_ENQUEUE = """
INSERT INTO webhook_deliveries (webhook_id, stammtisch_id, position, event_index, state,
                                attempts, next_attempt_at, created_at, kind)
SELECT w.id, w.stammtisch_id, :position, e.key, 'pending', 0, :at, :at, e.value
FROM webhooks w JOIN json_each(:kinds) e
WHERE w.stammtisch_id = :stammtisch_id AND w.active
  AND EXISTS (SELECT 1 FROM json_each(w.kinds) k WHERE k.value = e.value)
ORDER BY w.id, e.key
"""
_PING = (
    "INSERT INTO webhook_deliveries (webhook_id, stammtisch_id, position, event_index, payload, "
    "state, attempts, next_attempt_at, created_at, kind) "
    "VALUES (?, ?, NULL, 0, ?, 'pending', 0, ?, ?, 'ping') "
    f"RETURNING {_DELIVERY}"
)
#: the claim: the oldest due delivery of each active webhook with no attempt in flight (its
#: ``busy_until`` unset or past), the least recently served webhook first (never served, then
#: the oldest last claim: a slow receiver that just had its turn goes to the back), at most
#: :limit
_PICK = """
SELECT id, webhook_id FROM (
    SELECT d.id, d.webhook_id, d.next_attempt_at, w.busy_until,
           row_number() OVER (PARTITION BY d.webhook_id ORDER BY d.next_attempt_at, d.id) AS n
    FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
    WHERE d.state = 'pending' AND d.next_attempt_at <= :now AND w.active
      AND (w.busy_until IS NULL OR w.busy_until <= :now))
WHERE n = 1 ORDER BY busy_until IS NOT NULL, busy_until, next_attempt_at, id LIMIT :limit
"""
_BUSY = "UPDATE webhooks SET busy_until = ? WHERE id IN (SELECT value FROM json_each(?))"
_CLAIM = """
UPDATE webhook_deliveries
SET attempts = attempts + 1, last_attempt_at = ?, next_attempt_at = ?
WHERE id IN (SELECT value FROM json_each(?))
"""
_CLAIMED = f"""
SELECT {_D_DELIVERY}, w.url, w.secret, s.slug, e.game_id, e.seq, e.events, e.recorded_at
FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
JOIN stammtische s ON s.id = d.stammtisch_id
LEFT JOIN game_events e ON e.stammtisch_id = d.stammtisch_id AND e.position = d.position
WHERE d.id IN (SELECT value FROM json_each(?)) ORDER BY d.next_attempt_at, d.id
"""  # noqa: S608 - column names only
#: anything due at all (a read, no lock): an idle sender takes no write lock
_ANY_DUE = (
    "SELECT 1 FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id "
    "WHERE d.state = 'pending' AND d.next_attempt_at <= ? AND w.active "
    "AND (w.busy_until IS NULL OR w.busy_until <= ?) LIMIT 1"
)
#: the due deliveries (how many, the oldest due), and the oldest due of a webhook without an
#: attempt in flight (one that waits for the sender, not for its receiver)
_BACKLOG = """
SELECT count(*), min(d.next_attempt_at),
       min(CASE WHEN w.busy_until IS NULL OR w.busy_until <= :now THEN d.next_attempt_at END)
FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
WHERE d.state = 'pending' AND d.next_attempt_at <= :now AND w.active
"""
_PURGE = "DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ?"
_FINISH = (
    "UPDATE webhook_deliveries SET state = ?, next_attempt_at = ?, last_status = ?, "
    "last_error = ?, delivered_at = coalesce(?, delivered_at) WHERE id = ?"
)
#: before its outcome is stored: the webhook of a finished attempt is free for its next one,
#: busy until the attempt's claim (past; it orders the turns of the webhooks), if this attempt
#: still holds it (the lease it was claimed with: a late outcome frees no one else's claim)
_FREE = """
UPDATE webhooks SET busy_until = d.last_attempt_at
FROM (SELECT webhook_id, last_attempt_at, next_attempt_at FROM webhook_deliveries
      WHERE id = ?) d
WHERE webhooks.id = d.webhook_id AND webhooks.busy_until = d.next_attempt_at
"""


def _webhook(row: Sequence[Any]) -> Webhook:
    return Webhook(
        int(row[0]), int(row[1]), str(row[2]), tuple(json.loads(row[3])), str(row[4]),
        bool(row[5]), str(row[6]), datetime.fromisoformat(row[7]),
    )  # fmt: skip


def _delivery(row: Sequence[Any]) -> Delivery:
    values = list(row)
    values[5] = None if values[5] is None else json.loads(values[5])
    for index in (8, 11, 12, 13):
        values[index] = moment(values[index])
    return delivery_of(tuple(values))


class WebhooksMixin:
    """Needs the repository's connection and ``transaction``."""

    _conn: sqlite3.Connection

    def transaction(self) -> Any: ...  # provided by SQLiteRepository

    def add_webhook(
        self,
        stammtisch_id: int,
        url: str,
        kinds: Sequence[str],
        secret: str,
        description: str,
        now: datetime,
    ) -> Webhook:
        params = (stammtisch_id, url, to_json(list(kinds)), secret, description, timestamp(now))
        with self.transaction():
            return _webhook(self._conn.execute(_ADD, params).fetchone())

    def list_webhooks(self, stammtisch_id: int) -> list[Webhook]:
        sql = f"SELECT {_HOOK} FROM webhooks WHERE stammtisch_id = ? ORDER BY id"  # noqa: S608
        return [_webhook(r) for r in self._conn.execute(sql, (stammtisch_id,)).fetchall()]

    def get_webhook(self, stammtisch_id: int, webhook_id: int) -> Webhook | None:
        sql = f"SELECT {_HOOK} FROM webhooks WHERE id = ? AND stammtisch_id = ?"  # noqa: S608
        row = self._conn.execute(sql, (webhook_id, stammtisch_id)).fetchone()
        return None if row is None else _webhook(row)

    def update_webhook(self, webhook: Webhook) -> None:
        w = webhook
        params = (w.url, to_json(list(w.kinds)), w.secret, w.active, w.description, w.id)
        with self.transaction():
            self._conn.execute(_UPDATE, params)

    def delete_webhook(self, webhook_id: int) -> None:
        with self.transaction():
            self._conn.execute("DELETE FROM webhooks WHERE id = ?", (webhook_id,))

    def enqueue_deliveries(
        self, stammtisch_id: int, position: int, kinds: Sequence[str], at: datetime
    ) -> int:
        params = {
            "stammtisch_id": stammtisch_id,
            "position": position,
            "kinds": to_json(list(kinds)),
            "at": timestamp(at),
        }
        return self._conn.execute(_ENQUEUE, params).rowcount

    def add_ping(self, webhook: Webhook, payload: dict[str, Any], now: datetime) -> Delivery:
        at = timestamp(now)
        params = (webhook.id, webhook.stammtisch_id, to_json(payload), at, at)
        with self.transaction():
            return _delivery(self._conn.execute(_PING, params).fetchone())

    def list_deliveries(
        self, webhook_id: int, offset: int, limit: int
    ) -> tuple[list[Delivery], int]:
        sql = (
            f"SELECT {_DELIVERY} FROM webhook_deliveries WHERE webhook_id = ? "  # noqa: S608
            "ORDER BY id DESC LIMIT ? OFFSET ?"
        )
        count = "SELECT count(*) FROM webhook_deliveries WHERE webhook_id = ?"
        with self.reading():
            rows = self._conn.execute(sql, (webhook_id, limit, offset)).fetchall()
            (total,) = self._conn.execute(count, (webhook_id,)).fetchone()
        return [_delivery(r) for r in rows], int(total)

    def reading(self) -> Any: ...  # provided by SQLiteRepository

    def get_delivery(self, webhook_id: int, delivery_id: int) -> Delivery | None:
        sql = f"SELECT {_DELIVERY} FROM webhook_deliveries WHERE id = ? AND webhook_id = ?"  # noqa: S608
        row = self._conn.execute(sql, (delivery_id, webhook_id)).fetchone()
        return None if row is None else _delivery(row)

    def redeliver(self, delivery_id: int, now: datetime) -> None:
        sql = "UPDATE webhook_deliveries SET state = 'pending', next_attempt_at = ? WHERE id = ?"
        with self.transaction():
            self._conn.execute(sql, (timestamp(now), delivery_id))

    def claim_deliveries(self, now: datetime, lease_until: datetime, limit: int) -> list[Outgoing]:
        at, lease = timestamp(now), timestamp(lease_until)
        if self._conn.execute(_ANY_DUE, (at, at)).fetchone() is None:
            return []
        with self.transaction():
            picked = self._conn.execute(_PICK, {"now": at, "limit": limit}).fetchall()
            if not picked:
                return []
            ids, hooks = to_json([r[0] for r in picked]), to_json([r[1] for r in picked])
            self._conn.execute(_BUSY, (lease, hooks))
            self._conn.execute(_CLAIM, (at, lease, ids))
            rows = self._conn.execute(_CLAIMED, (ids,)).fetchall()
        claimed = []
        for row in rows:
            delivery = _delivery(row[:15])
            url, secret, slug, game_id, seq, events, at = row[15:]
            found = None if events is None else json.loads(events)
            event = event_of(delivery, game_id, seq, found, moment(at))
            claimed.append(Outgoing(delivery, str(url), str(secret), str(slug), event))
        return claimed

    def delivery_backlog(self, now: datetime) -> Backlog:
        with self.reading():
            count, oldest, waiting = self._conn.execute(
                _BACKLOG, {"now": timestamp(now)}
            ).fetchone()
        return Backlog(int(count), moment(oldest), moment(waiting))

    def finish_delivery(
        self,
        delivery_id: int,
        state: str,
        next_attempt_at: datetime,
        status: int | None,
        error: str | None,
        delivered_at: datetime | None,
    ) -> None:
        done = None if delivered_at is None else timestamp(delivered_at)
        params = (state, timestamp(next_attempt_at), status, error, done, delivery_id)
        with self.transaction():
            self._conn.execute(_FREE, (delivery_id,))
            self._conn.execute(_FINISH, params)

    def purge_deliveries(self, before: datetime) -> int:
        with self.transaction():
            return self._conn.execute(_PURGE, (timestamp(before),)).rowcount

    @contextmanager
    def sender_lock(self) -> Iterator[bool]:
        """One sender per database file: an exclusive flock of ``<file>.webhooks-lock``
        (given up at once when another sender holds it)."""
        path = self._conn.execute("PRAGMA database_list").fetchone()[2]
        if not path:
            yield True
            return
        with file_lock(f"{path}.webhooks-lock", False) as taken:
            yield taken
