"""Evaluating a final result: category, German name, Deckel value and one comparison key.

A result is a multiset of three pips plus the hand flag ("aus der Hand": the final throw threw
all three dice). Every ruleset has its own precomputed table of all 216 ordered dice (× hand),
so evaluation is a single dictionary look-up::

    >>> from api.rules import PRESETS
    >>> ev = evaluate((4, 1, 1), False, PRESETS["standard"])
    >>> ev.name, ev.deckel, ev.notation
    ('Schock 4', 4, '1-1-4')
    >>> evaluate((5, 3, 6), True, PRESETS["standard"]).name
    'Zahl 653'

The comparison key is one integer, higher is better. It encodes api/rules/RULES.md §10.4's rank scale
(Zahl 100, Straße 200, General 300 or 425, Schock h 400 + 10·h, Schock aus 500, specials where
they are configured), then the height inside the category, then the hand bonus of
"hand beats assembled".
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from enum import StrEnum

from .dice import format_dice, parse_dice
from .errors import MalformedInput
from .ruleset import JULE_SIEBEN, JULE_TOP, Ruleset, SchockAus, Special, Strassen

__all__ = [
    "Category",
    "Evaluation",
    "build_evaluation_table",
    "evaluate",
    "evaluation_table",
    "format_dice",
    "parse_dice",
]


class Category(StrEnum):
    SCHOCK_AUS = "schock_aus"
    SCHOCK = "schock"
    GENERAL = "general"
    STRASSE = "strasse"
    ZAHL = "zahl"
    SPECIAL = "special"

    @property
    def caption(self) -> str:
        """The German name: "Schock aus", "Schock", "General", "Straße", "Zahl", "Sonderwurf".

        A result's name starts with it ("Schock 4", "Zahl 632"); a special result is named
        by the house rules (Jule, Neuner, …)."""
        return _CAPTIONS[self]


_CAPTIONS = {
    Category.SCHOCK_AUS: "Schock aus",
    Category.SCHOCK: "Schock",
    Category.GENERAL: "General",
    Category.STRASSE: "Straße",
    Category.ZAHL: "Zahl",
    Category.SPECIAL: "Sonderwurf",
}

RANK_ZAHL = 100
RANK_STRASSE = 200
RANK_GENERAL = 300
RANK_GENERAL_OVER_SCHOCK2 = 425
RANK_SCHOCK_BASE = 400  # Schock h = 400 + 10·h
RANK_SCHOCK_AUS = 500


@dataclass(frozen=True, slots=True)
class Evaluation:
    """A final result evaluated under one ruleset."""

    dice: tuple[int, ...]  # sorted, descending: (6, 5, 3)
    hand: bool
    category: Category
    name: str
    # Deckel the worst player receives when this is the round's best result. For a result
    # that takes every Deckel (Schock aus under schock_aus="half", Jule "top") it is the
    # game's total and ``takes_all`` is set.
    deckel: int
    takes_all: bool
    key: int  # one comparison key, higher is better
    # worth "all" by nature (Schock aus, Jule "top"), whatever the schock_aus option says:
    # such a result ends the round under schock_aus_ends_round and is never doubled by blind
    worth_all: bool = False
    notation: str = ""  # the canonical text form, pips ascending: "1-1-4"

    @property
    def two_fives(self) -> bool:
        return self.dice.count(5) >= 2

    def to_json(self) -> dict[str, object]:
        return {
            "dice": self.notation,
            "hand": self.hand,
            "category": self.category.value,
            "name": self.name,
            "deckel": self.deckel,
            "takes_all": self.takes_all,
            "key": self.key,
        }


def _key(rank: int, height: int, bonus: bool) -> int:
    return (rank * 1000 + height) * 2 + int(bonus)


def _name(category: Category, height: int | None = None) -> str:
    """A result's German name: its category's caption, then its height ("Schock 4")."""
    return category.caption if height is None else f"{category.caption} {height}"


def _evaluate_sorted(dice: tuple[int, int, int], hand: bool, rules: Ruleset) -> Evaluation:
    a, b, c = dice  # a >= b >= c
    for special in rules.special_results():
        if special.pips == dice and (hand or not _hand_only_jule(special, rules)):
            return _finish(
                dice, hand, Category.SPECIAL, special.name, special.deckel, special.rank, 0, rules
            )
    if a == b == c == 1:
        return _finish(
            dice,
            hand,
            Category.SCHOCK_AUS,
            _name(Category.SCHOCK_AUS),
            None,
            RANK_SCHOCK_AUS,
            0,
            rules,
        )
    if b == c == 1:
        return _finish(
            dice,
            hand,
            Category.SCHOCK,
            _name(Category.SCHOCK, a),
            a,
            RANK_SCHOCK_BASE + 10 * a,
            0,
            rules,
        )
    if a == b == c and (hand or "general" not in rules.hand_only):
        rank = RANK_GENERAL_OVER_SCHOCK2 if rules.general_over_schock2 else RANK_GENERAL
        return _finish(dice, hand, Category.GENERAL, _name(Category.GENERAL), 3, rank, a, rules)
    if a - 1 == b == c + 1 and (hand or "strasse" not in rules.hand_only):
        height = 0 if rules.strassen is Strassen.EQUAL else a
        name = _name(Category.STRASSE)
        return _finish(dice, hand, Category.STRASSE, name, 2, RANK_STRASSE, height, rules)
    number = a * 100 + b * 10 + c
    name = _name(Category.ZAHL, number)
    return _finish(dice, hand, Category.ZAHL, name, 1, RANK_ZAHL, number, rules)


def _hand_only_jule(special: Special, rules: Ruleset) -> bool:
    """Jule counts only from the hand (``hand_only`` with ``jule``, api/rules/RULES.md §10.28):
    assembled, 4-2-1 is the Zahl 421."""
    return "jule" in rules.hand_only and special in (JULE_SIEBEN, JULE_TOP)


def _finish(
    dice: tuple[int, int, int],
    hand: bool,
    category: Category,
    name: str,
    deckel: int | None,
    rank: int,
    height: int,
    rules: Ruleset,
) -> Evaluation:
    worth_all = takes_all = deckel is None
    if takes_all:
        deckel = rules.deckel
        if rules.schock_aus is SchockAus.TOTAL:
            takes_all = False  # "Schock aus kostet 13": a result worth the total, normal caps
    bonus = hand and (
        (category is Category.SCHOCK_AUS and bool(rules.hand_beats_assembled))
        or (category is Category.SCHOCK and "schock" in rules.hand_beats_assembled)
    )
    assert deckel is not None
    key = _key(rank, height, bonus)
    return Evaluation(
        dice, hand, category, name, deckel, takes_all, key, worth_all, format_dice(dice)
    )


def evaluation_table(rules: Ruleset) -> dict[tuple[int, ...], Evaluation]:
    """The ruleset's evaluation table (see :func:`build_evaluation_table`), memoized on it."""
    table = rules._evaluations
    if table is None:
        table = build_evaluation_table(rules)
        object.__setattr__(rules, "_evaluations", table)  # frozen: memoization only
    return table


