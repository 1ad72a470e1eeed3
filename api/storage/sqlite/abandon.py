"""Games called off ("Spiel abbrechen", migration 0014) on SQLite: mixed into
:class:`~.repository.SQLiteRepository`."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from .rows import timestamp

_ABANDON = "UPDATE games SET abandoned_at = ? WHERE id = ? AND abandoned_at IS NULL"


class AbandonMixin:
    """Needs the repository's connection and ``transaction``."""

    _conn: sqlite3.Connection

    def transaction(self) -> Any: ...  # provided by SQLiteRepository

    def abandon_game(self, game_id: int, at: datetime) -> bool:
        with self.transaction():
            return self._conn.execute(_ABANDON, (timestamp(at), game_id)).rowcount == 1
