"""Rows to DuckDB parameters: JSON text for JSON columns and for many-row inserts, and the
``INSERT … VALUES`` statement of a few rows (see :meth:`DuckDBRepository._insert
<api.storage.duck_repository.DuckDBRepository._insert>`)."""

from __future__ import annotations

import functools
import json
from datetime import datetime
from typing import Any

from .records import LogEntry


def log_row(entry: LogEntry) -> dict[str, Any]:
    return {
        "game_id": entry.game_id,
        "seq": entry.seq,
        "kind": entry.kind,
        "body": entry.body,
        "recorded_at": entry.recorded_at,
    }


#: up to this many rows an insert binds every value; beyond, one JSON parameter is cheaper
VALUES_ROWS = 4


@functools.cache
def spec_columns(spec: str) -> tuple[str, ...]:
    """The column names of a table, in order, from its row spec ``[{column: type}]``."""
    return tuple(json.loads(spec)[0])


@functools.cache
def values_insert(table: str, columns: tuple[str, ...], rows: int) -> str:
    """``INSERT INTO table (columns) VALUES (?, …), …``: names from the fixed schema, every
    value a bound parameter. game_facts holds one row per game: it is replaced."""
    verb = "INSERT OR REPLACE" if table == "game_facts" else "INSERT"
    one = "(" + ", ".join("?" * len(columns)) + ")"
    return f"{verb} INTO {table} ({', '.join(columns)}) VALUES {', '.join([one] * rows)}"


def param(value: Any) -> Any:
    """JSON columns take their document as text."""
    return to_json(value) if isinstance(value, dict | list) else value


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=iso)


def iso(value: Any) -> str:
    """Timestamps in JSON rows (``from_json`` reads them back with the column's type)."""
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
