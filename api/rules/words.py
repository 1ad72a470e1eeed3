"""Counted nouns in German: ``count(1, "Spiel", "Spiele")`` → ``"1 Spiel"``.

The one place for "a number and its noun" (the engine's messages, the dashboard): singular for
exactly one, plural otherwise (also for 0 and fractions), thousands grouped the German way
(``44.086 Züge``).
"""

from __future__ import annotations


def number(n: int | float) -> str:
    """``44086`` → ``"44.086"``; a float keeps no decimals (``2.5`` → ``"2"``: round first)."""
    return f"{n:,.0f}".replace(",", ".")


def count(n: int | float, one: str, many: str) -> str:
    """``n`` and the noun in the right number: ``count(1, "Hälfte", "Hälften")`` →
    ``"1 Hälfte"``, ``count(3, …)`` → ``"3 Hälften"``, ``count(1200, "Zug", "Züge")`` →
    ``"1.200 Züge"``."""
    return f"{number(n)} {one if n == 1 else many}"
