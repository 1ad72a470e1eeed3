"""Names and reasons as people type them: one normal form, nothing invisible, no look-alikes.

A name is shown on phones, in charts, logs and CSV exports, and compared with the other names
of its Stammtisch. So a new name is

* **normalized**: Unicode NFC (an "ü" typed as u + combining diaeresis is the same "ü"), white
  space of any kind becomes one ordinary space, none at either end;
* **visible**: no control characters, no invisible format characters (zero-width spaces and
  joiners, byte-order marks), no bidirectional overrides or isolates (which reorder what a
  reader sees), no private-use or unassigned code points, and at least one letter, digit,
  mark or symbol that shows;
* **in one alphabet** among those with look-alike letters: Latin, Greek and Cyrillic letters
  are not mixed in one name (a Cyrillic "А" in "Аnna");
* **compared by its key** (:func:`name_key`): case-folded compatibility form with the Greek
  and Cyrillic letters that look like Latin ones read as those, so "Jürgen" typed twice in two
  normal forms, "ANNA" beside "Anna", or an all-Cyrillic "АВС" beside "ABC" are one name.

A reason (of a penalty or an undo) is free text but one line of visible text as well: no
control characters (NUL, line breaks, ESC) and no bidirectional controls.

Pure standard library (:mod:`unicodedata`); the checks return German messages or ``None``.
"""

from __future__ import annotations

import re
import unicodedata

#: the bidirectional controls: embeddings, overrides, isolates and marks
BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
#: letters and blanks that show as nothing although their category says otherwise
INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
#: alphabets whose letters look alike: no name mixes two of them
CONFUSABLE_SCRIPTS = ("LATIN", "GREEK", "CYRILLIC")
#: Greek and Cyrillic letters read as the Latin letter they look like (in name keys, after
#: case-folding: lower case only)
_LOOK_ALIKES = str.maketrans(
    "авекмнорстухіјѕԁһӏɑαβεζηικμνορτυχ",
    "abekmhopctyxijsdhlaabeznikmvoptux",
)
_SPACES = re.compile(r"\s+")


def _script(char: str) -> str | None:
    """The look-alike alphabet of a letter ("LATIN", "GREEK", "CYRILLIC"), else None."""
    if not unicodedata.category(char).startswith("L"):
        return None
    first = unicodedata.name(char, "").split(" ", 1)[0]
    return first if first in CONFUSABLE_SCRIPTS else None


def _hidden(char: str) -> bool:
    """Control, format, private-use, surrogate or unassigned: nothing a reader can see."""
    return char in INVISIBLE or unicodedata.category(char) in {"Cc", "Cf", "Co", "Cs", "Cn"}


def normalize_name(text: str) -> str:
    """NFC, every run of white space one space, trimmed."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", text)).strip()


def name_problem(name: str) -> str | None:
    """Why ``name`` (normalized) cannot be a name, in German, or None if it can."""
    if not name:
        return "Der Name ist leer."
    if any(char in BIDI_CONTROLS for char in name):
        return "Der Name enthält Steuerzeichen für die Schreibrichtung; bitte ohne sie eingeben."
    if any(_hidden(char) for char in name):
        return "Der Name enthält unsichtbare Zeichen oder Steuerzeichen; bitte ohne sie eingeben."
    if not any(unicodedata.category(c)[0] in "LNSP" for c in name):
        return "Der Name ist unsichtbar; bitte mit sichtbaren Buchstaben eingeben."
    scripts = {script for script in map(_script, name) if script is not None}
    if len(scripts) > 1:
        return (
            "Der Name mischt lateinische, griechische oder kyrillische Buchstaben, die gleich "
            "aussehen (wie ein kyrillisches „А“ in „Anna“); bitte in einer Schrift schreiben."
        )
    return None


def name_key(name: str) -> str:
    """What two names are compared by: "Jürgen" = "JÜRGEN" = "Ju\u0308rgen", "АВС" = "ABC"."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return _SPACES.sub(" ", folded.translate(_LOOK_ALIKES)).strip()


def reason_problem(reason: str) -> str | None:
    """Why ``reason`` cannot be kept as a reason (one line of visible text), or None."""
    if any(char in BIDI_CONTROLS for char in reason):
        return "Der Grund enthält Steuerzeichen für die Schreibrichtung; bitte ohne sie eingeben."
    if any(unicodedata.category(char) == "Cc" for char in reason):
        return (
            "Der Grund enthält Zeilenumbrüche oder Steuerzeichen; bitte in einer Zeile und "
            "ohne sie eingeben."
        )
    return None


__all__ = ["name_key", "name_problem", "normalize_name", "reason_problem"]
