"""The results of a ruleset from best to worst, in words: one line per name ("Schock 4",
"General", "Zahl") with its dice and Deckel, and the sentences about the options that move
results (General vs Schock 2, Straßen, hand, Jule and other special results).

Nothing here decides a rule: :func:`hierarchy` groups the ruleset's evaluation table by name
and orders it by the engine's comparison key; every sentence is derived from how the engine
scores under the ruleset. :mod:`.prose` puts them on the page "Unsere Regeln".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .results import Category, Evaluation, evaluate, evaluation_table
from .ruleset import Ruleset
from .words import count

__all__ = [
    "Rank",
    "deckel_text",
    "hierarchy",
    "join_words",
    "order_notes",
    "rank_line",
    "three_dice",
]

#: a group of results is listed one by one up to this many different dice, else first to last
LIST_UP_TO = 6
#: categories whose results each get a line of their own ("Schock 4"), not one per category
_BY_NAME = (Category.SCHOCK_AUS, Category.SCHOCK, Category.SPECIAL)


@dataclass(frozen=True, slots=True)
class Rank:
    """One line of the hierarchy: every result of one name ("Schock 4", "General", "Zahl")
    under the ruleset, best first."""

    name: str
    category: Category
    results: tuple[Evaluation, ...]

    @property
    def best(self) -> int:
        return self.results[0].key

    @property
    def worst(self) -> int:
        return self.results[-1].key

    @property
    def first(self) -> Evaluation:
        return self.results[0]

    def dice(self) -> list[tuple[int, ...]]:
        """The different dice of the line, each at the place of its best result."""
        seen: list[tuple[int, ...]] = []
        for ev in self.results:
            if ev.dice not in seen:
                seen.append(ev.dice)
        return seen


def _results(rules: Ruleset) -> list[Evaluation]:
    """Every result the ruleset can produce, once per dice and hand flag."""
    found: dict[tuple[tuple[int, ...], bool], Evaluation] = {}
    for ev in evaluation_table(rules).values():
        found.setdefault((ev.dice, ev.hand), ev)
    return list(found.values())


def hierarchy(rules: Ruleset) -> tuple[Rank, ...]:
    """The results of the ruleset from best to worst, one :class:`Rank` per name, ordered by
    the engine's comparison key (under ``two_dice`` only the results two dice can make)."""
    groups: dict[tuple[Category, str], list[Evaluation]] = {}
    for ev in _results(rules):
        name = ev.name if ev.category in _BY_NAME else ev.category.caption
        groups.setdefault((ev.category, name), []).append(ev)
    ranks = [
        Rank(name, category, tuple(sorted(evs, key=lambda e: (e.key, e.dice), reverse=True)))
        for (category, name), evs in groups.items()
    ]
    return tuple(sorted(ranks, key=lambda r: (r.best, r.worst), reverse=True))


def three_dice(rules: Ruleset) -> Ruleset:
    """The ruleset with three dice: how it scores a result, whatever ``two_dice`` says."""
    return rules.replace(two_dice=False) if rules.two_dice else rules


def join_words(words: Iterable[str], last: str = "und") -> str:
    """``["a", "b", "c"]`` → ``"a, b und c"``; one word as it is, none as ``""``."""
    items = list(words)
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} {last} {items[-1]}"


def deckel_text(ev: Evaluation) -> str:
    """What the loser receives when ``ev`` is the round's best result: "alle Deckel", "6 Deckel"."""
    return "alle Deckel" if ev.takes_all else count(ev.deckel, "Deckel", "Deckel")


def rank_line(rank: Rank, ranks: tuple[Rank, ...]) -> str:
    """One line of the hierarchy: the name, its dice best first, its Deckel, hand notes."""
    where = {(ev.dice, ev.hand): r.name for r in ranks for ev in r.results}
    dice = rank.dice()
    best_key = {d: max(ev.key for ev in rank.results if ev.dice == d) for d in dice}
    notation = {ev.dice: ev.notation for ev in rank.results}
    names = {ev.dice: ev.name for ev in rank.results}
    if len(dice) == 1:
        shown = notation[dice[0]]
    elif len(dice) <= LIST_UP_TO:
        if len({best_key[d] for d in dice}) == 1:
            shown = f"{join_words(notation[d] for d in dice)}, alle gleich hoch"
        else:
            shown = " vor ".join(notation[d] for d in dice)
    else:
        first, last = dice[0], dice[-1]
        height = {d: names[d].removeprefix(rank.name).strip() for d in (first, last)}
        shown = (
            f"alles andere; von {notation[first]} = {height[first]} "
            f"bis {notation[last]} = {height[last]}"
        )
        if rank.category is Category.ZAHL:
            shown += ", gelesen von der höchsten Augenzahl an"
    notes: list[str] = []
    if all(ev.hand for ev in rank.results) and any(
        where.get((d, False), rank.name) != rank.name for d in dice
    ):
        notes.append("nur aus der Hand")
    taken_in = sorted(
        {
            str(where[(ev.dice, True)])
            for ev in rank.results
            if not ev.hand and where.get((ev.dice, True), rank.name) != rank.name
        }
    )
    if taken_in:
        captions = [
            r.name if r.category is Category.SPECIAL else r.category.caption
            for r in ranks
            if r.name in taken_in
        ]
        notes.append(f"zusammengelegt zählen hier auch {join_words(dict.fromkeys(captions))}")
    if any(
        ev.hand and ev.key > other.key
        for ev in rank.results
        for other in rank.results
        if other.dice == ev.dice and not other.hand
    ):
        notes.append("aus der Hand vor zusammengelegt")
    line = f"{rank.name} ({shown}): {deckel_text(rank.first)}"
    return "; ".join([line, *notes])


