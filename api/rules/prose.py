"""The house rules of a ruleset in German prose: what a new player at the table asks first.

:func:`describe` turns a :class:`~api.rules.ruleset.Ruleset` (its preset and every override)
into sections of German sentences: the preset, the results from best to worst with their
Deckel, a turn (the opener's limit, setting aside, sixes, blind), a round (ties, who receives,
who opens next), halves, Finale and Blattschuss, penalties::

    >>> from api.rules import PRESETS
    >>> sections = describe(PRESETS["standard"])
    >>> [s.title for s in sections]  # doctest: +NORMALIZE_WHITESPACE
    ['Unser Regelwerk', 'Die Würfe von oben nach unten', 'Ein Zug', 'Die Runde',
     'Hälften, Finale und Blattschuss', 'Strafen']
    >>> sections[1].bullets[:3]
    ('Schock aus (1-1-1): alle Deckel', 'Schock 6 (1-1-6): 6 Deckel', 'Schock 5 (1-1-5): 5 Deckel')

Nothing here decides a rule. The order of the results is the engine's own (:func:`hierarchy`
groups the evaluation table of the ruleset by name and sorts by the comparison key), and every
sentence about an option is chosen by the option's value or derived from how the engine
evaluates under it, so a changed switch changes the text.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .help_texts import OPTION_HELP, OPTION_TITLES, PRESET_HELP
from .ranking import (
    Rank,
    deckel_text,
    hierarchy,
    join_words,
    order_notes,
    rank_line,
    three_dice,
)
from .results import evaluate
from .ruleset import (
    FinaleOpener,
    NextStarter,
    PenaltyMode,
    Ruleset,
    SchockAus,
    Ties,
)
from .turns import throws_word
from .words import count

__all__ = ["Rank", "Section", "as_text", "deckel_text", "describe", "hierarchy"]

#: the kinds of rule breaking a penalty is for (api/rules/RULES.md §7)
VIOLATIONS = "zu früh aufdecken, zu oft würfeln, Würfel fallen lassen …"


@dataclass(frozen=True, slots=True)
class Section:
    """One part of the page: a heading, sentences, a list (ordered: the hierarchy), notes."""

    key: str  # an ASCII anchor: "wuerfe"
    title: str
    paragraphs: tuple[str, ...] = ()
    bullets: tuple[str, ...] = ()
    ordered: bool = False
    notes: tuple[str, ...] = ()

    def sentences(self) -> tuple[str, ...]:
        return (*self.paragraphs, *self.bullets, *self.notes)


def _worth_all(ranks: tuple[Rank, ...]) -> str:
    """ "Schock aus", or "Schock aus oder Jule" when Jule "top" is worth every Deckel too."""
    return join_words((r.name for r in ranks if r.first.worth_all), "oder") or "Schock aus"


def _overview(rules: Ruleset) -> Section:
    help_text = PRESET_HELP.get(rules.preset)
    said = f"Wir spielen nach dem Regelwerk „{rules.preset}“"
    paragraphs = [f"{said} – {help_text}." if help_text else f"{said}."]
    overrides = [k for k in rules.to_config()["overrides"] if k in OPTION_TITLES]
    if overrides:
        titles = join_words(f"„{OPTION_TITLES[k]}“" for k in overrides)
        paragraphs.append(f"Davon weichen unsere eigenen Hausregeln ab bei: {titles}.")
    else:
        paragraphs.append("Eigene Abweichungen davon haben wir keine.")
    if rules.max_throws == 1:
        throws = "jeder hat genau einen Wurf"
    else:
        throws = f"wer vorlegt, hat bis zu {throws_word(rules.max_throws)}"
    paragraphs.append(
        f"Kurz gesagt: Es sind {count(rules.deckel, 'Deckel', 'Deckel')} im Spiel; {throws}. "
        "Der schlechteste Wurf einer Runde bekommt so viele Deckel, wie der beste wert ist. "
        "Wer alle Deckel hat, verliert die Hälfte; wer beide Hälften oder das Finale "
        "verliert, hat das Spiel verloren und zahlt die Runde."
    )
    return Section("regelwerk", "Unser Regelwerk", tuple(paragraphs))


def _results_section(rules: Ruleset, ranks: tuple[Rank, ...]) -> Section:
    three = three_dice(rules)
    best, worst = evaluate((5, 1, 1), True, three), evaluate((3, 2, 6), False, three)
    paragraphs = [
        "Es zählt, was am Ende des Zuges liegt; die Reihenfolge der Würfel ist egal. Vom besten "
        "zum schlechtesten Wurf, dahinter die Deckel, die er wert ist:",
    ]
    notes = [
        "Der schlechteste Wurf der Runde bekommt so viele Deckel, wie der beste wert ist: hat "
        f"der Beste {best.name} und der Schlechteste {worst.name}, bekommt er "
        f"{deckel_text(best)}.",
        *order_notes(rules, ranks),
    ]
    bullets = tuple(rank_line(rank, ranks) for rank in ranks)
    return Section(
        "wuerfe", "Die Würfe von oben nach unten", tuple(paragraphs), bullets, True, tuple(notes)
    )


def _turn_section(rules: Ruleset) -> Section:
    n = rules.max_throws
    paragraphs: list[str] = []
    if n == 1:
        paragraphs.append("Jeder hat genau einen Wurf, auch wer die Runde beginnt.")
    else:
        paragraphs.append(
            f"Wer die Runde beginnt, legt vor: er hat bis zu {throws_word(n)}. So viele Würfe, "
            "wie er gebraucht hat, hat in dieser Runde jeder andere höchstens; aufhören darf "
            "jeder früher. Hört der Vorleger nach einem Wurf auf, hat jeder nur einen Wurf."
        )
        paragraphs.append(
            "Nach jedem Wurf außer dem letzten darf man aufhören oder Würfel herauslegen und "
            "den Rest noch einmal werfen; herausgelegte Würfel bleiben bis zum Ende des Zuges "
            "liegen."
        )
    if rules.ones_only_aside:
        paragraphs.append(OPTION_HELP["ones_only_aside"])
    if rules.sixes_turning:
        paragraphs.append(
            f"Sechsen umdrehen: {OPTION_HELP['sixes_turning']} Das geht nur, wenn man noch einen "
            "Wurf hat."
        )
    else:
        paragraphs.append("Sechsen werden bei uns nicht umgedreht.")
    if rules.blind:
        paragraphs.append(
            "Blind spielen ist erlaubt: wer blind spielt, hat genau einen Wurf. Spielt in einer "
            "Runde jemand blind, zählt der beste Wurf dieser Runde doppelt – einmal, auch bei "
            "mehreren Blinden; ein Wurf, der alle Deckel kostet, wird nicht verdoppelt."
        )
    if rules.two_dice:
        schock_aus, strasse = evaluate((1, 1), True, rules), evaluate((6, 4), True, rules)
        paragraphs.append(
            f"{OPTION_HELP['two_dice']} So ist 1-1 {schock_aus.name} ({schock_aus.notation}) "
            f"und 4-6 eine {strasse.name} ({strasse.notation})."
        )
    return Section("zug", "Ein Zug", tuple(paragraphs))


_TIES = {
    Ties.THROWS_THEN_REPEAT: "Gleichstand (derselbe Wurf): wer mehr Würfe gebraucht hat, liegt "
    "tiefer. Bei gleich vielen Würfen wird die Runde wiederholt – derselbe Spieler beginnt "
    "neu; oben nur, wenn der Beste Deckel abgeben muss.",
    Ties.LATER_LOWER_UNLESS_FEWER: "Gleichstand (derselbe Wurf): der spätere Wurf liegt tiefer "
    "(„nachgelegt“), außer er brauchte weniger Würfe.",
    Ties.EARLIER_WINS: "Gleichstand (derselbe Wurf): wer ihn zuerst geworfen hat, liegt höher; "
    "der spätere liegt tiefer.",
}
_NEXT_STARTER = {
    NextStarter.ROUND_LOSER: "Die nächste Runde beginnt, wer die Runde verloren hat.",
    NextStarter.LAST_RECEIVER: "Die nächste Runde beginnt, wer zuletzt Deckel bekommen hat "
    "(aus einer Runde oder als Strafe); bekommt der Verlierer einer Runde nichts, bleibt es "
    "dabei.",
}
_FINALE_OPENER = {
    FinaleOpener.LAST_LOSER: "der Verlierer der zweiten Hälfte",
    FinaleOpener.FIRST_HALF_LOSER: "der Verlierer der ersten Hälfte",
}


def _round_section(rules: Ruleset, ranks: tuple[Rank, ...]) -> Section:
    worth_all = _worth_all(ranks)
    paragraphs = [
        "Wer die erste Runde beginnt, legt ihr vor dem Spiel fest (zum Beispiel auswürfeln). Dann "
        "würfeln alle, die noch dabei sind, reihum im Uhrzeigersinn.",
        "Haben alle geworfen, bekommt der schlechteste Wurf so viele Deckel, wie der beste "
        "wert ist.",
        _TIES[rules.ties],
    ]
    if rules.ties is not Ties.THROWS_THEN_REPEAT:
        paragraphs.append("Früher und später meint die Reihenfolge der Züge in der Runde.")
    if rules.two_fives_never_lose:
        paragraphs.append(
            "Zwei Fünfen verlieren nie: ein Wurf mit mindestens zwei Fünfen (auch 5-5-5) ist nie "
            "der schlechteste der Runde, es trifft den schlechtesten anderen – außer alle Würfe "
            "haben zwei Fünfen."
        )
    if rules.schock_aus_ends_round:
        paragraphs.append(
            f"{worth_all} beendet die Runde sofort: wer noch nicht geworfen hat, wirft nicht "
            "mehr, und es trifft den schlechtesten der schon gezeigten Würfe. Wirft ihn der "
            "Erste der Runde, werfen die anderen noch."
        )
    else:
        paragraphs.append(f"Auch nach {worth_all} werfen alle die Runde zu Ende.")
    paragraphs.append(
        "Solange Deckel in der Mitte liegen, nimmt der Verlierer sie von dort – höchstens so "
        "viele, wie noch da sind. Ist die Mitte leer, gibt ihm der Spieler mit dem besten Wurf "
        "so viele eigene Deckel – höchstens alle, die er hat. Wer dann keine Deckel mehr hat, "
        "ist für den Rest der Hälfte raus und kann sie nicht mehr verlieren."
    )
    if rules.passing_on:
        paragraphs.append(
            f"{OPTION_HELP['passing_on']} Er gibt, so viele er hat; die Mitte zahlt nur, "
            "wenn er keine hat."
        )
    paragraphs.append(_NEXT_STARTER[rules.next_starter])
    return Section("runde", "Die Runde", tuple(paragraphs))


def _game_section(rules: Ruleset, ranks: tuple[Rank, ...]) -> Section:
    deckel = count(rules.deckel, "Deckel", "Deckel")
    with_deckel = count(rules.deckel, "Deckel", "Deckeln")  # dative: "mit 13 Deckeln"
    worth_all = _worth_all(ranks)
    paragraphs = [
        f"Ein Spiel hat zwei Hälften, jede mit {with_deckel}, die zu Beginn alle in der Mitte "
        f"liegen. Eine Hälfte endet, wenn ein Spieler alle {deckel} hat: er hat sie verloren "
        "und beginnt die zweite Hälfte, in der wieder alle mitspielen.",
    ]
    if rules.schock_aus is SchockAus.HALF:
        paragraphs.append(
            f"Bei {worth_all} bekommt der schlechteste Wurf der Runde alle Deckel – aus der "
            "Mitte und von allen Spielern – und hat die Hälfte sofort verloren; im Finale ist "
            "damit sofort das Spiel entschieden."
        )
    else:
        paragraphs.append(
            f"{worth_all} kostet so viele Deckel, wie im Spiel sind ({deckel}), nach den "
            "üblichen Regeln: aus der Mitte höchstens, was dort liegt; bei leerer Mitte vom "
            "Besten höchstens, was er hat."
        )
    paragraphs.append(
        "Verliert derselbe Spieler beide Hälften, ist das ein Blattschuss: das Spiel ist aus, "
        "er hat es verloren, ein Finale gibt es nicht."
    )
    paragraphs.append(
        "Haben zwei verschiedene Spieler die Hälften verloren, spielen nur sie beide das "
        f"Finale – wie eine Hälfte, wieder mit allen {with_deckel} in der Mitte. Es beginnt "
        f"{_FINALE_OPENER[rules.finale_opener]}. Wer das Finale verliert, hat das Spiel "
        "verloren und zahlt die Runde."
    )
    return Section("spiel", "Hälften, Finale und Blattschuss", tuple(paragraphs))


def _penalty_section(rules: Ruleset) -> Section:
    if rules.penalty_mode is PenaltyMode.ROUND_LOSER:
        paragraphs = [
            f"Wer gegen eine Regel verstößt ({VIOLATIONS}), verliert die laufende Runde – "
            "zwischen zwei Runden die nächste –, egal was er wirft.",
        ]
    else:
        if rules.penalty is None:
            first = (
                f"Für einen Regelverstoß ({VIOLATIONS}) gibt es Strafdeckel; wie viele, legt "
                "ihr jedes Mal fest."
            )
        else:
            amount = count(rules.penalty, "Strafdeckel", "Strafdeckel")
            first = f"Jeder Regelverstoß ({VIOLATIONS}) kostet {amount}."
        paragraphs = [
            first,
            "Sie kommen aus der Mitte; ist die Mitte leer, vom Mitspieler mit den meisten "
            "Deckeln. Hat der Sünder danach alle Deckel, hat er die Hälfte verloren.",
        ]
    return Section("strafen", "Strafen", tuple(paragraphs))


def describe(rules: Ruleset) -> list[Section]:
    """The house rules of ``rules`` as German prose, section by section."""
    ranks = hierarchy(rules)
    return [
        _overview(rules),
        _results_section(rules, ranks),
        _turn_section(rules),
        _round_section(rules, ranks),
        _game_section(rules, ranks),
        _penalty_section(rules),
    ]


def as_text(sections: Iterable[Section]) -> str:
    """The sections as plain text (headings, sentences, "- " for list items)."""
    lines: list[str] = []
    for section in sections:
        lines.append(section.title)
        lines.extend(section.paragraphs)
        for i, bullet in enumerate(section.bullets, start=1):
            lines.append(f"{i}. {bullet}" if section.ordered else f"- {bullet}")
        lines.extend(section.notes)
        lines.append("")
    return "\n".join(lines)
