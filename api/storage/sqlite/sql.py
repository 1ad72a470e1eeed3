"""The SQL of the SQLite adapter: named queries (``queries.sql``) and migrations, read by the
one loader (``api/storage/sql.py``)."""

from __future__ import annotations

from ..sql import migrations as package_migrations
from ..sql import queries as named_queries


def queries() -> dict[str, str]:
    """Every named query of this package's ``queries.sql``, by name."""
    return named_queries(__package__)


def migrations() -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` of every ``migrations/NNNN_name.sql`` here, in version order."""
    return package_migrations(__package__)
