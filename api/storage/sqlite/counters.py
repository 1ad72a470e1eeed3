"""What runs beside the game transactions: the rate limit's counters and the health probe.

Counters (:class:`Counters`): every server process takes a client's tokens from the one table
``rate_limits`` (migration 0007), one ``INSERT … ON CONFLICT DO UPDATE … RETURNING`` statement
per write request, atomic across processes. They run on a connection of their own with
``synchronous=OFF``: the statement takes SQLite's write lock for a moment but syncs nothing
(an fsync per request would halve the write rate). A counter lost in a crash of the machine
only lets a client write once more; the next commit of a turn (its fsync of the WAL) syncs
the whole WAL, counters included.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from .sql import queries


class Counters:
    """Token buckets in the database, on a lazily opened connection of their own."""

    def __init__(self, connect: Callable[[], sqlite3.Connection] | None) -> None:
        self._connect = connect
        self._conn: sqlite3.Connection | None = None
        self._q = queries()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            if self._connect is None:
                raise NotImplementedError("a read-only copy keeps no counters")
            self._conn = self._connect()
            self._conn.execute("PRAGMA synchronous = OFF")
        return self._conn

    def take(self, who: str, now: float, per_second: float, burst: int) -> float:
        """0.0 when a token was taken, else the seconds until the next one."""
        params = {"who": who, "now": now, "rate": per_second, "burst": float(burst)}
        tokens, granted = self._connection().execute(self._q["take_token"], params).fetchone()
        return 0.0 if granted else (1.0 - float(tokens)) / per_second

    def purge(self, before: float) -> None:
        self._connection().execute(self._q["purge_tokens"], {"before": before})

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def probe_write_lock(conn: sqlite3.Connection) -> None:
    """Take the write lock and give it back at once, without waiting (busy timeout 0): a lock
    held by another writer shows the database can write. Raises the driver's error otherwise
    (a read-only database refuses the lock)."""
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(timeout)}")
