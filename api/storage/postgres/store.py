"""The PostgreSQL store: one database server shared by every server process, a pool of
connections per process, migrations at start.

Selected by a ``postgresql://…`` URL (``SCHOCKEN_DATABASE_URL``, ``--database-url``); SQLite
stays the default. Settings, and why:

* A pool (``psycopg_pool.ConnectionPool``, at most :data:`POOL_SIZE` connections per
  process): a request takes a connection on its first statement and gives it back at its end
  (:meth:`PostgresRepository.close`). Connections run in autocommit mode; a use case's
  ``transaction()`` is an explicit ``BEGIN … COMMIT`` (see :mod:`.repository` for the locks).
  Each connection is checked when taken (an empty query, one round trip): one the server
  ended (a restart, an idle timeout) is replaced by a new one before the request sees it; one
  that breaks during a request is dropped when given back. A request that waited
  :data:`POOL_TIMEOUT` seconds for a connection, or found the server down, gets
  :class:`~api.storage.repository.StorageUnavailable` (503).
* Durability is PostgreSQL's default ``synchronous_commit=on``: COMMIT returns once the WAL
  holds the transaction on disk. Only the rate limit's counters live in an UNLOGGED table
  (migration 0007), whose commits wait for no flush.
* Migrations are the files of ``migrations/``, numbered as SQLite's (the same tables), each in
  its own transaction under an advisory lock, so that servers starting at once apply each
  migration once; a database of a newer version is refused untouched.
"""

from __future__ import annotations

import threading
import weakref
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from ..repository import Background, MigrationError
from ..sql import migrations as package_migrations
from .repository import PostgresRepository
from .rows import Kinds, column_kinds, mapped

#: connections per process (a server's threads share them; a refresh uses two)
POOL_SIZE = 10
#: seconds a request waits for a free connection (or a new one) before a 503
POOL_TIMEOUT = 5.0
#: seconds to wait for the server when connecting
CONNECT_TIMEOUT = 10
#: the advisory lock of the migrations (any constant bigint, the same in every process)
MIGRATION_LOCK = 0x5C40C6E7


def migrations() -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` of every ``migrations/NNNN_name.sql`` here, in version order."""
    return package_migrations(__package__)


def is_postgres_url(url: str | None) -> bool:
    """Whether ``url`` names a PostgreSQL database (``postgresql://`` or ``postgres://``)."""
    return bool(url) and str(url).startswith(("postgresql://", "postgres://"))


class PostgresStore:
    """The process-wide handle of one PostgreSQL database: its pool and its schema."""

    def __init__(self, url: str, pool_size: int = POOL_SIZE, until: int | None = None) -> None:
        """Connect to ``url`` and apply pending migrations (up to version ``until`` only, if
        given); raises :class:`StorageUnavailable` when the server cannot be reached."""
        self.url = url
        self.background = Background()
        self._local = threading.local()
        self._repos: weakref.WeakSet[PostgresRepository] = weakref.WeakSet()
        self._lock = threading.Lock()
        with self.connect() as conn:
            self._migrate(conn, until)
            self._kinds: Kinds = column_kinds(conn)
        self._pool: ConnectionPool[psycopg.Connection[Any]] = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT},
            timeout=POOL_TIMEOUT,
            check=ConnectionPool.check_connection,  # a connection the server ended is replaced
            name="schocken",
            open=True,
        )

    def connect(self) -> psycopg.Connection[Any]:
        """A new connection of its own (autocommit), outside the pool."""
        with mapped():
            return psycopg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)

    def migrate(self, until: int | None = None) -> list[int]:
        """Apply every pending migration (up to version ``until``); the versions applied now."""
        with self.connect() as conn:
            return self._migrate(conn, until)

    def _migrate(self, conn: psycopg.Connection[Any], until: int | None) -> list[int]:
        known = migrations()
        newest = max((v for v, _, _ in known), default=0)
        with mapped():
            applied = self._versions(conn)
            self._refuse_newer(applied, newest)
            pending = [m for m in known if m[0] not in applied and (until is None or m[0] <= until)]
            return [v for v, name, sql in pending if self._apply(conn, v, name, sql, newest)]

    @staticmethod
    def _versions(conn: psycopg.Connection[Any]) -> set[int]:
        row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
        if not row or not row[0]:
            return set()
        return {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}

    def _refuse_newer(self, applied: set[int], newest: int) -> None:
        if applied and max(applied) > newest:
            raise MigrationError(
                f"database {self.url} has schema version {max(applied)}, newer than this "
                f"program's {newest}: refusing to touch it"
            )

    def _apply(
        self, conn: psycopg.Connection[Any], version: int, name: str, sql: str, newest: int
    ) -> bool:
        """One migration in its own transaction, under the migrations' advisory lock; False
        when it was applied already (perhaps by another process a moment ago)."""
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [MIGRATION_LOCK])
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version bigint PRIMARY KEY, "
                "name text NOT NULL, applied_at timestamp NOT NULL)"
            )
            applied = self._versions(conn)
            self._refuse_newer(applied, newest)
            if version in applied:
                return False
            conn.execute(sql, prepare=False)
            conn.execute(
                "INSERT INTO schema_migrations VALUES (%s, %s, %s)",
                [version, name, datetime.now(UTC).replace(tzinfo=None)],
            )
        return True

    def applied(self) -> list[tuple[int, str]]:
        """``(version, name)`` of every migration recorded in the database."""
        with self.connect() as conn, mapped():
            rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version")
            return [(int(v), str(n)) for v, n in rows.fetchall()]

    @property
    def kinds(self) -> Kinds:
        return self._kinds

    def repository(self) -> PostgresRepository:
        """This thread's repository (it takes a pooled connection on its first statement and
        gives it back when closed at the end of a request)."""
        repo: PostgresRepository | None = getattr(self._local, "repo", None)
        if repo is None or repo.disconnected:
            repo = self.open_repository()
            self._local.repo = repo
        return repo

    def open_repository(self) -> PostgresRepository:
        """A repository of its own; :meth:`PostgresRepository.disconnect` (or :meth:`close`
        of the store) ends it."""
        repo = PostgresRepository(self._pool, self._kinds)
        with self._lock:
            self._repos.add(repo)
        return repo

    def close(self) -> None:
        """Stop the threads running beside the requests, give every connection back and
        close the pool."""
        self.background.stop()
        with self._lock:
            repos = list(self._repos)
            self._repos.clear()
        for repo in repos:
            repo.disconnect()
        self._pool.close()