def build_evaluation_table(rules: Ruleset) -> dict[tuple[int, ...], Evaluation]:
    """Every ordered throw (and the hand flag as a last element) → its evaluation.

    Keys are ``(d1, d2, d3, hand)`` with three dice, or ``(d1, d2, hand)`` under ``two_dice``
    (the imagined third die is the one that gives the highest result, api/rules/RULES.md §10.7).
    """
    full: dict[tuple[int, ...], Evaluation] = {}
    for dice in itertools.product(range(1, 7), repeat=3):
        a, b, c = sorted(dice, reverse=True)
        for hand in (False, True):
            full[(*dice, hand)] = _evaluate_sorted((a, b, c), hand, rules)
    if not rules.two_dice:
        return full
    table: dict[tuple[int, ...], Evaluation] = {}
    for d1, d2 in itertools.product(range(1, 7), repeat=2):
        for hand in (False, True):
            best = max((full[(d1, d2, d3, hand)] for d3 in range(1, 7)), key=lambda e: e.key)
            table[(d1, d2, hand)] = best
    return table


def evaluate(dice: tuple[int, ...] | list[int], hand: bool, rules: Ruleset) -> Evaluation:
    """Evaluate a final result; raises :class:`MalformedInput` for impossible dice."""
    table = rules._evaluations or evaluation_table(rules)
    try:
        return table[(*dice, bool(hand))]
    except (KeyError, TypeError):
        raise MalformedInput(
            f"{list(dice)!r} ist kein gültiger Wurf: erwartet {rules.dice_count} Würfel "
            "mit 1 bis 6 Augen."
        ) from None
