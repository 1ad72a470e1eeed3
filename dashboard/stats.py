"""The statistics: named set-based SQL queries over the fact tables, shaped per period.

Every query lives in ``dashboard/queries/<name>.sql`` and computes every Stammtisch and period
its connection holds in one pass: each fact row counts for its (stammtisch_id, year) and for
(stammtisch_id, all time) (a ``UNION ALL`` of the rows with ``period`` = year and = 0), every
GROUP BY / PARTITION BY has stammtisch_id and period, record lists are the top rows by
``row_number()`` (all time ranks the years' top rows). The SQL is portable: DuckDB computes it
(:mod:`dashboard.readmodel`), the benchmark runs the same files on ``sqlite3``.
:func:`compute` runs each query once (:data:`SET_QUERIES`) and shapes the rows into one
:class:`Period` per (Stammtisch, year or ``None``); :class:`Statistics` offers them per
Stammtisch and period on one connection (tests, the retired DuckDB store).

Only finished games count. A game's year is its calendar year at the table (``games.year``).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
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
#: exact probabilities of one throw of three dice (api/rules/RULES.md §2): 216 equally likely outcomes
PROBABILITIES: dict[str, Fraction] = {
    c: Fraction(len(_ONE_THROW[Category(c)]), 6**3) for c in CATEGORIES
}

_RATIOS = {c: (p.numerator, p.denominator) for c, p in PROBABILITIES.items()}
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
    luck: list[Row]


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


#: the set-based queries: every Stammtisch and period in one pass each (see the module text)
SET_QUERIES = (
    "overview", "player_stats", "categories", "head_to_head", "record_longest_games",
    "record_schock_aus", "record_deckel_half", "trend_month", "attendance_year", "luck",
)  # fmt: skip
#: queries whose all-time rows are those of every year in turn (computed once, per year)
YEARLY_ONLY = ("trend_month", "attendance_year")
#: (stammtisch_id, year), year ``None``: all time
Key = tuple[int, int | None]
#: the overview of a period without finished games
EMPTY_OVERVIEW: Row = {
    "games": 0, "rounds": 0, "turns": 0, "blattschuss": 0, "finals": 0,
    "first_game": None, "last_game": None, "players": 0,
}  # fmt: skip


def _by_period(rows: list[Row]) -> dict[Key, list[Row]]:
    """Rows of a set-based query by (stammtisch_id, year); period 0 (all time) → ``None``."""
    out: dict[Key, list[Row]] = {}
    for row in rows:
        stammtisch_id, period = row.pop("stammtisch_id"), row.pop("period")
        out.setdefault((int(stammtisch_id), int(period) or None), []).append(row)
    return out


#: the parameters of the set-based queries
PARAMS = {
    "limit": RECORD_LIMIT,
    "share_num": MIN_GAMES_SHARE.numerator,
    "share_den": MIN_GAMES_SHARE.denominator,
}


def compute(
    conn: Connection,
    stammtisch_ids: Iterable[int] = (),
    results: Mapping[str, list[Row]] | None = None,
) -> dict[Key, Period]:
    """Every period of every Stammtisch whose rows ``conn`` holds: each query of
    :data:`SET_QUERIES` runs once over all of them (or ``results`` has their rows already),
    its rows are grouped per (Stammtisch, period) and shaped as :meth:`Statistics.collect`
    returns them. ``stammtisch_ids`` get an all-time period even without a finished game."""
    if results is None:
        results = {name: run(conn, name, **PARAMS) for name in SET_QUERIES}
    found = {name: _by_period(results[name]) for name in SET_QUERIES}
    keys = set(found["overview"]) | {(int(s), None) for s in stammtisch_ids}
    for name in YEARLY_ONLY:  # all time: the years' rows one after the other
        rows = found[name]
        for st, year in sorted(k for k in keys if k[1] is not None):
            rows.setdefault((st, None), []).extend(rows.get((st, year), []))
    return {
        key: shape(key[1], {name: rows.get(key, []) for name, rows in found.items()})
        for key in sorted(keys, key=lambda k: (k[0], k[1] or 0))
    }


def shape(year: int | None, rows: Mapping[str, list[Row]]) -> Period:
    """One period from the rows of the set-based queries (without their key columns)."""
    overview = {"year": year, **(rows["overview"][0] if rows["overview"] else EMPTY_OVERVIEW)}
    players = rows["player_stats"]
    return {
        "overview": overview,
        "verlierer": verlierer(players, overview["games"]),
        "players": players,
        "categories": categories(rows["categories"]),
        "head_to_head": rows["head_to_head"],
        "records": {
            "longest_games": rows["record_longest_games"],
            "most_schock_aus": rows["record_schock_aus"],
            "most_deckel_in_half": rows["record_deckel_half"],
        },
        "trend": rows["trend_month"],
        "attendance": rows["attendance_year"],
        "luck": rows["luck"],
    }


def empty_period(year: int | None) -> Period:
    """A period without finished games."""
    return shape(year, dict.fromkeys(SET_QUERIES, []))


def verlierer(players: list[Row], games: int) -> Verlierer:
    """The ranking, the Verlierer des Jahres (rank 1, may be shared) and the safest player(s),
    from the rows of ``player_stats`` of a period with ``games`` finished games."""
    ranking = [
        {k: row[k] for k in RANKING_FIELDS}
        for row in sorted(players, key=lambda r: (r["rank"], r["name"], r["player_id"]))
    ]
    return {
        "ranking": ranking,
        "verlierer": [r for r in ranking if r["rank"] == 1 and r["games_lost"] > 0],
        "safest": [r for r in ranking if r["safe_rank"] == 1],
        "min_games": min_games(games),
    }


def categories(rows: list[Row]) -> Categories:
    """Fair one-throw results per player and in total, against the exact probabilities."""
    by_player: dict[int, Tally] = {}
    for row in rows:
        entry = by_player.setdefault(
            row["player_id"],
            {"player_id": row["player_id"], "name": row["name"],
             "counts": dict.fromkeys(CATEGORIES, 0)},
        )  # fmt: skip
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


class Statistics:
    """All statistics of the Stammtische whose rows a connection holds, computed at the first
    question (:func:`compute`), per calendar year (``year``) or all time (``None``)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._periods: dict[Key, Period] | None = None

    def periods(self) -> dict[Key, Period]:
        if self._periods is None:
            ids = [row["id"] for row in self.stammtische(include_private=True)]
            self._periods = compute(self.conn, ids)
        return self._periods

    def stammtische(self, include_private: bool = False) -> list[Row]:
        return [
            {**row, "private": bool(row["private"])}
            for row in run(self.conn, "stammtische", include_private=include_private)
        ]

    def years(self, stammtisch_id: int) -> list[Row]:
        """Years with finished games, newest first."""
        found = [
            {"year": year, "games": period["overview"]["games"]}
            for (st, year), period in self.periods().items()
            if st == stammtisch_id and year is not None
        ]
        return sorted(found, key=lambda r: -r["year"])

    def collect(self, stammtisch_id: int, year: int | None) -> Period:
        """Everything of one period, as the site and ``/statistics`` show it."""
        found = self.periods().get((stammtisch_id, year))
        return found if found is not None else empty_period(year)

    def overview(self, stammtisch_id: int, year: int | None) -> Row:
        return self.collect(stammtisch_id, year)["overview"]

    def players(self, stammtisch_id: int, year: int | None, games: int | None = None) -> list[Row]:
        return self.collect(stammtisch_id, year)["players"]

    def verlierer(
        self, stammtisch_id: int, year: int | None, games: int | None = None
    ) -> Verlierer:
        return self.collect(stammtisch_id, year)["verlierer"]

    def categories(self, stammtisch_id: int, year: int | None) -> Categories:
        return self.collect(stammtisch_id, year)["categories"]

    def head_to_head(self, stammtisch_id: int, year: int | None) -> list[Row]:
        return self.collect(stammtisch_id, year)["head_to_head"]

    def records(self, stammtisch_id: int, year: int | None) -> Records:
        return self.collect(stammtisch_id, year)["records"]

    def trend(self, stammtisch_id: int, year: int | None) -> list[Row]:
        return self.collect(stammtisch_id, year)["trend"]

    def attendance(self, stammtisch_id: int, year: int | None) -> list[Row]:
        return self.collect(stammtisch_id, year)["attendance"]

    def luck(self, stammtisch_id: int, year: int | None) -> list[Row]:
        return self.collect(stammtisch_id, year)["luck"]


def _with_expected(entry: Tally) -> CategoryThrows:
    n = sum(entry["counts"].values())
    # n · p as the nearest float, as float(n * Fraction) but without Fraction arithmetic
    expected = {cat: n * _RATIOS[cat][0] / _RATIOS[cat][1] for cat in CATEGORIES}
    return {**entry, "throws": n, "expected": expected}
