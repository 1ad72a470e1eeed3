"""Values between the records of :mod:`api.storage.records` and PostgreSQL's columns, and the
driver's errors as the port's.

psycopg hands out native values: ``json`` columns parsed, ``timestamp`` as naive
:class:`~datetime.datetime`, ``boolean`` as bool, ``bytea`` as bytes. Parameters go in as the
SQLite adapter writes them (:func:`encode`): a document as compact JSON text (the ``json``
column keeps it as written), a time naive in UTC, a flag as bool, or as 0/1 in a number column.

:func:`mapped` turns the driver's errors into the port's: a taken key or a lost race into
:class:`~api.storage.repository.StorageConflict`; a lost or refused connection, a full disk, a
read-only server, an exhausted pool into :class:`~api.storage.repository.StorageUnavailable`
(the message names the cause for the operator's log). Anything else stays what it is.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg import errors

from ..repository import StorageConflict, StorageUnavailable, StorageUnreachable
from ..sqlite.rows import to_json

#: a table's columns in table order, each with its type as information_schema names it
Kinds = dict[str, tuple[tuple[str, str], ...]]

#: SQLSTATE classes that mean "cannot work now": connection (08), insufficient resources such
#: as a full disk (53), operator intervention such as a shutdown (57), system or I/O error (58)
_UNAVAILABLE_CLASSES = frozenset({"08", "53", "57", "58"})
#: the server is shutting down or starting up (admin_shutdown, crash_shutdown,
#: cannot_connect_now)
_GOING = frozenset({"57P01", "57P02", "57P03"})
#: read_only_sql_transaction (a standby, or default_transaction_read_only)
_READ_ONLY = "25006"

KINDS_SQL = (
    "SELECT table_name, column_name, data_type FROM information_schema.columns "
    "WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position"
)


def column_kinds(conn: psycopg.Connection[Any]) -> Kinds:
    """Every table's columns with their types, read from the schema."""
    found: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in conn.execute(KINDS_SQL).fetchall():
        found.setdefault(str(table), []).append((str(column), str(kind)))
    return {table: tuple(columns) for table, columns in found.items()}


def naive(value: datetime) -> datetime:
    """A time as stored: naive, an aware time converted to UTC first."""
    if value.tzinfo is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value


def encode(kind: str, value: Any) -> Any:
    """A parameter for a column of type ``kind``."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return naive(value)
    if kind in ("json", "jsonb") or isinstance(value, dict | list):
        return to_json(value)
    if isinstance(value, bool) and kind != "boolean":
        return int(value)
    if kind == "boolean" and isinstance(value, int):
        return bool(value)
    return value


def unavailable_cause(exc: BaseException) -> str | None:
    """The cause when ``exc`` means the database cannot work now, else None (one line: libpq's
    messages have several)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, psycopg.InterfaceError | psycopg.OperationalError):
        if not isinstance(exc, errors.TransactionRollback):
            return text
    state = getattr(exc, "sqlstate", None) or ""
    if state[:2] in _UNAVAILABLE_CLASSES or state == _READ_ONLY:
        return text
    return None


@contextmanager
def mapped(conflict: str | None = None) -> Iterator[None]:
    """The driver's errors inside as the port's (see the module's text)."""
    try:
        yield
    except (errors.UniqueViolation, errors.TransactionRollback) as exc:
        raise StorageConflict(conflict or str(exc).strip()) from exc
    except psycopg.Error as exc:
        cause = unavailable_cause(exc)
        if cause is None:
            raise
        state = getattr(exc, "sqlstate", None) or ""
        if state[:2] == "08" or state in _GOING or (not state and _lost(exc)):
            raise StorageUnreachable(f"PostgreSQL unreachable: {cause}") from exc
        raise StorageUnavailable(f"PostgreSQL: {cause}") from exc


def _lost(exc: psycopg.Error) -> bool:
    """A connection that could not be made, broke, or was not to be had in time (libpq's
    errors carry no SQLSTATE)."""
    return isinstance(exc, psycopg.InterfaceError | psycopg.OperationalError)
