"""The one migration runner of both stores of record, SQLite and PostgreSQL: Alembic.

The revisions (``revisions/versions/``, one per number, ``0001`` … ``0017``) each run that
number's SQL file of the dialect (``sqlite/migrations/``, ``postgres/migrations/``), the files
the hand-written runners before Alembic applied; Alembic's table ``alembic_version`` holds the
revision a database is at. A database made before (its own bookkeeping table
``schema_migrations``, one row per version applied) is stamped with the newest version that
table names, the table dropped, in the transaction of the upgrade that follows.

Servers starting at once: the upgrade is one transaction that takes its lock first (SQLite:
``BEGIN IMMEDIATE``, the write lock; PostgreSQL: an advisory lock held until the commit), reads
the revision under it and applies what is pending, so each revision is applied once. A database
that is up to date is opened without the lock (a backup beside a busy server does not queue
behind its writers). A revision this program does not know (a newer program's) is refused
untouched with :class:`~api.storage.repository.MigrationError`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import cache
from typing import Any

from .repository import MigrationError
from .sql import migrations, statements

#: the advisory lock of the migrations on PostgreSQL (any constant bigint, the same everywhere)
MIGRATION_LOCK = 0x5C40C6E7
#: the statements that begin the upgrade's transaction and take its lock, per dialect
LOCK = {
    "sqlite": ("BEGIN IMMEDIATE",),
    "postgresql": ("BEGIN", f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})"),
}
#: Alembic's ``context`` and ``op`` are proxies of the module: one command at a time per process
_ONE_AT_A_TIME = threading.Lock()
#: the package of each dialect's SQL files, and SQLAlchemy's name of its driver
PACKAGES = {"sqlite": "api.storage.sqlite", "postgresql": "api.storage.postgres"}
DRIVERS = {"sqlite": "sqlite+pysqlite://", "postgresql": "postgresql+psycopg://"}


def revision_name(version: int) -> str:
    return f"{version:04d}"


@cache
def known(dialect: str) -> dict[int, str]:
    """Every version of this program with its name, in order."""
    return {version: name for version, name, _ in migrations(PACKAGES[dialect])}


def apply(revision: str) -> None:
    """The upgrade of revision ``revision``: that number's SQL file of the dialect (called by
    the revision files, inside the upgrade's transaction)."""
    from alembic import op

    bind = op.get_bind()
    dialect = bind.dialect.name
    (sql,) = [s for v, _, s in migrations(PACKAGES[dialect]) if revision_name(v) == revision]
    for statement in statements(sql) if dialect == "sqlite" else (sql,):
        bind.exec_driver_sql(statement)


def upgrade(
    connect: Callable[[], Any], dialect: str, where: str, until: int | None = None
) -> list[int]:
    """Bring the database of ``connect`` (a DB-API connection of its own, in autocommit mode)
    up to date (to version ``until`` only, if given); the versions applied now. ``where``
    names the database in a refusal."""
    from sqlalchemy import NullPool, create_engine
    from sqlalchemy.exc import DBAPIError

    newest = max(known(dialect))
    target = max(v for v in known(dialect) if until is None or v <= until)
    engine = create_engine(
        DRIVERS[dialect], creator=connect, poolclass=NullPool, isolation_level="AUTOCOMMIT"
    )
    try:
        with engine.connect() as conn:
            before, old = _version(conn, where, newest)
            if before is not None and before >= target and not old:
                return []  # up to date: no lock taken
            for statement in LOCK[dialect]:
                conn.exec_driver_sql(statement)
            try:
                before, _ = _version(conn, where, newest, stamp=True)  # again, under the lock
                if before is None or before < target:
                    _command(conn, "upgrade", revision_name(target))
                conn.exec_driver_sql("COMMIT")
            except BaseException:
                conn.exec_driver_sql("ROLLBACK")
                raise
            conn.commit()
    except DBAPIError as err:  # the driver's own error, as the callers know it
        if isinstance(err.orig, BaseException):
            raise err.orig from err
        raise
    finally:
        engine.dispose()
    return [v for v in known(dialect) if (before or 0) < v <= target]


def current(connect: Callable[[], Any], dialect: str, where: str) -> list[tuple[int, str]]:
    """``(version, name)`` of every revision the database of ``connect`` has applied."""
    from sqlalchemy import NullPool, create_engine

    engine = create_engine(DRIVERS[dialect], creator=connect, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            at = _version(conn, where, max(known(dialect)))[0] or 0
    finally:
        engine.dispose()
    return [(v, name) for v, name in known(dialect).items() if v <= at]


def _version(conn: Any, where: str, newest: int, stamp: bool = False) -> tuple[int | None, bool]:
    """The version the database is at (None: a new one) and whether the bookkeeping before
    Alembic holds it; ``stamp``: that is carried over (Alembic's table stamped with it, the
    old table dropped)."""
    from sqlalchemy import inspect

    tables = set(inspect(conn).get_table_names())
    if "alembic_version" in tables:  # Alembic's table, read without importing Alembic
        revision = conn.exec_driver_sql("SELECT max(version_num) FROM alembic_version").scalar()
        version = None if revision is None else int(revision)
    elif "schema_migrations" in tables:
        version = conn.exec_driver_sql("SELECT max(version) FROM schema_migrations").scalar()
    else:
        return None, False
    if version is not None and version > newest:
        raise MigrationError(
            f"database {where} has schema version {version}, newer than this "
            f"program's {newest}: refusing to touch it"
        )
    if stamp and "alembic_version" not in tables and version is not None:
        _command(conn, "stamp", revision_name(version))
        conn.exec_driver_sql("DROP TABLE schema_migrations")
    return version, "alembic_version" not in tables


def _command(conn: Any, name: str, revision: str) -> None:
    """Alembic's command ``name`` (upgrade, stamp) on the connection ``conn``."""
    from alembic import command
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", "api.storage:revisions")
    config.attributes["connection"] = conn
    with _ONE_AT_A_TIME:
        getattr(command, name)(config, revision)
