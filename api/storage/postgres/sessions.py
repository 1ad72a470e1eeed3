"""The logins of the pub form on PostgreSQL: the port methods of
:class:`~api.storage.repository.Repository` for ``web_sessions`` (migration 0010), mixed into
:class:`~.repository.PostgresRepository`, as :mod:`api.storage.sqlite.sessions` does on SQLite."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ..records import WebSession

_ADD = (
    "INSERT INTO web_sessions (id_hash, stammtisch_id, token_hash, expires_at) "
    "VALUES (%s, %s, %s, %s)"
)
_GET = "SELECT id_hash, stammtisch_id, token_hash, expires_at FROM web_sessions WHERE id_hash = %s"
_DELETE = "DELETE FROM web_sessions WHERE id_hash = %s"
_PURGE = "DELETE FROM web_sessions WHERE expires_at < %s"
_NEW_KEY = "UPDATE stammtische SET token_hash = %s WHERE id = %s"
_OLD_LOGINS = "DELETE FROM web_sessions WHERE stammtisch_id = %s AND token_hash <> %s"


def _naive_utc(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value


class WebSessionsMixin:
    """Needs the repository's ``_sql`` and ``transaction``."""

    def _sql(self, sql: str, params: Any = None) -> Any: ...  # provided by PostgresRepository

    def transaction(self) -> Any: ...  # provided by PostgresRepository

    def add_web_session(self, login: WebSession) -> None:
        params = (login.id_hash, login.stammtisch_id, login.token_hash)
        with self.transaction():
            self._sql(_ADD, (*params, _naive_utc(login.expires_at)))

    def get_web_session(self, id_hash: str) -> WebSession | None:
        row = self._sql(_GET, (id_hash,)).fetchone()
        if row is None:
            return None
        expires = row[3].replace(tzinfo=UTC)  # stored as naive UTC
        return WebSession(str(row[0]), int(row[1]), str(row[2]), expires)

    def delete_web_session(self, id_hash: str) -> None:
        with self.transaction():
            self._sql(_DELETE, (id_hash,))

    def purge_web_sessions(self, before: datetime) -> None:
        with self.transaction():
            self._sql(_PURGE, (_naive_utc(before),))

    def replace_key(self, stammtisch_id: int, token_hash: str) -> None:
        with self.transaction():
            self._sql(_NEW_KEY, (token_hash, stammtisch_id))
            self._sql(_OLD_LOGINS, (stammtisch_id, token_hash))
