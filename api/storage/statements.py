"""The values and statements of the relational adapter (:mod:`.relational`): the statements
of ``queries.sql`` (written once, ``:name`` parameters) compiled once per dialect by SQLAlchemy
(:func:`compiled`: ``:name`` for sqlite3, ``%(name)s`` for psycopg), and the values as the
stores keep them: JSON as compact text, times naive in UTC (SQLite: ISO 8601 text). Rows come
back as the driver gives them and are read with :func:`doc` and :func:`moment`, which take
both the text and the parsed value.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache, lru_cache
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Dialect

from .records import FACT_COLUMNS, FactsWrite
from .sql import queries

#: a table's columns in table order, each with its declared type
Kinds = dict[str, tuple[tuple[str, str], ...]]


@lru_cache(maxsize=1024)
def compiled(dialect: Dialect, sql: str) -> str:
    """``sql`` (``:name`` parameters) as the driver of ``dialect`` takes it (cached)."""
    return str(text(sql).compile(dialect=dialect))


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_iso)


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def naive(value: datetime) -> datetime:
    """A time as stored: naive, an aware time converted to UTC first."""
    return value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo is not None else value


def moment(value: Any) -> Any:
    """A stored time (ISO text or the driver's datetime) as a datetime; None stays."""
    return datetime.fromisoformat(value) if isinstance(value, str) else value


def doc(value: Any) -> Any:
    """A stored JSON document (text or the driver's parsed value) as Python values."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def decode(kind: str, value: Any) -> Any:
    """A stored value as the Python value of its column's declared type."""
    kind = kind.lower()
    if value is None:
        return None
    if kind == "boolean":
        return bool(value)
    if kind.startswith("timestamp"):
        return moment(value)
    if kind in ("json", "jsonb"):
        return doc(value)
    return value


def encode(kind: str, value: Any, time: Callable[[datetime], Any] = naive) -> Any:
    """A value for a column of type ``kind`` (``time``: how the store keeps a time)."""
    kind = kind.lower()
    if value is None:
        return None
    if isinstance(value, datetime):
        return time(value)
    if kind in ("json", "jsonb") or isinstance(value, dict | list):
        return to_json(value)
    if isinstance(value, bool) and kind != "boolean":
        return int(value)
    return bool(value) if kind == "boolean" and isinstance(value, int) else value


#: values bound as they are into a column that needs no conversion (:func:`fact_columns`)
PLAIN = frozenset({int, float, str, type(None)})


@cache
def fact_columns(
    kinds: tuple[tuple[str, str], ...], table: str
) -> tuple[tuple[str, str, bool], ...]:
    """A fact table's columns (records.py's order), each with its declared type (``kinds``:
    the table's) and whether a :data:`PLAIN` value goes in as it is (no flag, JSON or time)."""
    declared = {name: kind.lower() for name, kind in kinds}
    return tuple(
        (
            c,
            declared[c],
            declared[c] not in ("boolean", "json", "jsonb")
            and not declared[c].startswith("timestamp"),
        )
        for c in FACT_COLUMNS[table]
    )


def stats_changed(write: FactsWrite) -> bool:
    """Whether a facts write changes the statistics: the per-player summary rows of a game
    appear (it finished) or go (its finish was undone; a rebuild rewrites them)."""
    return "player_game_facts" in write.replace or bool(write.append.get("player_game_facts"))


#: a fact table's rows in their natural order (every store reads them so)
FACT_ORDER = {
    "game_facts": "game_id", "turn_facts": "turn_no", "round_facts": "round_no",
    "deckel_moves": "move_no", "half_facts": "half", "player_game_facts": "player_id",
}  # fmt: skip


def named(package: str) -> dict[str, str]:
    """The named statements of ``package``'s ``queries.sql``, by name."""
    return {name: sql.rstrip(";") for name, sql in queries(package).items()}


#: the statements written once (``{least}``/``{greatest}``: the dialect's functions), and
#: the seats of games (``{ids}``: :meth:`RelationalRepository._in`)
SQL = named(__package__)

#: the ids of an ``IN`` list passed as one JSON array, per dialect
IDS = {
    "sqlite": "SELECT value FROM json_each(:ids)",
    "postgresql": "SELECT CAST(value AS BIGINT) FROM json_array_elements_text(CAST(:ids AS JSON))",
}


@cache
def fact_insert(table: str) -> str:
    """The ``INSERT`` of a fact table (names from records.py); game_facts holds one row per
    game: it is replaced."""
    columns = FACT_COLUMNS[table]
    sql = (f"INSERT INTO {table} ({', '.join(columns)}) "  # noqa: S608 - names from records.py
           f"VALUES ({', '.join(':' + c for c in columns)})")  # fmt: skip
    if table == "game_facts":
        sets = ", ".join(f"{c} = excluded.{c}" for c in columns[1:])
        sql += f" ON CONFLICT (game_id) DO UPDATE SET {sets}"
    return sql
