"""House rules as data: every option of schemas/GAMELOG.md, the seven presets, special results.

A :class:`Ruleset` is frozen and hashable; it is passed explicitly into every engine function.
A Stammtisch picks a preset and may override single options::

    >>> rules = ruleset_from_config({"preset": "wolbeck", "overrides": {"deckel": 15}})
    >>> rules.deckel, rules.jule, rules.preset
    (15, <Jule.SIEBEN: 'sieben'>, 'wolbeck')
    >>> rules.to_config()
    {'preset': 'wolbeck', 'overrides': {'deckel': 15}}

Readings this project takes where the sources leave room are listed in api/rules/RULES.md §10
and documented beside each option in :data:`OPTION_HELP` (German, shown to players; in
:mod:`.help_texts`) and in the comments of :class:`Ruleset`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .dice import format_dice
from .errors import InvalidRules
from .help_texts import OPTION_HELP
from .help_texts import PRESET_HELP as PRESET_HELP  # re-exported
from .limits import OPTION_LIMITS, PIPS, SPECIAL_DECKEL, SPECIAL_NAME, SPECIAL_RANK, Limit


class Strassen(StrEnum):
    HEIGHT = "height"
    EQUAL = "equal"


class Ties(StrEnum):
    # S0: more throws is lower; still equal -> the round is repeated (api/rules/RULES.md §10.8/10.9)
    THROWS_THEN_REPEAT = "throws_then_repeat"
    # S1 Wikipedia / DSM: the later result is lower, unless it needed fewer throws
    LATER_LOWER_UNLESS_FEWER = "later_lower_unless_fewer"
    # S1 BVB, S2: who threw it first wins
    EARLIER_WINS = "earlier_wins"


class Jule(StrEnum):
    OFF = "off"
    TOP = "top"  # above Schock aus, costs all Deckel (api/rules/RULES.md §10.5)
    SIEBEN = "sieben"  # between Schock 6 and Schock aus, costs 7


class SchockAus(StrEnum):
    HALF = "half"  # the worst receives every Deckel and loses the half at once
    TOTAL = "total"  # "Schock aus kostet 13": worth the game's Deckel total, normal caps


class NextStarter(StrEnum):
    ROUND_LOSER = "round_loser"
    LAST_RECEIVER = "last_receiver"


class FinaleOpener(StrEnum):
    LAST_LOSER = "last_loser"
    FIRST_HALF_LOSER = "first_half_loser"


class PenaltyMode(StrEnum):
    DECKEL = "deckel"
    ROUND_LOSER = "round_loser"


HAND_ONLY_VALUES = ("general", "strasse", "jule")
HAND_BEATS_VALUES = ("schock_aus", "schock")
ALL = "all"  # a special result's Deckel value meaning "every Deckel" (like Schock aus)


@dataclass(frozen=True, slots=True)
class Special:
    """A special result (Jule, Neuner, …): its pips, its rank on api/rules/RULES.md §10.4's scale, its Deckel.

    ``deckel`` is ``None`` for a result worth every Deckel (it then behaves like Schock aus).
    Special results match whatever the hand flag (api/rules/RULES.md §10.4).
    """

    name: str
    pips: tuple[int, int, int]  # sorted, descending
    rank: int
    deckel: int | None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "pips": list(self.pips),
            "rank": self.rank,
            "deckel": ALL if self.deckel is None else self.deckel,
        }


JULE_SIEBEN = Special("Jule", (4, 2, 1), 470, 7)
JULE_TOP = Special("Jule", (4, 2, 1), 600, None)
NAMED_SPECIALS: dict[str, Special] = {
    "neuner": Special("Neuner", (2, 2, 1), 490, 9),
    "siebener": Special("Siebener", (2, 2, 1), 475, 7),
    "achter": Special("Achter", (3, 3, 1), 480, 8),
}


@dataclass(frozen=True, slots=True)
class Ruleset:
    """Every house-rule option, expanded. Field names and values are those of schemas/GAMELOG.md."""

    preset: str = "standard"
    deckel: int = 13
    max_throws: int = 3
    sixes_turning: bool = False
    ones_only_aside: bool = False
    general_over_schock2: bool = False
    strassen: Strassen = Strassen.HEIGHT
    hand_only: frozenset[str] = frozenset()
    hand_beats_assembled: frozenset[str] = frozenset()
    ties: Ties = Ties.THROWS_THEN_REPEAT
    jule: Jule = Jule.OFF
    # names ("neuner", "siebener", "achter") or custom Special objects, in the order given
    specials: tuple[str | Special, ...] = ()
    # Reading (api/rules/RULES.md §10.6): "two fives" = at least two fives; the best result never loses.
    two_fives_never_lose: bool = False
    schock_aus: SchockAus = SchockAus.HALF
    # Reading (api/rules/RULES.md §10.11): applies once another result has been shown.
    schock_aus_ends_round: bool = False
    # Reading (api/rules/RULES.md §5.5): the best player pays what they can, the Mitte only when they hold none.
    passing_on: bool = False
    next_starter: NextStarter = NextStarter.ROUND_LOSER
    finale_opener: FinaleOpener = FinaleOpener.LAST_LOSER
    # Reading (api/rules/RULES.md §10.12): blind means exactly one throw and doubles the best result once.
    blind: bool = False
    penalty: int | None = None
    penalty_mode: PenaltyMode = PenaltyMode.DECKEL
    # Reading (api/rules/RULES.md §10.7): the imagined third die is the one that gives the highest result.
    two_dice: bool = False
    _special_table: tuple[Special, ...] = field(default=(), compare=False, repr=False)
    # the evaluation table, built on first use by results.evaluation_table (memoized here so
    # that evaluating needs no hashing of the ruleset)
    _evaluations: dict[Any, Any] | None = field(default=None, init=False, compare=False, repr=False)
    #: dice per throw (two under ``two_dice``): set once with the ruleset, read by every turn
    dice_count: int = field(default=3, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "dice_count", 2 if self.two_dice else 3)  # frozen: derived

    def special_results(self) -> tuple[Special, ...]:
        """Every special result in force: Jule (if on) and the configured specials."""
        return self._special_table

    def options(self) -> dict[str, Any]:
        """Every option with its JSON value (the game stores these with itself)."""
        return {name: _to_json(name, getattr(self, name)) for name in OPTION_NAMES}

    def to_config(self) -> dict[str, Any]:
        """``{"preset": …, "overrides": …}`` with only the options that differ from the preset."""
        base = PRESETS[self.preset].options() if self.preset in PRESETS else {}
        mine = self.options()
        return {
            "preset": self.preset,
            "overrides": {k: v for k, v in mine.items() if base.get(k) != v},
        }

    def describe(self) -> list[dict[str, Any]]:
        """Every option with its value and a German explanation, for menus and the API."""
        return [
            {"key": name, "value": value, "description": OPTION_HELP[name]}
            for name, value in self.options().items()
        ]

    def replace(self, **changes: Any) -> Ruleset:
        """A copy with some options changed, validated like overrides."""
        return ruleset_from_config({"preset": self.preset, "overrides": changes}, base=self)


OPTION_NAMES: tuple[str, ...] = tuple(
    f.name
    for f in dataclasses.fields(Ruleset)
    if f.init and f.name[0] != "_" and f.name != "preset"
)

_ENUMS: dict[str, type[StrEnum]] = {
    "strassen": Strassen,
    "ties": Ties,
    "jule": Jule,
    "schock_aus": SchockAus,
    "next_starter": NextStarter,
    "finale_opener": FinaleOpener,
    "penalty_mode": PenaltyMode,
}
_BOOLS = {
    "sixes_turning",
    "ones_only_aside",
    "general_over_schock2",
    "two_fives_never_lose",
    "schock_aus_ends_round",
    "passing_on",
    "blind",
    "two_dice",
}
_SUBSETS = {"hand_only": HAND_ONLY_VALUES, "hand_beats_assembled": HAND_BEATS_VALUES}


def _to_json(name: str, value: Any) -> Any:
    if name in _SUBSETS:
        return [v for v in _SUBSETS[name] if v in value]
    if name == "specials":
        return [s if isinstance(s, str) else s.to_json() for s in value]
    if isinstance(value, StrEnum):
        return value.value
    return value


def _check_int(name: str, value: Any, limit: Limit) -> int:
    if value not in limit:
        raise InvalidRules(
            f"Hausregel „{name}“: {value!r} ist ungültig "
            f"(erlaubt: ganze Zahl von {limit.low} bis {limit.high}).",
            field=name,
        )
    return int(value)


def _parse_special(item: Any, index: int) -> str | Special:
    where = f"specials[{index}]"
    if isinstance(item, str):
        if item not in NAMED_SPECIALS:
            raise InvalidRules(
                f"Hausregel „{where}“: unbekannter Sonderwurf {item!r} "
                f"(bekannt: {', '.join(NAMED_SPECIALS)}).",
                field="specials",
            )
        return item
    if not isinstance(item, Mapping):
        raise InvalidRules(
            f"Hausregel „{where}“: erwartet einen Namen oder ein Objekt mit name, pips, rank, deckel.",
            field="specials",
        )
    unknown = set(item) - {"name", "pips", "rank", "deckel"}
    missing = {"name", "pips", "rank", "deckel"} - set(item)
    if unknown or missing:
        raise InvalidRules(
            f"Hausregel „{where}“: "
            + (
                f"unbekannte Felder {sorted(unknown)}"
                if unknown
                else f"es fehlen {sorted(missing)}"
            ),
            field="specials",
        )
    name = item["name"]
    if not isinstance(name, str) or len(name.strip()) not in SPECIAL_NAME:
        raise InvalidRules(
            f"Hausregel „{where}“: der Name muss {SPECIAL_NAME} Zeichen haben.", field="specials"
        )
    pips = item["pips"]
    if not isinstance(pips, list | tuple) or len(pips) != 3 or not all(p in PIPS for p in pips):
        raise InvalidRules(
            f"Hausregel „{where}“: pips muss drei Augenzahlen von {PIPS.low} bis {PIPS.high} enthalten.",
            field="specials",
        )
    rank = _check_int(f"{where}.rank", item["rank"], SPECIAL_RANK)
    deckel_value = item["deckel"]
    deckel: int | None
    if deckel_value == ALL:
        deckel = None
    else:
        deckel = _check_int(f"{where}.deckel", deckel_value, SPECIAL_DECKEL)
    a, b, c = sorted(pips, reverse=True)
    return Special(name.strip(), (a, b, c), rank, deckel)


def _coerce(name: str, value: Any) -> Any:
    if name in OPTION_LIMITS:  # deckel, max_throws, penalty (which may be null)
        if name == "penalty" and value is None:
            return None
        return _check_int(name, value, OPTION_LIMITS[name])
    if name in _BOOLS:
        if not isinstance(value, bool):
            raise InvalidRules(f"Hausregel „{name}“: {value!r} ist kein true/false.", field=name)
        return value
    if name in _ENUMS:
        enum = _ENUMS[name]
        try:
            return enum(value)
        except (ValueError, TypeError):
            allowed = ", ".join(e.value for e in enum)
            raise InvalidRules(
                f"Hausregel „{name}“: unbekannter Wert {value!r} (erlaubt: {allowed}).", field=name
            ) from None
    if name in _SUBSETS:
        allowed_values = _SUBSETS[name]
        if not isinstance(value, list | tuple | set | frozenset):
            raise InvalidRules(f"Hausregel „{name}“: erwartet eine Liste.", field=name)
        for v in value:
            if v not in allowed_values:
                raise InvalidRules(
                    f"Hausregel „{name}“: unbekannter Wert {v!r} "
                    f"(erlaubt: {', '.join(allowed_values)}).",
                    field=name,
                )
        return frozenset(value)
    if name == "specials":
        if not isinstance(value, list | tuple):
            raise InvalidRules("Hausregel „specials“: erwartet eine Liste.", field=name)
        return tuple(
            item if isinstance(item, Special) else _parse_special(item, i)
            for i, item in enumerate(value)
        )
    raise InvalidRules(
        f"Unbekannte Hausregel „{name}“ (bekannt: {', '.join(OPTION_NAMES)}).", field=name
    )


def _build_special_table(rules: Ruleset) -> tuple[Special, ...]:
    table: list[Special] = []
    if rules.jule is Jule.SIEBEN:
        table.append(JULE_SIEBEN)
    elif rules.jule is Jule.TOP:
        table.append(JULE_TOP)
    for item in rules.specials:
        table.append(NAMED_SPECIALS[item] if isinstance(item, str) else item)
    seen: dict[tuple[int, int, int], str] = {}
    for special in table:
        if special.pips in seen:
            pips = format_dice(special.pips)
            raise InvalidRules(
                f"Hausregel „specials“: {seen[special.pips]} und {special.name} haben "
                f"dieselben Augen {pips}.",
                field="specials",
            )
        seen[special.pips] = special.name
    return tuple(table)


def ruleset_from_config(config: Any, *, base: Ruleset | None = None) -> Ruleset:
    """Build a ruleset from ``{"preset": name, "overrides": {...}}`` (both optional).

    Raises :class:`InvalidRules` naming the unknown preset, option or value.
    """
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise InvalidRules("Die Hausregeln müssen ein Objekt mit preset und overrides sein.")
    unknown = set(config) - {"preset", "overrides"}
    if unknown:
        raise InvalidRules(f"Unbekannte Felder in den Hausregeln: {', '.join(sorted(unknown))}.")
    if base is None:
        preset_name = config.get("preset", "standard")
        if not isinstance(preset_name, str) or preset_name not in PRESETS:
            raise InvalidRules(
                f"Unbekanntes Regelwerk {preset_name!r} (bekannt: {', '.join(PRESETS)}).",
                field="preset",
            )
        base = PRESETS[preset_name]
    overrides = config.get("overrides") or {}
    if not isinstance(overrides, Mapping):
        raise InvalidRules("„overrides“ muss ein Objekt sein.", field="overrides")
    if not overrides:
        return base
    changes = {name: _coerce(name, value) for name, value in overrides.items()}
    return _finish(dataclasses.replace(base, **changes))


def _finish(rules: Ruleset) -> Ruleset:
    if rules.two_dice and rules.sixes_turning:
        # two dice never show the two sixes that turning needs in a useful way
        raise InvalidRules(
            "Hausregeln „two_dice“ und „sixes_turning“ passen nicht zusammen.", field="two_dice"
        )
    return _interned(dataclasses.replace(rules, _special_table=_build_special_table(rules)))


#: the rulesets built so far, each once: every game stores its rules expanded, so each game
#: (and each replay of one) builds its ruleset anew, and what is memoized on a ruleset (its
#: evaluation table, milliseconds to build) would be built again for every game
_INTERNED: dict[Ruleset, Ruleset] = {}
#: distinct rulesets kept at most (a server sees a handful: its Stammtische's house rules)
_MAX_INTERNED = 256


def _interned(rules: Ruleset) -> Ruleset:
    """The ruleset equal to ``rules`` built first (rulesets are frozen values: one serves all)."""
    known = _INTERNED.get(rules)
    if known is None:
        if len(_INTERNED) >= _MAX_INTERNED:
            _INTERNED.clear()
        known = _INTERNED.setdefault(rules, rules)
    return known


# api/rules/RULES.md §8. The table's readings: hennef turns sixes (assumed), party and nrw use the
# standard tie rule (not stated), nrw also turns three sixes into two ones (schemas/GAMELOG.md allows
# that with sixes_turning everywhere).
_PRESET_OPTIONS: dict[str, dict[str, Any]] = {
    "standard": dict(),
    "wikipedia": dict(
        sixes_turning=True,
        hand_beats_assembled=frozenset({"schock_aus"}),
        ties=Ties.LATER_LOWER_UNLESS_FEWER,
        penalty=2,
    ),
    "bvb": dict(sixes_turning=True, general_over_schock2=True, ties=Ties.EARLIER_WINS),
    "hennef": dict(
        sixes_turning=True,
        general_over_schock2=True,
        hand_only=frozenset({"strasse"}),
        ties=Ties.LATER_LOWER_UNLESS_FEWER,
    ),
    "wolbeck": dict(
        sixes_turning=True,
        hand_only=frozenset({"general", "strasse"}),
        hand_beats_assembled=frozenset({"schock"}),
        ties=Ties.EARLIER_WINS,
        jule=Jule.SIEBEN,
    ),
    "party": dict(sixes_turning=True),
    "nrw": dict(
        sixes_turning=True,
        hand_only=frozenset({"general", "strasse"}),
        schock_aus_ends_round=True,
        two_fives_never_lose=True,
        penalty=1,
        finale_opener=FinaleOpener.FIRST_HALF_LOSER,
    ),
}
PRESETS: dict[str, Ruleset] = {
    name: _finish(Ruleset(preset=name, **options)) for name, options in _PRESET_OPTIONS.items()
}
