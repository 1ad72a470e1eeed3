"""Load named SQL from the ``.sql`` files of this package (``-- name: x`` starts query x)."""

from __future__ import annotations

import re
from functools import cache
from importlib.resources import files

_NAME = re.compile(r"^-- name: (\w+)\s*$", re.MULTILINE)


@cache
def queries(filename: str = "queries.sql") -> dict[str, str]:
    """Every named query of one file, by name."""
    text = files(__package__).joinpath(filename).read_text(encoding="utf-8")
    parts = _NAME.split(text)
    return {name: body.strip() for name, body in zip(parts[1::2], parts[2::2], strict=True)}


def migrations() -> list[tuple[int, str, str]]:
    """``(version, name, sql)`` of every migration file, in version order."""
    found = []
    for entry in files(__package__).joinpath("migrations").iterdir():
        match = re.fullmatch(r"(\d{4})_(\w+)\.sql", entry.name)
        if match:
            found.append((int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found)
