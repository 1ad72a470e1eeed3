"""``schocken copy SOURCE_URL TARGET_URL``: a whole database into a new one, SQLite ↔
PostgreSQL (the logic, without Flask, is api/storage/convert.py)."""

from __future__ import annotations

import click

from .base import command, transfer


@command("copy", "copy a whole database into a new one (SQLite <-> PostgreSQL)")
@click.argument("source", metavar="SOURCE_URL")
@click.argument("target", metavar="TARGET_URL")
def copy(source: str, target: str) -> int:
    """Copy every Stammtisch, player, game, game log, fact row, stored idempotent response,
    the statistics read model and the rate limit's counters of SOURCE_URL into TARGET_URL, in
    one transaction. Each is a SQLite file (a path, sqlite:///relative or sqlite:////absolute)
    or a PostgreSQL database (postgresql://user@host/name). A SQLite target must not exist, a
    PostgreSQL target must be empty (created and migrated here). Stop the servers writing to
    SOURCE_URL first: what they write during the copy is not in it."""
    from ..startup import require_postgres

    require_postgres()  # the extra "postgres" (api/storage/convert.py), or how to install it
    from ..storage import StorageUnavailable
    from ..storage.convert import CopyError
    from ..storage.convert import copy as copy_database

    return transfer(
        lambda: copy_database(source, target),
        (CopyError, StorageUnavailable),
        lambda counts: f"copied {len(counts)} tables into the new database",
    )


COMMANDS = (copy,)
