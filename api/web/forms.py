"""Form fields ↔ service input: house-rule choices, turn entries, German labels.

Nothing here decides a rule. Options offer the values the engine knows (its own validation
rejects anything else); a turn form becomes the same turn summary the REST API accepts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from itertools import combinations
from typing import Any, TypeVar

from ..http.blueprint import JsonRefused, read_json
from ..rules import (
    HAND_BEATS_VALUES,
    HAND_ONLY_VALUES,
    NAMED_SPECIALS,
    OPTION_HELP,
    OPTION_NAMES,
    OPTION_TITLES,
    PRESET_HELP,
    PRESETS,
    Category,
    FinaleOpener,
    Jule,
    NextStarter,
    PenaltyMode,
    Ruleset,
    SchockAus,
    Strassen,
    Ties,
    join_words,
    limits,
    read_number,
    throws_word,
)
from ..table.entry import FormErrors as FormErrors  # the pages import it from here

Choices = list[tuple[Any, str]]
E = TypeVar("E", bound=StrEnum)
_YES_NO: Choices = [(True, "ja"), (False, "nein")]


def _labelled(labels: Mapping[E, str]) -> Choices:
    """Every value of one of the engine's options, in its order, with its German label
    (a value without a label fails here, at import)."""
    option = type(next(iter(labels)))
    return [(member.value, labels[member]) for member in option]


def _subsets(values: tuple[str, ...], none: str, label: Callable[[list[str]], str]) -> Choices:
    """Every subset of a list option's values (the engine's order), smallest first."""
    subsets = [list(c) for n in range(len(values) + 1) for c in combinations(values, n)]
    return [(subset, label(subset) if subset else none) for subset in subsets]


#: what the form calls each value of ``hand_only``
_HAND_ONLY = {
    "general": Category.GENERAL.caption,
    "strasse": Category.STRASSE.caption,
    "jule": "Jule",
}


def _captions(values: list[str]) -> str:
    return join_words(_HAND_ONLY[v] for v in values)


#: how "hand beats assembled" names a category: "bei Schock aus", "bei jedem Schock"
_HAND_BEATS = {
    Category.SCHOCK_AUS: Category.SCHOCK_AUS.caption,
    Category.SCHOCK: f"jedem {Category.SCHOCK.caption}",
}
#: the named special results as the menu lists them (pips as players say them)
_SPECIAL_LABELS = {
    "neuner": "Neuner (2-2-1)",
    "siebener": "Siebener (2-2-1)",
    "achter": "Achter (3-3-1)",
}


def _specials() -> Choices:
    """None, each named special result, and each pair that can be played together."""
    names = list(NAMED_SPECIALS)
    pairs = [
        [a, b]
        for a, b in combinations(names, 2)
        if NAMED_SPECIALS[a].pips != NAMED_SPECIALS[b].pips
    ]
    return [
        ([], "keine"),
        *(([name], _SPECIAL_LABELS[name]) for name in names),
        *((pair, " und ".join(NAMED_SPECIALS[n].name for n in pair)) for pair in pairs),
    ]


#: how deep an option's value (JSON in the form field) may nest: a list of special results
JSON_DEPTH = 8
#: the first amounts of Strafdeckel the menu offers (more: through the API)
_PENALTY_CHOICES = range(limits.PENALTY.low, limits.PENALTY.low + 5)

#: the values offered for each option (JSON value, German label); ``deckel`` is a number field
OPTION_CHOICES: dict[str, Choices] = {
    "max_throws": [(n, throws_word(n)) for n in limits.THROWS],
    "sixes_turning": _YES_NO,
    "ones_only_aside": _YES_NO,
    "general_over_schock2": _YES_NO,
    "strassen": _labelled({Strassen.HEIGHT: "nach Höhe", Strassen.EQUAL: "alle gleich"}),
    "hand_only": _subsets(HAND_ONLY_VALUES, "nichts", _captions),
    "hand_beats_assembled": _subsets(
        HAND_BEATS_VALUES,
        "nie",
        lambda values: "bei " + " und ".join(_HAND_BEATS[Category(v)] for v in values),
    ),
    "ties": _labelled(
        {
            Ties.THROWS_THEN_REPEAT: "mehr Würfe verliert, sonst wiederholen",
            Ties.LATER_LOWER_UNLESS_FEWER: "der spätere verliert, außer mit weniger Würfen",
            Ties.EARLIER_WINS: "wer zuerst geworfen hat, gewinnt",
        }
    ),
    "jule": _labelled(
        {
            Jule.OFF: "aus (eine Zahl)",
            Jule.TOP: "ganz oben, alle Deckel",
            Jule.SIEBEN: "scharfe Sieben, 7 Deckel",
        }
    ),
    "specials": _specials(),
    "two_fives_never_lose": _YES_NO,
    "schock_aus": _labelled(
        {
            SchockAus.HALF: "alle Deckel, Hälfte verloren",
            SchockAus.TOTAL: "kostet so viele Deckel, wie im Spiel sind",
        }
    ),
    "schock_aus_ends_round": _YES_NO,
    "passing_on": _YES_NO,
    "next_starter": _labelled(
        {
            NextStarter.ROUND_LOSER: "der Verlierer der Runde",
            NextStarter.LAST_RECEIVER: "wer zuletzt Deckel bekam",
        }
    ),
    "finale_opener": _labelled(
        {
            FinaleOpener.LAST_LOSER: "der Verlierer der 2. Hälfte",
            FinaleOpener.FIRST_HALF_LOSER: "der Verlierer der 1. Hälfte",
        }
    ),
    "blind": _YES_NO,
    "penalty": [(None, "keine feste Zahl"), *((n, f"{n} Deckel") for n in _PENALTY_CHOICES)],
    "penalty_mode": _labelled(
        {
            PenaltyMode.DECKEL: "Strafdeckel aus der Mitte",
            PenaltyMode.ROUND_LOSER: "der Sünder verliert die Runde",
        }
    ),
    "two_dice": _YES_NO,
}


def encode(value: Any) -> str:
    """An option value as the ``value`` of an ``<option>`` (JSON, compact)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def value_label(key: str, value: Any) -> str:
    """German text of an option's value."""
    if key == "deckel":
        return str(value)
    for choice, label in OPTION_CHOICES.get(key, []):
        if choice == value:
            return label
    if key == "specials":  # self-defined special results (API only)
        return ", ".join(s if isinstance(s, str) else s["name"] for s in value) or "keine"
    if key == "penalty" and isinstance(value, int):
        return f"{value} Deckel"
    return str(value)


