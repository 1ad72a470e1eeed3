"""``schocken demo``: a Stammtisch with ten years of simulated weekly games.

The Stammtisch and its players are created through the service layer (as over HTTP); the games
are played by the engine's simulator (:mod:`api.rules.simulate`) and stored by the import use
case (as ``POST …/imports``), all in one transaction, one every Friday at 20:00 Berlin time. Attendance changes: regulars
come with their own probability, Heinz joins in the second year, Gabi in the middle of the
fourth, Frank stops after the seventh (and is retired), and every evening has 6 to 8 players.
The games of the last two years are recorded throw by throw (the same dice: the simulator draws
them either way), so that the statistics can rate decisions too.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, TypedDict
from zoneinfo import ZoneInfo

from api.domain import Conflict, GameCache, Services
from api.rules import PRESETS, simulate_game, to_log
from api.storage import MemoryStore, Repository, SQLiteStore
from api.storage.records import Stammtisch

from .readmodel import refresh

if TYPE_CHECKING:
    from api.storage import PostgresStore

BERLIN = ZoneInfo("Europe/Berlin")
#: the last weeks, two years, whose games are recorded throw by throw (the table has an app
#: since): the luck figures rate their decisions too (api/rules/RULES.md §13)
DETAILED_WEEKS = 2 * 52


@dataclass(frozen=True, slots=True)
class Regular:
    name: str
    attends: float  # probability of coming on a given Friday
    joins: int = 0  # first week (counted from the first Friday)
    leaves: int | None = None  # first week no longer there


def regulars(weeks_per_year: int = 52) -> list[Regular]:
    y = weeks_per_year
    return [
        Regular("Anna", 0.95),
        Regular("Bert", 0.85),
        Regular("Clara", 0.9),
        Regular("Dieter", 0.8),
        Regular("Elke", 0.75),
        Regular("Frank", 0.7, leaves=7 * y),
        Regular("Gabi", 0.85, joins=3 * y + 26),
        Regular("Heinz", 0.6, joins=y),
        Regular("Ingrid", 0.45),
    ]


def fridays(first_year: int, years: int) -> list[datetime]:
    """Every Friday 20:00 (Berlin, with its offset) of ``years`` calendar years."""
    day = date(first_year, 1, 1)
    day += timedelta(days=(4 - day.weekday()) % 7)
    out = []
    while day.year < first_year + years:
        out.append(datetime(day.year, day.month, day.day, 20, 0, tzinfo=BERLIN))
        day += timedelta(days=7)
    return out


def evening(week: int, people: list[Regular], rng: random.Random) -> list[str]:
    """Who sits at the table this week: 6 to 8 of the players active then, in seat order."""
    active = [p for p in people if p.joins <= week and (p.leaves is None or week < p.leaves)]
    present = [p for p in active if rng.random() < p.attends]
    absent = sorted((p for p in active if p not in present), key=lambda p: -p.attends)
    while len(present) < 6 and absent:
        present.append(absent.pop(0))
    rng.shuffle(present)
    return [p.name for p in present[:8]]


class Demo(TypedDict):
    """What :func:`create_demo` made."""

    slug: str
    token: str  # the Stammtisch's write token (shown only once)
    games: int
    turns: int
    years: tuple[int, int]  # first and last calendar year


def _play(
    svc: Services,
    repo: Repository,
    st: Stammtisch,
    people: list[Regular],
    evenings: list[datetime],
    rng: random.Random,
    progress: Callable[[int, int], None] | None,
) -> tuple[int, int]:
    """Simulate a game on every evening and import them all in one transaction; returns the
    games and turns stored."""
    rules = PRESETS["standard"]
    turns = 0
    with repo.transaction():
        for week, at in enumerate(evenings):
            names = evening(week, people, rng)
            starter = names[int(rng.random() * len(names))]
            detail = week >= len(evenings) - DETAILED_WEEKS  # the last two years: an app
            game = simulate_game(
                rules, names, starter, rng, detail=detail, played_at=at.isoformat()
            )
            log = to_log(game)
            svc.import_game(st, log)
            turns += sum(1 for e in log["events"] if "penalty" not in e)
            if progress:
                progress(week + 1, len(evenings))
    return len(evenings), turns


def create_demo(
    store: SQLiteStore | MemoryStore | PostgresStore,
    *,
    slug: str = "demo",
    name: str = "Demo-Stammtisch „Zur Post“",
    years: int = 10,
    seed: int = 1,
    first_year: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Demo:
    """Create the demo Stammtisch in a store; returns slug, token and counts."""
    repo = store.repository()
    try:
        svc = Services(repo, GameCache(16))
        if repo.get_stammtisch(slug) is not None:
            raise Conflict(f"Den Stammtisch „{slug}“ gibt es schon.")
        st, token = svc.create_stammtisch(
            {"name": name, "slug": slug, "private": False, "rules": {"preset": "standard"}}
        )
        people = regulars()
        ids = {p.name: svc.add_player(st, p.name).id for p in people}
        rng = random.Random(seed)
        first = first_year if first_year is not None else date.today().year - years
        evenings = fridays(first, years)
        games, turns = _play(svc, repo, st, people, evenings, rng, progress)
        for p in people:
            if p.leaves is not None and p.leaves < len(evenings):
                svc.update_player(st, ids[p.name], {"retired": True})
        # its statistics computed now, as the refresher would: the first visit of the demo's
        # pages need not wait for the refresher's round (a request never computes them)
        refresh(repo)
        return {
            "slug": st.slug,
            "token": token,
            "games": games,
            "turns": turns,
            "years": (first, first + years - 1),
        }
    finally:
        repo.close()
