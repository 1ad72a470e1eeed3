"""Values between the records of :mod:`api.storage.records` and SQLite's columns.

SQLite stores what it is given; the schema's declared types say how a column is meant:
``JSON`` a document as compact text, ``TIMESTAMP`` ISO 8601 text without offset
(``2026-11-27 19:00:00`` or with six digits of microseconds, so text order is time order),
``BOOLEAN`` 0 or 1. :func:`encode` writes a Python value that way, :func:`decode` reads it
back by the column's declared type (:func:`column_kinds` reads those from the schema).
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from ..records import FACT_COLUMNS, GamePlayer, GameRecord

#: a table's columns in table order, each with its declared type (upper case)
Kinds = dict[str, tuple[tuple[str, str], ...]]


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_iso)


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def timestamp(value: datetime) -> str:
    """A time as stored: naive (an aware time is converted to UTC first), ISO 8601 with a
    space, microseconds only when there are any (both sort by time as text)."""
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.isoformat(sep=" ")


def encode(value: Any) -> Any:
    """A parameter as its column stores it (bool stays bool: sqlite3 binds it as 0/1)."""
    if isinstance(value, datetime):
        return timestamp(value)
    if isinstance(value, dict | list):
        return to_json(value)
    return value


def moment(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def decode(kind: str, value: Any) -> Any:
    """A stored value as the Python value of its declared type."""
    if value is None:
        return None
    if kind == "BOOLEAN":
        return bool(value)
    if kind == "TIMESTAMP":
        return datetime.fromisoformat(value)
    if kind == "JSON":
        return json.loads(value)
    return value


def column_kinds(conn: sqlite3.Connection) -> Kinds:
    """Every table's columns with their declared types, read from the schema."""
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    ]
    return {
        table: tuple(
            (str(name), str(kind).upper())
            for _cid, name, kind, *_ in conn.execute(
                "SELECT * FROM pragma_table_info(?)", [table]
            ).fetchall()
        )
        for table in tables
    }


def decode_row(kinds: tuple[tuple[str, str], ...], row: tuple[Any, ...]) -> dict[str, Any]:
    """A row of ``SELECT *`` as a dict by column name, each value decoded."""
    return {name: decode(kind, value) for (name, kind), value in zip(kinds, row, strict=True)}


@functools.cache
def insert_sql(table: str) -> str:
    """``INSERT INTO table (columns) VALUES (?, …)`` of a fact table (names from records.py);
    game_facts holds one row per game: it is replaced."""
    columns = FACT_COLUMNS[table]
    verb = "INSERT OR REPLACE" if table == "game_facts" else "INSERT"
    marks = ", ".join("?" * len(columns))
    return f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({marks})"


def game_record(row: Sequence[Any], players: tuple[GamePlayer, ...]) -> GameRecord:
    """A row of the queries get_game / list_games as a record."""
    return GameRecord(
        id=row[0],
        stammtisch_id=row[1],
        header=decode("JSON", row[2]),
        rules=decode("JSON", row[3]),
        options=decode("JSON", row[4]),
        played_at=row[5],
        played_at_utc=datetime.fromisoformat(row[6]),
        year=row[7],
        source=row[8],
        created_at=datetime.fromisoformat(row[9]),
        players=players,
        played_local=datetime.fromisoformat(row[13]),
        number=int(row[14] or 0),
        status=row[10],
        phase=row[11],
        loser=row[12],
    )
