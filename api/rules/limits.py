"""The ranges of the engine's numbers: house-rule options, penalties, special results.

One source for the engine's validation and for every schema, form and help text that states
a range::

    >>> OPTION_LIMITS["deckel"], 13 in DECKEL, 100 in DECKEL, True in THROWS, str(THROWS)
    (Limit(low=2, high=99), True, False, False, '1–5')
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass


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
#: a self-defined special result: its rank on RULES 10.4's scale, its Deckel, its name's length
SPECIAL_RANK = Limit(1, 999)
SPECIAL_DECKEL = Limit(1, 99)
SPECIAL_NAME = Limit(1, 40)

#: the options that are whole numbers, with their ranges (``penalty`` may also be null)
OPTION_LIMITS: dict[str, Limit] = {"deckel": DECKEL, "max_throws": THROWS, "penalty": PENALTY}
