"""The outbox of domain events on SQLite: the port methods of
:class:`~api.storage.repository.Repository` for ``game_events`` (migration 0012), mixed into
:class:`~.repository.SQLiteRepository`. A row is written in the write's own transaction; its
position is the Stammtisch's next one (``event_positions``, an upsert). One writer at a time
means the rowid grows in commit order: :meth:`EventsMixin.events_since_rowid` is a cursor over
every Stammtisch for the event streams' pollers."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from ..records import StoredEvents
from .rows import timestamp, to_json

_NEXT = (
    "INSERT INTO event_positions (stammtisch_id, position) VALUES (?, 1) "
    "ON CONFLICT (stammtisch_id) DO UPDATE SET position = event_positions.position + 1 "
    "RETURNING position"
)
_ADD = (
    "INSERT INTO game_events (stammtisch_id, position, game_id, seq, events, recorded_at) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
_COLUMNS = "stammtisch_id, position, game_id, seq, events, recorded_at"
_BY_STAMMTISCH = (
    f"SELECT {_COLUMNS} FROM game_events WHERE stammtisch_id = ? AND position > ? "  # noqa: S608
    "ORDER BY position LIMIT ?"
)
_BY_GAME = (
    f"SELECT {_COLUMNS} FROM game_events WHERE game_id = ? AND seq > ? "  # noqa: S608
    "ORDER BY seq LIMIT ?"
)
_SINCE = f"SELECT rowid, {_COLUMNS} FROM game_events WHERE rowid > ? ORDER BY rowid LIMIT ?"  # noqa: S608
_LAST = "SELECT position FROM event_positions WHERE stammtisch_id = ?"


def _stored(row: tuple[Any, ...]) -> StoredEvents:
    return StoredEvents(
        int(row[0]), int(row[1]), int(row[2]), int(row[3]), json.loads(row[4]),
        datetime.fromisoformat(row[5]),
    )  # fmt: skip


class EventsMixin:
    """Needs the repository's connection and ``transaction``."""

    _conn: sqlite3.Connection

    enqueue_deliveries: Any  # the webhooks' outbox (.webhooks), in the same transaction

    def transaction(self) -> Any: ...  # provided by SQLiteRepository

    def append_events(
        self, stammtisch_id: int, game_id: int, seq: int, events: list[dict[str, Any]], at: datetime
    ) -> int:
        with self.transaction():
            (position,) = self._conn.execute(_NEXT, (stammtisch_id,)).fetchone()
            row = (stammtisch_id, position, game_id, seq, to_json(events), timestamp(at))
            self._conn.execute(_ADD, row)
            self.enqueue_deliveries(stammtisch_id, position, [e["kind"] for e in events], at)
        return int(position)

    def stammtisch_events(self, stammtisch_id: int, after: int, limit: int) -> list[StoredEvents]:
        rows = self._conn.execute(_BY_STAMMTISCH, (stammtisch_id, after, limit)).fetchall()
        return [_stored(row) for row in rows]

    def game_events(self, game_id: int, after: int, limit: int) -> list[StoredEvents]:
        rows = self._conn.execute(_BY_GAME, (game_id, after, limit)).fetchall()
        return [_stored(row) for row in rows]

    def last_event_position(self, stammtisch_id: int) -> int:
        row = self._conn.execute(_LAST, (stammtisch_id,)).fetchone()
        return int(row[0]) if row else 0

    def events_since_rowid(self, rowid: int, limit: int) -> tuple[int, list[StoredEvents]]:
        rows = self._conn.execute(_SINCE, (rowid, limit)).fetchall()
        if not rows:
            return rowid, []
        return int(rows[-1][0]), [_stored(row[1:]) for row in rows]