@dataclass
class OptionField:
    key: str
    title: str
    help: str
    choices: list[tuple[str, str]]  # (encoded value, label); empty for the number field
    per_preset: dict[str, str]  # preset → label of its value (the "wie Regelwerk" hint)
    selected: str = ""  # "" = as the preset says


def option_fields(selected: dict[str, str] | None = None) -> list[OptionField]:
    selected = selected or {}
    out = []
    for key in OPTION_NAMES:
        choices = [(encode(v), label) for v, label in OPTION_CHOICES.get(key, [])]
        chosen = selected.get(key, "")
        if key != "deckel" and chosen and chosen not in {c for c, _ in choices}:
            # a value set through the API that the menu does not list (own special results,
            # more Strafdeckel): offered as it is, so that saving the form keeps it
            try:
                label = value_label(key, read_json(chosen, JSON_DEPTH))
            except JsonRefused:
                label = chosen
            choices.append((chosen, f"{label} (eigener Wert)"))
        per_preset = {name: value_label(key, r.options()[key]) for name, r in PRESETS.items()}
        out.append(
            OptionField(
                key,
                OPTION_TITLES[key],
                OPTION_HELP[key],
                choices,
                per_preset,
                chosen,
            )
        )
    return out


@dataclass
class PresetInfo:
    name: str
    help: str
    differences: list[str]  # "Titel: Wert" of every option that differs from ``standard``


def presets() -> list[PresetInfo]:
    base = PRESETS["standard"].options()
    out = []
    for name, rules in PRESETS.items():
        mine = rules.options()
        diffs = [
            f"{OPTION_TITLES[k]}: {value_label(k, v)}" for k, v in mine.items() if base[k] != v
        ]
        out.append(PresetInfo(name, PRESET_HELP[name], diffs))
    return out


def describe_rules(rules: Ruleset) -> list[dict[str, str]]:
    """Every option of a ruleset with its German title, value and explanation."""
    return [
        {
            "key": item["key"],
            "title": OPTION_TITLES[item["key"]],
            "value": value_label(item["key"], item["value"]),
            "help": item["description"],
        }
        for item in rules.describe()
    ]


def selected_overrides(overrides: dict[str, Any]) -> dict[str, str]:
    """A ruleset's overrides as the values of the option fields (to edit them)."""
    return {k: str(v) if k == "deckel" else encode(v) for k, v in overrides.items()}


def parse_overrides(form: Any, errors: FormErrors) -> dict[str, Any]:
    """The overrides chosen in the Stammtisch form (empty fields keep the preset's value)."""
    overrides: dict[str, Any] = {}
    for key in OPTION_NAMES:
        raw = (form.get(f"opt_{key}") or "").strip()
        if not raw:
            continue
        if key == "deckel":
            deckel = read_number(raw)  # the engine checks the range
            if deckel is None:
                errors.add(
                    "opt_deckel",
                    f"Bitte eine ganze Zahl von {limits.DECKEL.low} bis {limits.DECKEL.high} "
                    "eintragen.",
                )
                continue
            overrides[key] = deckel
            continue
        try:
            overrides[key] = read_json(raw, JSON_DEPTH)
        except JsonRefused:
            errors.add(f"opt_{key}", "Unbekannter Wert.")
    return overrides
