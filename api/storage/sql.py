"""The one loader of ``.sql`` files, for every package that keeps SQL next to its code.

* :func:`queries`: a file of named statements (``-- name: x`` starts statement x), e.g.
  ``queries("api.storage")`` for ``api/storage/queries.sql``;
* :func:`sql_files`: a folder of one statement per file, by file name without ``.sql``
  (``dashboard/queries``, ``dashboard/load``);
* :func:`migrations`: a package's ``migrations/NNNN_name.sql``, in version order;
* :func:`statements`: a script split into statements (sqlite3 runs one statement per call;
  ``executescript`` would commit on its own).
"""

from __future__ import annotations

import re
import sqlite3
from functools import cache
from importlib.resources import files

_NAME = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)
_MIGRATION = re.compile(r"(\d{4})_(\w+)")


@cache
def queries(package: str, filename: str = "queries.sql") -> dict[str, str]:
    """Every named statement of one file of ``package``, by name."""
    text = files(package).joinpath(filename).read_text(encoding="utf-8")
    parts = _NAME.split(text)
    return {name: body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}


@cache
def sql_files(package: str, folder: str) -> dict[str, str]:
    """The text of every ``.sql`` file in ``folder`` of ``package``, by name without ``.sql``."""
    return {
        entry.name.removesuffix(".sql"): entry.read_text(encoding="utf-8")
        for entry in sorted(files(package).joinpath(folder).iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".sql")
    }


def migrations(package: str) -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` of every ``migrations/NNNN_name.sql`` of ``package``
    (``api.storage.sqlite``, ``api.storage.postgres``), in version order."""
    found = []
    for stem, sql in sql_files(package, "migrations").items():
        match = _MIGRATION.fullmatch(stem)
        if match:
            found.append((int(match[1]), match[2], sql))
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
