"""The German explanations of every house-rule option and preset, shown to players.

Readings this project takes where the sources leave room (api/rules/RULES.md §10) are spelled out
here and in the comments of :class:`~api.rules.ruleset.Ruleset`.
"""

from __future__ import annotations

from .limits import DECKEL, THROWS

#: short German titles of the house-rule options (:data:`OPTION_HELP` explains each one; the
#: form's menus and :mod:`.prose` name the options by them)
OPTION_TITLES: dict[str, str] = {
    "deckel": "Deckel im Spiel",
    "max_throws": "Höchstzahl Würfe",
    "sixes_turning": "Sechsen umdrehen",
    "ones_only_aside": "Nur Einsen herauslegen",
    "general_over_schock2": "General über Schock 2",
    "strassen": "Straßen",
    "hand_only": "Zählt nur aus der Hand",
    "hand_beats_assembled": "Aus der Hand schlägt zusammengelegt",
    "ties": "Gleichstand",
    "jule": "Jule (4-2-1)",
    "specials": "Sonderwürfe",
    "two_fives_never_lose": "Zwei Fünfen verlieren nie",
    "schock_aus": "Schock aus",
    "schock_aus_ends_round": "Schock aus beendet die Runde",
    "passing_on": "Deckel weitergeben",
    "next_starter": "Wer beginnt die nächste Runde",
    "finale_opener": "Wer beginnt das Finale",
    "blind": "Blind spielen",
    "penalty": "Strafdeckel",
    "penalty_mode": "Art der Strafe",
    "two_dice": "Mit zwei Würfeln",
}

OPTION_HELP: dict[str, str] = {
    "deckel": f"Anzahl der Deckel im Spiel ({DECKEL}, üblich 13).",
    "max_throws": f"Höchstzahl der Würfe des Startspielers ({THROWS}; Bördeschock: 5).",
    "sixes_turning": "Zwei Sechsen eines Wurfs dürfen zu einer Eins umgedreht werden "
    "(drei Sechsen zu zwei Einsen); danach muss weitergewürfelt werden.",
    "ones_only_aside": "Nur Einsen dürfen herausgelegt werden.",
    "general_over_schock2": "Ein General ist höher als Schock 2 (aber niedriger als Schock 3).",
    "strassen": "Straßen nach Höhe (4-5-6 vor 3-4-5 …) oder alle gleich.",
    "hand_only": "Diese Würfe zählen nur aus der Hand; zusammengelegt sind sie eine Zahl.",
    "hand_beats_assembled": "Bei gleichem Wurf schlägt der Wurf aus der Hand den "
    "zusammengelegten („Naturschock“).",
    "ties": "Gleichstand: mehr Würfe verliert, bei gleich vielen wird die Runde wiederholt; "
    "oder der spätere verliert, außer er brauchte weniger Würfe; oder wer zuerst geworfen "
    "hat, gewinnt.",
    "jule": "Jule 4-2-1: keine (4-2-1 ist eine Zahl), ganz oben und kostet alle Deckel, "
    "oder „scharfe Sieben“ zwischen Schock 6 und Schock aus für 7 Deckel.",
    "specials": "Eigene Sonderwürfe: Neuner (2-2-1, 9 Deckel), Siebener (2-2-1, 7 Deckel), "
    "Achter (3-3-1, 8 Deckel) oder selbst definierte mit Augen, Rang und Deckel.",
    "two_fives_never_lose": "Zwei Fünfen verlieren nie.",
    "schock_aus": "Schock aus: der Verlierer bekommt alle Deckel und verliert die Hälfte, "
    "oder Schock aus kostet so viele Deckel, wie im Spiel sind.",
    "schock_aus_ends_round": "Ein Schock aus beendet die Runde sofort; wer noch nicht "
    "geworfen hat, wirft nicht mehr.",
    "passing_on": "Deckel weitergeben: wer den besten Wurf hat und Deckel besitzt, gibt "
    "eigene Deckel ab, auch solange die Mitte nicht leer ist.",
    "next_starter": "Wer die nächste Runde beginnt: der Verlierer der Runde oder wer "
    "zuletzt Deckel bekommen hat.",
    "finale_opener": "Wer das Finale beginnt: der Verlierer der zweiten Hälfte oder der "
    "der ersten.",
    "blind": "Blind erlaubt: nur ein Wurf, der beste Wurf der Runde zählt doppelt.",
    "penalty": "Strafdeckel je Regelverstoß (leer: keine feste Zahl).",
    "penalty_mode": "Strafe: Deckel aus der Mitte, oder der Sünder verliert die Runde.",
    "two_dice": "Mit zwei Würfeln: der dritte wird so gedacht, dass er am besten passt.",
}

PRESET_HELP: dict[str, str] = {
    "standard": "Rheinische Grundregeln (Knobeln – Schocken, die Regeln)",
    "wikipedia": "Nach Wikipedia: Sechsen umdrehen, Naturschock, der spätere verliert",
    "bvb": "Borussia-Dortmund-Regeln: General über Schock 2, wer zuerst wirft, gewinnt",
    "hennef": "Turnierregeln der Deutschen Schockmeisterschaft (Hennef)",
    "wolbeck": "Hausregeln der Alten Knobelschule Wolbeck: Jule als scharfe Sieben",
    "party": "Partyausgabe „Trainingslager“",
    "nrw": "Antrag zur Vereinheitlichung der NRW-Regeln: Schock aus beendet die Runde, "
    "zwei Fünfen verlieren nie",
}
