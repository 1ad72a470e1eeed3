"""``--database-url``: the option every command with ``--db`` also takes (PostgreSQL instead
of a SQLite file; see api/storage/postgres). Without either, ``SCHOCKEN_DATABASE_URL`` if set,
else the SQLite file of the configuration."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from dashboard.readmodel import Refreshed

    from ..storage import PostgresStore, SQLiteStore

URL_HELP = (
    "PostgreSQL database postgresql://user@host/name instead of a SQLite file "
    "(default: SCHOCKEN_DATABASE_URL)"
)


def database_url_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator: the ``--database-url URL`` option (parameter ``database_url``)."""
    return click.option("--database-url", "database_url", metavar="URL", help=URL_HELP)(command)


def pick_url(given: str | None, db: str | None) -> str | None:
    """The PostgreSQL URL a command works on: ``--database-url``, else (unless ``--db`` names
    a SQLite file) ``SCHOCKEN_DATABASE_URL``; None: SQLite."""
    if given and db:
        raise click.UsageError("--db and --database-url: one database, please")
    if given or db:
        return given
    from ..config import settings

    url = settings()["DATABASE_URL"]
    return str(url) if url else None


def open_database(url: str | None, db: str, pool_size: int = 2) -> SQLiteStore | PostgresStore:
    """The store of the PostgreSQL database ``url`` (``pool_size`` connections at most), else
    of the SQLite file ``db``. PostgreSQL's packages are imported only for a URL: without the
    extra "postgres" a URL is refused with how to install it (api/startup.py)."""
    if url:
        from ..storage import PostgresStore

        return PostgresStore(url, pool_size=pool_size)
    from ..storage import SQLiteStore

    return SQLiteStore(db)


def refresh_url(url: str, everything: bool) -> Refreshed:
    """``schocken stats refresh`` on the PostgreSQL database ``url`` (one process, under the
    one-refresher lock: PostgreSQL's advisory lock)."""
    from dashboard.readmodel import refresh

    store = open_database(url, "")
    try:
        done = refresh(store.repository(), everything)
    finally:
        store.close()
    assert done is not None  # noqa: S101 - it waited for the lock
    return done
