"""The SQL of the SQLite adapter: named queries (``queries.sql``) and migrations, read by the
one loader (``api/storage/sql.py``), and scripts split into statements (sqlite3 runs one
statement per call; ``executescript`` would commit on its own)."""

from __future__ import annotations

import sqlite3

from ..sql import migrations as package_migrations
from ..sql import queries as named_queries


def queries() -> dict[str, str]:
    """Every named query of this package's ``queries.sql``, by name."""
    return named_queries(__package__)


def migrations() -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` of every ``migrations/NNNN_name.sql`` here, in version order."""
    return package_migrations(__package__)


def statements(script: str) -> list[str]:
    """The statements of a script, each complete (comments stay with the statement after them;
    comments after the last statement are dropped)."""
    found, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            found.append(pending.strip())
            pending = ""
    rest = [ln for ln in pending.splitlines() if ln.strip() and not ln.strip().startswith("--")]
    if rest:
        raise ValueError(f"incomplete SQL statement: {' '.join(rest)[:80]!r}")
    return found
