"""The outbox of domain events on PostgreSQL: the port methods of
:class:`~api.storage.repository.Repository` for ``game_events`` (migration 0012), mixed into
:class:`~.repository.PostgresRepository`, as :mod:`api.storage.sqlite.events` does on SQLite.

The upsert of the Stammtisch's ``event_positions`` row locks it until the write commits, so
positions of one Stammtisch commit in order (a reader that sees position n has every smaller
one). Each row also notifies the channel :data:`CHANNEL` with ``"<stammtisch_id> <position>
<game_id> <seq>"``: PostgreSQL delivers it at the commit, to every server's listener."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..records import StoredEvents
from ..sqlite.rows import to_json
from .rows import naive
from .webhooks import NOTIFY_AND_ENQUEUE

#: the channel of ``LISTEN``/``NOTIFY`` a new row of game_events is announced on
CHANNEL = "schocken_events"

_NEXT = (
    "INSERT INTO event_positions (stammtisch_id, position) VALUES (%s, 1) "
    "ON CONFLICT (stammtisch_id) DO UPDATE SET position = event_positions.position + 1 "
    "RETURNING position"
)
_ADD = (
    "INSERT INTO game_events (stammtisch_id, position, game_id, seq, events, recorded_at) "
    "VALUES (%(st)s, %(position)s, %(game)s, %(seq)s, %(events)s, %(at)s)"
)
_COLUMNS = "stammtisch_id, position, game_id, seq, events, recorded_at"
_BY_STAMMTISCH = (
    f"SELECT {_COLUMNS} FROM game_events WHERE stammtisch_id = %s AND position > %s "  # noqa: S608
    "ORDER BY position LIMIT %s"
)
_BY_GAME = (
    f"SELECT {_COLUMNS} FROM game_events WHERE game_id = %s AND seq > %s "  # noqa: S608
    "ORDER BY seq LIMIT %s"
)
_LAST = "SELECT position FROM event_positions WHERE stammtisch_id = %s"


def _stored(row: tuple[Any, ...]) -> StoredEvents:
    return StoredEvents(
        int(row[0]), int(row[1]), int(row[2]), int(row[3]), list(row[4]), row[5]
    )  # fmt: skip


class EventsMixin:
    """Needs the repository's ``_sql`` and ``transaction``."""

    def _sql(self, sql: str, params: Any = None) -> Any: ...  # provided by PostgresRepository

    def transaction(self) -> Any: ...  # provided by PostgresRepository

    def append_events(
        self, stammtisch_id: int, game_id: int, seq: int, events: list[dict[str, Any]], at: datetime
    ) -> int:
        with self.transaction():
            (position,) = self._sql(_NEXT, (stammtisch_id,)).fetchone()
            row = {
                "st": stammtisch_id, "position": position, "game": game_id, "seq": seq,
                "events": to_json(events), "at": naive(at),
            }  # fmt: skip
            self._sql(_ADD, row)
            kinds = to_json([e["kind"] for e in events])
            note = f"{stammtisch_id} {position} {game_id} {seq}"
            params = {"channel": CHANNEL, "note": note, **row, "kinds": kinds}
            self._sql(NOTIFY_AND_ENQUEUE, params)  # the webhooks' outbox: no extra round trip
        return int(position)

    def stammtisch_events(self, stammtisch_id: int, after: int, limit: int) -> list[StoredEvents]:
        rows = self._sql(_BY_STAMMTISCH, (stammtisch_id, after, limit)).fetchall()
        return [_stored(row) for row in rows]

    def game_events(self, game_id: int, after: int, limit: int) -> list[StoredEvents]:
        rows = self._sql(_BY_GAME, (game_id, after, limit)).fetchall()
        return [_stored(row) for row in rows]

    def last_event_position(self, stammtisch_id: int) -> int:
        row = self._sql(_LAST, (stammtisch_id,)).fetchone()
        return int(row[0]) if row else 0
