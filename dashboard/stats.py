"""The statistics: named SQL queries over the fact tables, run with bound parameters.

Every query lives in ``dashboard/queries/<name>.sql`` and takes ``$stammtisch_id`` and ``$year``
(``None`` for all time) plus, for some, ``$min_games`` or ``$limit``. :class:`Statistics` runs
them on one connection (a DuckDB cursor; the benchmark also runs them on ``sqlite3``, which
understands the same SQL) and shapes the rows into plain dicts. The JSON endpoints and the
static site both call this module, so they always show the same numbers.

Only finished games count. A game's year is its calendar year at the table (``games.year``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any, Protocol, TypedDict

from api.rules import Category, Evaluation, Ruleset, evaluate
from api.storage.sql import sql_files

#: the safest player needs at least this share of the period's games (rounded up, at least 1)
MIN_GAMES_SHARE = Fraction(1, 4)
#: rows per record list
RECORD_LIMIT = 5

#: one row of a query: column name → value
Row = dict[str, Any]


def _one_throw() -> dict[Category, list[Evaluation]]:
    """The engine's evaluation of every ordered throw of three dice in the default order
    (a default :class:`~api.rules.Ruleset`: no special results), by category."""
    rules = Ruleset()
    found: dict[Category, list[Evaluation]] = {}
    for dice in itertools.product(range(1, 7), repeat=3):
        ev = evaluate(dice, False, rules)
        found.setdefault(ev.category, []).append(ev)
    return found


_ONE_THROW = _one_throw()
#: categories of one throw of three dice, read from the dice in the default order: the engine's
#: categories (in their order) that some throw has there – every one but the special results
CATEGORIES: tuple[str, ...] = tuple(c.value for c in Category if c in _ONE_THROW)
#: the engine's German name of each category (its results' names start with it: "Schock 4")
SHORT_NAMES: dict[str, str] = {c: Category(c).caption for c in CATEGORIES}
#: the names the statistics show; a Schock's height is part of its result's name
CATEGORY_NAMES: dict[str, str] = {
    c: f"{SHORT_NAMES[c]} (6 bis 2)" if c == Category.SCHOCK else SHORT_NAMES[c] for c in CATEGORIES
}
#: exact probabilities of one throw of three dice (RULES.md section 2): 216 equally likely outcomes
PROBABILITIES: dict[str, Fraction] = {
    c: Fraction(len(_ONE_THROW[Category(c)]), 6**3) for c in CATEGORIES
}

_PARAM = re.compile(r"\$(\w+)")
#: the columns of a Verlierer des Jahres ranking row
RANKING_FIELDS = (
    "rank", "player_id", "name", "games_played", "games_lost", "share_lost", "halves_lost",
    "safe_rank",
)  # fmt: skip


class Cursor(Protocol):
    """The result of :meth:`Connection.execute`."""

    @property
    def description(self) -> Sequence[Sequence[Any]]: ...

    def fetchall(self) -> Sequence[Sequence[Any]]: ...


class Connection(Protocol):
    """What a DuckDB cursor and an ``sqlite3`` connection have in common."""

    def execute(self, sql: str, parameters: Mapping[str, Any] = ..., /) -> Cursor: ...


class Verlierer(TypedDict):
    ranking: list[Row]
    verlierer: list[Row]
    safest: list[Row]
    min_games: int


class CategoryInfo(TypedDict):
    category: str
    name: str
    probability: float
    outcomes: int


class Tally(TypedDict):
    """Fair one-throw results of a player (``player_id`` ``None``: everybody) per category."""

    player_id: int | None
    name: str
    counts: dict[str, int]


class CategoryThrows(Tally):
    throws: int
    expected: dict[str, float]


class Categories(TypedDict):
    categories: list[CategoryInfo]
    players: list[CategoryThrows]
    total: CategoryThrows


class Records(TypedDict):
    longest_games: list[Row]
    most_schock_aus: list[Row]
    most_deckel_in_half: list[Row]


class Period(TypedDict):
    """Everything of one period (:meth:`Statistics.collect`)."""

    overview: Row
    verlierer: Verlierer
    players: list[Row]
    categories: Categories
    head_to_head: list[Row]
    records: Records
    trend: list[Row]
    attendance: list[Row]


@dataclass(frozen=True, slots=True)
class Query:
    name: str
    sql: str
    params: frozenset[str]


@cache
def queries() -> dict[str, Query]:
    """Every query of ``dashboard/queries``, by file name without ``.sql``."""
    found = {}
    for name, text in sql_files("dashboard", "queries").items():
        sql = text.strip()
        found[name] = Query(name, sql, frozenset(_PARAM.findall(sql)))
    return found


def run(conn: Connection, name: str, **params: Any) -> list[Row]:
    """Run one named query with bound parameters; rows as dicts (column name → value)."""
    query = queries()[name]
    missing = query.params - params.keys()
    if missing:
        raise TypeError(f"query {name} needs {', '.join(sorted(missing))}")
    cur = conn.execute(query.sql, {k: params[k] for k in query.params})
    columns = [d[0] for d in cur.description]
    return [dict(zip(columns, row, strict=True)) for row in cur.fetchall()]


def min_games(games: int) -> int:
    """Games the safest player must have played: a quarter of the period's games, at least 1."""
    return max(1, math.ceil(games * MIN_GAMES_SHARE))