def order_notes(rules: Ruleset, ranks: tuple[Rank, ...]) -> list[str]:
    """Sentences about the options that move results: General vs Schock 2, Straßen, hand,
    Jule and the special results; each derived from how the engine scores them."""
    three = three_dice(rules)
    notes: list[str] = []
    general = evaluate((2, 2, 2), True, three)
    schock2, schock3 = evaluate((2, 1, 1), True, three), evaluate((3, 1, 1), True, three)
    if general.category is Category.GENERAL:
        if schock2.key < general.key < schock3.key:
            notes.append(
                f"Ein {general.name} ist bei uns höher als {schock2.name}, aber niedriger als "
                f"{schock3.name}."
            )
        elif general.key < schock2.key:
            notes.append(
                f"Jeder Schock ist höher als jeder {general.name} – auch {schock2.name}, "
                f"obwohl er nur {deckel_text(schock2)} bringt und ein {general.name} "
                f"{deckel_text(general)}."
            )
    high, low = evaluate((6, 5, 4), True, three), evaluate((3, 2, 1), True, three)
    if high.category is low.category is Category.STRASSE:
        if high.key == low.key:
            notes.append(
                f"Alle Straßen sind gleich hoch: {high.notation} ist nicht mehr wert als "
                f"{low.notation}."
            )
        else:
            notes.append(
                f"Straßen zählen nach Höhe: {high.notation} ist die höchste, {low.notation} die "
                "niedrigste."
            )
    notes.extend(_hand_notes(three))
    notes.extend(_special_notes(three, ranks))
    return notes


def _hand_notes(three: Ruleset) -> list[str]:
    notes: list[str] = []
    hand_only = [
        (category, dice)
        for category, dice in ((Category.GENERAL, (5, 5, 5)), (Category.STRASSE, (6, 5, 4)))
        if evaluate(dice, True, three).category is category
        and evaluate(dice, False, three).category is Category.ZAHL
    ]
    if hand_only:
        captions = join_words(c.caption for c, _ in hand_only)
        category, dice = hand_only[0]
        assembled = evaluate(dice, False, three)
        verb = "zählt" if len(hand_only) == 1 else "zählen"
        notes.append(
            f"{captions} {verb} nur aus der Hand; zusammengelegt ist das eine Zahl: "
            f"{assembled.notation} zusammengelegt ist {assembled.name}."
        )
    if "jule" in three.hand_only and evaluate((4, 2, 1), True, three).category is Category.SPECIAL:
        hand_only.append((Category.SPECIAL, (4, 2, 1)))  # its own note: _special_notes
    beats = [
        name
        for name, dice in (("bei Schock aus", (1, 1, 1)), ("bei jedem anderen Schock", (4, 1, 1)))
        if evaluate(dice, True, three).category in (Category.SCHOCK_AUS, Category.SCHOCK)
        and evaluate(dice, True, three).key > evaluate(dice, False, three).key
    ]
    if beats:
        notes.append(
            "Bei gleichem Wurf schlägt der aus der Hand geworfene den zusammengelegten "
            f"(„Naturschock“) – {join_words(beats)}; das gilt vor der Regel für Gleichstand."
        )
    if hand_only or beats:
        notes.append(
            "„Aus der Hand“ heißt: der letzte Wurf warf alle Würfel, nichts war herausgelegt "
            "oder umgedreht."
        )
    return notes


def _special_notes(three: Ruleset, ranks: tuple[Rank, ...]) -> list[str]:
    notes: list[str] = []
    jule = evaluate((4, 2, 1), True, three)
    if jule.category is Category.ZAHL:
        notes.append(f"4-2-1 ist bei uns keine Jule, sondern die {jule.name}.")
    names = [r.name for r in ranks]
    for special in three.special_results():
        if special.name not in names:
            continue  # under two_dice a special result that two dice never make
        i = names.index(special.name)
        ev = ranks[i].first
        if i == 0:
            place = f"ganz oben, über {names[1]}"
        elif i == len(names) - 1:
            place = f"ganz unten, unter {names[i - 1]}"
        else:
            place = f"zwischen {names[i - 1]} und {names[i + 1]}"
        worth = deckel_text(ev) + (" wie Schock aus" if ev.worth_all else "")
        assembled = evaluate(special.pips, False, three)
        counts = (
            "zählt auch zusammengelegt."
            if assembled.name == special.name
            else f"zählt nur aus der Hand, zusammengelegt ist das die {assembled.name}."
        )
        notes.append(f"Sonderwurf {special.name} ({ev.notation}): {place}, {worth}; {counts}")
    return notes
