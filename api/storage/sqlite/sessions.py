"""The logins of the pub form on SQLite: the port methods of
:class:`~api.storage.repository.Repository` for ``web_sessions`` (migration 0010), mixed into
:class:`~.repository.SQLiteRepository`. Every server process reads the same rows, so a logout
in one worker ends the login in all of them."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

from ..records import WebSession
from .rows import timestamp

_ADD = (
    "INSERT INTO web_sessions (id_hash, stammtisch_id, token_hash, expires_at) VALUES (?, ?, ?, ?)"
)
_GET = "SELECT id_hash, stammtisch_id, token_hash, expires_at FROM web_sessions WHERE id_hash = ?"
_DELETE = "DELETE FROM web_sessions WHERE id_hash = ?"
_PURGE = "DELETE FROM web_sessions WHERE expires_at < ?"
_NEW_KEY = "UPDATE stammtische SET token_hash = ? WHERE id = ?"
_OLD_LOGINS = "DELETE FROM web_sessions WHERE stammtisch_id = ? AND token_hash <> ?"


class WebSessionsMixin:
    """Needs the repository's connection and ``transaction``."""

    _conn: sqlite3.Connection

    def transaction(self) -> Any: ...  # provided by SQLiteRepository

    def add_web_session(self, login: WebSession) -> None:
        params = (login.id_hash, login.stammtisch_id, login.token_hash)
        with self.transaction():
            self._conn.execute(_ADD, (*params, timestamp(login.expires_at)))

    def get_web_session(self, id_hash: str) -> WebSession | None:
        row = self._conn.execute(_GET, (id_hash,)).fetchone()
        if row is None:
            return None
        expires = datetime.fromisoformat(row[3]).replace(tzinfo=UTC)  # stored as naive UTC
        return WebSession(str(row[0]), int(row[1]), str(row[2]), expires)

    def delete_web_session(self, id_hash: str) -> None:
        with self.transaction():
            self._conn.execute(_DELETE, (id_hash,))

    def purge_web_sessions(self, before: datetime) -> None:
        with self.transaction():
            self._conn.execute(_PURGE, (timestamp(before),))

    def replace_key(self, stammtisch_id: int, token_hash: str) -> None:
        with self.transaction():
            self._conn.execute(_NEW_KEY, (token_hash, stammtisch_id))
            self._conn.execute(_OLD_LOGINS, (stammtisch_id, token_hash))
