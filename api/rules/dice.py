"""Dice notation: one canonical text form of a result, used in logs, the database and the API.

>>> format_dice((4, 1, 1))
'1-1-4'
>>> parse_dice("1-1-4"), parse_dice("114")
((4, 1, 1), (4, 1, 1))
>>> import re
>>> DICE_PATTERN, bool(re.fullmatch(DICE_PATTERN, format_dice((6, 5, 3))))
('^[1-6](-[1-6]){1,2}$', True)
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import MalformedInput
from .limits import PIPS

_PIP = f"[{PIPS.low}-{PIPS.high}]"
#: the notation of two or three dice as a regular expression (a JSON Schema ``pattern``)
DICE_PATTERN = f"^{_PIP}(-{_PIP}){{1,2}}$"


def format_dice(dice: Iterable[int]) -> str:
    """``(4, 1, 1)`` → ``"1-1-4"``: one canonical notation, pips ascending."""
    return "-".join(str(p) for p in sorted(dice))


def parse_dice(text: str) -> tuple[int, ...]:
    """The inverse of :func:`format_dice`; also accepts ``"114"``. Sorted descending."""
    digits = text.replace("-", "").replace(" ", "")
    if len(digits) not in (2, 3) or not all(
        ch.isascii() and ch.isdigit() and int(ch) in PIPS for ch in digits
    ):
        raise MalformedInput(
            f"„{text}“ sind keine Würfel (erwartet z. B. 1-1-4 oder 114).", code="invalid_dice"
        )
    return tuple(sorted((int(ch) for ch in digits), reverse=True))
