"""The rate limit's counters on PostgreSQL (migrations 0007 and 0011, UNLOGGED tables), mixed
into :class:`~.repository.PostgresRepository`: each statement commits at once, as SQLite's
counters on their connection of their own do."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine

from ..engine import pooled
from .rows import mapped


class CountersMixin:
    """Needs the repository's pool, queries, transaction depth and ``_run``."""

    _pool: Engine
    _q: dict[str, str]
    _depth: int

    def _run(self, name: str, params: Any = None) -> Any: ...  # provided by PostgresRepository

    def _counter(self, name: str, params: dict[str, Any]) -> Any:
        """A statement on the rate limits' tables, committed at once as SQLite's counters are:
        on this connection outside a transaction, else on a pooled one of its own (a read-only
        ``reading()`` cannot write, and a rolled-back write must not give a token back)."""
        if not self._depth:
            cursor = self._run(name, params)
            return cursor.fetchone() if cursor.description else None
        with mapped(), pooled(self._pool) as conn:
            cursor = conn.execute(self._q[name], params)
            return cursor.fetchone() if cursor.description else None

    def take_token(self, who: str, now: float, per_second: float, burst: int) -> float:
        params = {"who": who, "now": now, "rate": per_second, "burst": float(burst)}
        row = self._counter("take_token", params)
        assert row is not None
        tokens, granted = row
        return 0.0 if granted else (1.0 - float(tokens)) / per_second

    def purge_tokens(self, before: float) -> None:
        self._counter("purge_tokens", {"before": before})

    def failed_attempts(self, who: str, now: float, outcome: bool | None) -> tuple[int, float]:
        """Failed logins of ``who`` in a row and the last one's time, after noting
        ``outcome`` (False: a failure now, True: a success, which clears them, None: nothing);
        the port's method on main (issue 13, item 1)."""
        if outcome:
            self._counter("clear_failures", {"who": who})
            return 0, 0.0
        if outcome is None:
            row = self._counter("failures", {"who": who})
        else:
            row = self._counter("note_failure", {"who": who, "now": now})
        return (int(row[0]), float(row[1])) if row else (0, 0.0)
