"""Games called off ("Spiel abbrechen", migration 0014) on PostgreSQL: mixed into
:class:`~.repository.PostgresRepository`, as :mod:`api.storage.sqlite.abandon` on SQLite."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

_ABANDON = "UPDATE games SET abandoned_at = %s WHERE id = %s AND abandoned_at IS NULL"


class AbandonMixin:
    """Needs the repository's ``_sql`` and ``transaction``."""

    def _sql(self, sql: str, params: Any = None) -> Any: ...  # provided by PostgresRepository

    def transaction(self) -> Any: ...  # provided by PostgresRepository

    def abandon_game(self, game_id: int, at: datetime) -> bool:
        naive = at.astimezone(UTC).replace(tzinfo=None) if at.tzinfo else at
        with self.transaction():
            return bool(self._sql(_ABANDON, (naive, game_id)).rowcount == 1)
