"""The ranges of the engine's numbers: house-rule options, penalties, special results; the
ids of stored rows; and the one way to read a whole number from text.

One source for the engine's validation and for every schema, form and help text that states
a range::

    >>> OPTION_LIMITS["deckel"], 13 in DECKEL, 100 in DECKEL, True in THROWS, str(THROWS)
    (Limit(low=2, high=99), True, False, False, '1–5')

Every number that comes as text (a query, a header, a form field, JSON's long integers) is read
by :func:`read_number`: ASCII digits only, at most :data:`MAX_DIGITS` of them, within a range
(a path id's route pattern admits nothing else either: api/http/blueprint.py).
Python's ``int()`` would take "٣" (an Arabic-Indic three), " 7", "1_000", and raise on "²"
(which ``str.isdigit()`` calls a digit) or on more than 4,300 digits; a database refuses an id
of 2**63 or more. Here each of them is simply no number::

    >>> read_number("42"), read_number("²"), read_number("٣"), read_number(" 7"), read_number("9" * 5000)
    (42, None, None, None, None)
    >>> read_number("0", ID), read_number(str(2**63 - 1), ID), read_number(str(2**63), ID)
    (None, 9223372036854775807, None)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Limit:
    """An inclusive range of whole numbers; ``str()`` writes it the German way: ``"2–99"``."""

    low: int
    high: int

    def __contains__(self, value: object) -> bool:
        return (
            isinstance(value, int)
            and not isinstance(value, bool)
            and self.low <= value <= self.high
        )

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.low, self.high + 1))

    def __str__(self) -> str:
        return f"{self.low}–{self.high}"


#: the pips of one die
PIPS = Limit(1, 6)
#: Deckel in a game (the option ``deckel``)
DECKEL = Limit(2, 99)
#: the most throws a round's starter may use (the option ``max_throws``), so any turn's throws
THROWS = Limit(1, 5)
#: Strafdeckel per violation (the option ``penalty``) and the Deckel of a single penalty
PENALTY = Limit(1, 99)
#: a self-defined special result: its rank on api/rules/RULES.md §10.4's scale, its Deckel, its name's length
SPECIAL_RANK = Limit(1, 999)
SPECIAL_DECKEL = Limit(1, 99)
SPECIAL_NAME = Limit(1, 40)

#: the options that are whole numbers, with their ranges (``penalty`` may also be null)
OPTION_LIMITS: dict[str, Limit] = {"deckel": DECKEL, "max_throws": THROWS, "penalty": PENALTY}

#: the ids of stored rows (games, players, webhooks, deliveries): what a signed 64-bit integer
#: holds (SQLite's INTEGER, PostgreSQL's BIGINT), from 1
ID = Limit(1, 2**63 - 1)
#: a stream's last event id (``Last-Event-ID``): an id, or 0 for "from the start"
EVENT_ID = Limit(0, ID.high)
#: a calendar year asked for (statistics, game lists, the dashboard's year pages)
YEAR = Limit(1900, 2999)
#: a page of a list, and the most rows on one page
PAGE = Limit(1, 100_000)
PAGE_SIZE = Limit(1, 100)
#: the most digits a number written as text may have (enough for any 64-bit integer)
MAX_DIGITS: Final = 20
#: every whole number :func:`read_number` reads when no range is given
ANY_NUMBER = Limit(0, 10**MAX_DIGITS - 1)


def read_number(text: object, limit: Limit = ANY_NUMBER) -> int | None:
    """The whole number ``text`` writes in ASCII digits (at most :data:`MAX_DIGITS`, nothing
    else: no sign, no blank, no other script's digits, no superscripts) if it lies in
    ``limit``; ``None`` for anything else, whatever it is."""
    if not isinstance(text, str) or not 0 < len(text) <= MAX_DIGITS:
        return None
    if not (text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if value in limit else None
