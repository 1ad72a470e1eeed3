"""The SQL of the SQLite adapter: named queries (``queries.sql``) and migrations, split into
statements (sqlite3 runs one statement per call; ``executescript`` would commit on its own)."""

from __future__ import annotations

import re
import sqlite3
from functools import cache
from importlib.resources import files

_NAME = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)
_MIGRATION = re.compile(r"(\d{4})_(\w+)\.sql")


@cache
def queries() -> dict[str, str]:
    """Every named query of ``queries.sql`` (``-- name: x`` starts query x), by name."""
    text = files(__package__).joinpath("queries.sql").read_text(encoding="utf-8")
    parts = _NAME.split(text)
    return {name: body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}


def migrations() -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` of every file ``migrations/NNNN_name.sql``, in version order."""
    found = []
    for entry in files(__package__).joinpath("migrations").iterdir():
        match = _MIGRATION.fullmatch(entry.name)
        if match:
            found.append((int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found)


def statements(script: str) -> list[str]:
    """The statements of a script, each complete (comments stay with the statement after them;
    comments after the last statement are dropped)."""
    found, pending = [], ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            found.append(pending.strip())
            pending = ""
    rest = [ln for ln in pending.splitlines() if ln.strip() and not ln.strip().startswith("--")]
    if rest:
        raise ValueError(f"incomplete SQL statement: {' '.join(rest)[:80]!r}")
    return found
