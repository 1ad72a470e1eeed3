"""One SQLAlchemy engine per store: its pool (``QueuePool``) hands out the connections of a
process's requests, and the dialect's settings of every new connection are small named
listeners of the engine's ``connect`` event.

* A request takes a connection on its first statement and gives it back at its end
  (:func:`~.relational.take`, :func:`~.relational.pooled`): a server whose requests are many short tasks (gevent's
  greenlets, threads) neither opens a connection per request nor keeps one per task. At most
  ``size`` are in use at once (more tasks wait; after ``wait`` seconds: ``TimeoutError``,
  which the stores turn into a 503), ``idle`` are kept unused; one given back is rolled back
  first.
* SQLite (:func:`sqlite_engine`): the store's settings (WAL, busy timeout, synchronous,
  foreign keys; :mod:`.sqlite.store`) applied by the listener ``settings``.
* PostgreSQL (:func:`postgres_engine`): every connection checked as it is taken
  (``pool_pre_ping``): one the server ended (a restart, an idle timeout) is dropped and a new
  one made at once, and with it every older one (they ended with it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, QueuePool, create_engine, event

from .repository import StorageUnavailable


def sqlite_engine(
    connect: Callable[[], Any], settings: Callable[[Any], None], size: int, idle: int, wait: float
) -> Engine:
    """Connections made by ``connect``, each set up by ``settings`` when new."""

    def new() -> Any:
        try:
            return connect()
        except sqlite3.OperationalError as exc:  # out of open files, say: a 503, not a 500
            raise StorageUnavailable(f"SQLite: no new connection ({exc})") from exc

    engine = create_engine(
        "sqlite+pysqlite://",
        creator=new,
        poolclass=QueuePool,
        pool_size=idle,
        max_overflow=size - idle,
        pool_timeout=wait,
    )

    @event.listens_for(engine, "connect")
    def set_up(dbapi_connection: Any, record: Any) -> None:
        settings(dbapi_connection)

    return engine


def postgres_engine(connect: Callable[[], Any], size: int, wait: float) -> Engine:
    """Connections made by ``connect`` (autocommit), each checked as it is taken."""
    return create_engine(
        "postgresql+psycopg://",
        creator=connect,
        poolclass=QueuePool,
        pool_size=size,
        max_overflow=0,
        pool_timeout=wait,
        pool_pre_ping=True,
    )