class Statistics:
    """All statistics of one Stammtisch, per calendar year (``year``) or all time (``None``)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def _run(self, name: str, stammtisch_id: int, year: int | None, **extra: Any) -> list[Row]:
        return run(self.conn, name, stammtisch_id=stammtisch_id, year=year, **extra)

    # ------------------------------------------------------------------ listings
    def stammtische(self, include_private: bool = False) -> list[Row]:
        return [
            {**row, "private": bool(row["private"])}
            for row in run(self.conn, "stammtische", include_private=include_private)
        ]

    def years(self, stammtisch_id: int) -> list[Row]:
        return run(self.conn, "years", stammtisch_id=stammtisch_id)

    # ------------------------------------------------------------------ statistics
    def overview(self, stammtisch_id: int, year: int | None) -> Row:
        return {"year": year, **self._run("overview", stammtisch_id, year)[0]}

    def players(self, stammtisch_id: int, year: int | None, games: int) -> list[Row]:
        """Per player stats with both ranks; ``games`` is the number of finished games in the
        period (see :meth:`overview`), which sets the minimum for the safest player."""
        return self._run("player_stats", stammtisch_id, year, min_games=min_games(games))

    def verlierer(
        self,
        stammtisch_id: int,
        year: int | None,
        games: int,
        players: list[Row] | None = None,
    ) -> Verlierer:
        """The ranking, the Verlierer des Jahres (rank 1, may be shared) and the safest player(s).

        ``players`` are the rows of :meth:`players` when the caller has them already."""
        rows = players if players is not None else self.players(stammtisch_id, year, games)
        ranking = [
            {k: row[k] for k in RANKING_FIELDS}
            for row in sorted(rows, key=lambda r: (r["rank"], r["name"], r["player_id"]))
        ]
        safest = [r for r in ranking if r["safe_rank"] == 1]
        return {
            "ranking": ranking,
            "verlierer": [r for r in ranking if r["rank"] == 1 and r["games_lost"] > 0],
            "safest": safest,
            "min_games": min_games(games),
        }

    def categories(self, stammtisch_id: int, year: int | None) -> Categories:
        """Fair one-throw results per player and in total, against the exact probabilities."""
        by_player: dict[int, Tally] = {}
        for row in self._run("categories", stammtisch_id, year):
            entry = by_player.setdefault(
                row["player_id"],
                {
                    "player_id": row["player_id"],
                    "name": row["name"],
                    "counts": dict.fromkeys(CATEGORIES, 0),
                },
            )
            entry["counts"][row["category"]] = row["throws"]
        total = dict.fromkeys(CATEGORIES, 0)
        players = []
        for entry in by_player.values():
            for cat, n in entry["counts"].items():
                total[cat] += n
            players.append(_with_expected(entry))
        return {
            "categories": [
                {
                    "category": cat,
                    "name": CATEGORY_NAMES[cat],
                    "probability": float(PROBABILITIES[cat]),
                    "outcomes": int(PROBABILITIES[cat] * 216),
                }
                for cat in CATEGORIES
            ],
            "players": players,
            "total": _with_expected({"player_id": None, "name": "Alle", "counts": total}),
        }

    def head_to_head(self, stammtisch_id: int, year: int | None) -> list[Row]:
        return self._run("head_to_head", stammtisch_id, year)

    def records(self, stammtisch_id: int, year: int | None) -> Records:
        return {
            "longest_games": self._run(
                "record_longest_games", stammtisch_id, year, limit=RECORD_LIMIT
            ),
            "most_schock_aus": self._run(
                "record_schock_aus", stammtisch_id, year, limit=RECORD_LIMIT
            ),
            "most_deckel_in_half": self._run(
                "record_deckel_half", stammtisch_id, year, limit=RECORD_LIMIT
            ),
        }

    def trend(self, stammtisch_id: int, year: int | None) -> list[Row]:
        return self._run("trend_month", stammtisch_id, year)

    def attendance(self, stammtisch_id: int, year: int | None) -> list[Row]:
        return self._run("attendance_year", stammtisch_id, year)

    def collect(self, stammtisch_id: int, year: int | None) -> Period:
        """Everything of one period, as the site and ``/statistics`` show it."""
        overview = self.overview(stammtisch_id, year)
        players = self.players(stammtisch_id, year, overview["games"])
        return {
            "overview": overview,
            "verlierer": self.verlierer(stammtisch_id, year, overview["games"], players),
            "players": players,
            "categories": self.categories(stammtisch_id, year),
            "head_to_head": self.head_to_head(stammtisch_id, year),
            "records": self.records(stammtisch_id, year),
            "trend": self.trend(stammtisch_id, year),
            "attendance": self.attendance(stammtisch_id, year),
        }


def _with_expected(entry: Tally) -> CategoryThrows:
    n = sum(entry["counts"].values())
    expected = {cat: float(n * PROBABILITIES[cat]) for cat in CATEGORIES}
    return {**entry, "throws": n, "expected": expected}
