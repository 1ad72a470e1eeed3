"""The house rules in German prose (api/rules/prose.py): every preset is described, every
option changes the text, and the list of results is the engine's own order."""

from __future__ import annotations

from typing import Any

import pytest

from api.rules import (
    OPTION_NAMES,
    OPTION_TITLES,
    PRESET_HELP,
    PRESETS,
    Ruleset,
    evaluate,
    evaluation_table,
    ruleset_from_config,
)
from api.rules.prose import as_text, deckel_text, describe, hierarchy

BRATWURST = {"name": "Bratwurst", "pips": [6, 6, 5], "rank": 450, "deckel": 5}

#: (preset, option, value, a phrase only the changed ruleset's text has): for every option at
#: least one row; where a preset turns a switch on, a row that turns it off again
SWITCHES: list[tuple[str, str, Any, str]] = [
    ("standard", "deckel", 15, "jede mit 15 Deckeln"),
    ("standard", "deckel", 2, "alle 2 Deckel hat"),
    ("standard", "max_throws", 2, "er hat bis zu 2 Würfe"),
    ("standard", "max_throws", 1, "Jeder hat genau einen Wurf"),
    ("standard", "sixes_turning", True, "Sechsen umdrehen: Zwei Sechsen"),
    ("wikipedia", "sixes_turning", False, "Sechsen werden bei uns nicht umgedreht"),
    ("standard", "ones_only_aside", True, "Nur Einsen dürfen herausgelegt werden."),
    ("standard", "general_over_schock2", True, "höher als Schock 2, aber niedriger als Schock 3"),
    ("bvb", "general_over_schock2", False, "Jeder Schock ist höher als jeder General"),
    ("standard", "strassen", "equal", "Alle Straßen sind gleich hoch"),
    ("standard", "hand_only", ["general"], "General zählt nur aus der Hand"),
    ("standard", "hand_only", ["strasse"], "Straße zählt nur aus der Hand"),
    ("wolbeck", "hand_only", [], "von 5-6-6 = 665 bis"),
    ("standard", "hand_beats_assembled", ["schock_aus"], "(„Naturschock“) – bei Schock aus;"),
    ("standard", "hand_beats_assembled", ["schock"], "bei jedem anderen Schock"),
    ("wolbeck", "hand_beats_assembled", [], "Schock 6 (1-1-6): 6 Deckel\n"),
    ("standard", "ties", "later_lower_unless_fewer", "(„nachgelegt“), außer er brauchte weniger"),
    ("standard", "ties", "earlier_wins", "wer ihn zuerst geworfen hat, liegt höher"),
    ("bvb", "ties", "throws_then_repeat", "wird die Runde wiederholt"),
    ("standard", "jule", "top", "Sonderwurf Jule (1-2-4): ganz oben, über Schock aus"),
    ("standard", "jule", "sieben", "Jule (1-2-4): zwischen Schock aus und Schock 6, 7 Deckel"),
    ("wolbeck", "jule", "off", "4-2-1 ist bei uns keine Jule, sondern die Zahl 421."),
    ("standard", "specials", ["neuner"], "Neuner (1-2-2): 9 Deckel"),
    ("standard", "specials", ["siebener"], "Siebener (1-2-2): 7 Deckel"),
    ("standard", "specials", ["achter"], "Achter (1-3-3): 8 Deckel"),
    ("standard", "specials", [BRATWURST], "Bratwurst (5-6-6): zwischen Schock 5 und Schock 4"),
    ("standard", "two_fives_never_lose", True, "Zwei Fünfen verlieren nie"),
    ("standard", "schock_aus", "total", "Schock aus kostet so viele Deckel, wie im Spiel sind"),
    ("standard", "schock_aus_ends_round", True, "Schock aus beendet die Runde sofort"),
    ("nrw", "schock_aus_ends_round", False, "Auch nach Schock aus werfen alle die Runde zu Ende"),
    ("standard", "passing_on", True, "Deckel weitergeben: wer den besten Wurf hat"),
    ("standard", "next_starter", "last_receiver", "beginnt, wer zuletzt Deckel bekommen hat"),
    ("standard", "finale_opener", "first_half_loser", "Es beginnt der Verlierer der ersten"),
    ("nrw", "finale_opener", "last_loser", "Es beginnt der Verlierer der zweiten Hälfte"),
    ("standard", "blind", True, "Blind spielen ist erlaubt"),
    ("standard", "penalty", 2, "kostet 2 Strafdeckel"),
    ("nrw", "penalty", None, "wie viele, legt ihr jedes Mal fest"),
    ("standard", "penalty_mode", "round_loser", "verliert die laufende Runde"),
    ("standard", "two_dice", True, "So ist 1-1 Schock aus (1-1-1) und 4-6 eine Straße (4-5-6)."),
]


#: (preset, option, value, a phrase that goes away): switches a preset turns on, turned off
SWITCHED_OFF: list[tuple[str, str, Any, str]] = [
    ("nrw", "two_fives_never_lose", False, "Zwei Fünfen verlieren nie:"),
    ("hennef", "hand_only", [], "Straße zählt nur aus der Hand"),
    ("wikipedia", "hand_beats_assembled", [], "(„Naturschock“)"),
    ("wikipedia", "penalty", None, "kostet 2 Strafdeckel"),
    ("wolbeck", "jule", "off", "Sonderwurf Jule"),
]


def text(rules: Ruleset) -> str:
    return as_text(describe(rules))


# ----------------------------------------------------------------------------- presets


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_is_described_in_whole_german_sentences(name: str) -> None:
    rules = PRESETS[name]
    sections = describe(rules)
    assert [s.title for s in sections] == [
        "Unser Regelwerk",
        "Die Würfe von oben nach unten",
        "Ein Zug",
        "Die Runde",
        "Hälften, Finale und Blattschuss",
        "Strafen",
    ]
    assert len({s.key for s in sections}) == len(sections)
    assert all(s.key.isascii() and s.key.isalpha() for s in sections)
    whole = text(rules)
    assert f"Regelwerk „{name}“ – {PRESET_HELP[name]}." in whole
    assert "Eigene Abweichungen davon haben wir keine." in whole
    for section in sections:
        assert section.paragraphs, section.title
        for sentence in (*section.paragraphs, *section.notes):
            assert sentence[0].isupper() or sentence[0] in "„0123456789", sentence
            assert sentence.endswith((".", ":")), sentence
        for part in section.sentences():
            assert "None" not in part and "{" not in part and "  " not in part, part
    assert "Blattschuss" in whole and "Finale" in whole and "legt vor" in whole


def test_the_standard_preset_reads_as_the_rule_book() -> None:
    whole = text(PRESETS["standard"])
    for phrase in [
        "1. Schock aus (1-1-1): alle Deckel",
        "2. Schock 6 (1-1-6): 6 Deckel",
        "7. General (6-6-6 vor 5-5-5 vor 4-4-4 vor 3-3-3 vor 2-2-2): 3 Deckel",
        "8. Straße (4-5-6 vor 3-4-5 vor 2-3-4 vor 1-2-3): 2 Deckel",
        "9. Zahl (alles andere; von 5-6-6 = 665 bis 1-2-2 = 221",
        "er hat bis zu 3 Würfe",
        "hat der Beste Schock 5 und der Schlechteste Zahl 632, bekommt er 5 Deckel",
        "wer mehr Würfe gebraucht hat, liegt tiefer",
        "Es beginnt der Verlierer der zweiten Hälfte",
    ]:
        assert phrase in whole, phrase


def test_overrides_are_named_by_their_titles() -> None:
    rules = PRESETS["wolbeck"].replace(deckel=15, blind=True)
    first = describe(rules)[0].paragraphs
    assert first[1] == "Davon weichen unsere eigenen Hausregeln ab bei: „Deckel im Spiel“ und " \
        "„Blind spielen“."  # fmt: skip


# ----------------------------------------------------------------------------- every switch


def test_every_option_has_a_row_that_changes_the_text() -> None:
    assert {option for _, option, _, _ in SWITCHES} == set(OPTION_NAMES)


@pytest.mark.parametrize(
    ("preset", "option", "value", "phrase"),
    SWITCHES,
    ids=[f"{p}-{o}-{v}" for p, o, v, _ in SWITCHES],
)
def test_the_text_follows_the_switch(preset: str, option: str, value: Any, phrase: str) -> None:
    base = PRESETS[preset]
    changed = base.replace(**{option: value})
    assert changed.options()[option] != base.options()[option]
    assert phrase in text(changed)
    assert phrase not in text(base)
    assert f"„{OPTION_TITLES[option]}“" in describe(changed)[0].paragraphs[1]


@pytest.mark.parametrize(
    ("preset", "option", "value", "phrase"),
    SWITCHED_OFF,
    ids=[f"{p}-{o}-{v}" for p, o, v, _ in SWITCHED_OFF],
)
def test_a_switch_turned_off_takes_its_sentence_along(
    preset: str, option: str, value: Any, phrase: str
) -> None:
    base = PRESETS[preset]
    assert phrase in text(base)
    assert phrase not in text(base.replace(**{option: value}))


def test_a_hand_only_rule_counts_an_assembled_general_as_a_number() -> None:
    whole = text(PRESETS["standard"].replace(hand_only=["general"]))
    assert "zusammengelegt ist das eine Zahl: 5-5-5 zusammengelegt ist Zahl 555." in whole
    assert (
        "General (6-6-6 vor 5-5-5 vor 4-4-4 vor 3-3-3 vor 2-2-2): 3 Deckel; nur aus der Hand"
        in whole
    )
    assert "von 6-6-6 = 666 bis 1-2-2 = 221" in whole
    assert "zusammengelegt zählen hier auch General" in whole


def test_schock_aus_worth_the_total_names_the_number() -> None:
    rules = PRESETS["standard"].replace(schock_aus="total", deckel=17)
    assert "1. Schock aus (1-1-1): 17 Deckel" in text(rules)
    assert "wie im Spiel sind (17 Deckel)" in text(rules)


def test_jule_on_top_ends_the_round_with_schock_aus() -> None:
    rules = PRESETS["nrw"].replace(jule="top")
    assert "Jule oder Schock aus beendet die Runde sofort" in text(rules)
    assert "Bei Jule oder Schock aus bekommt der schlechteste Wurf" in text(rules)


# ----------------------------------------------------------------------------- the hierarchy


RULESETS = [
    *PRESETS.values(),
    PRESETS["standard"].replace(general_over_schock2=True, strassen="equal"),
    PRESETS["standard"].replace(jule="top", specials=["neuner", "achter"], schock_aus="total"),
    PRESETS["wolbeck"].replace(specials=[BRATWURST], two_dice=True, sixes_turning=False),
    PRESETS["hennef"].replace(hand_beats_assembled=["schock"], jule="sieben"),
]


@pytest.mark.parametrize("rules", RULESETS, ids=lambda r: str(r.to_config()))
def test_the_hierarchy_is_the_order_of_the_engines_comparison_keys(rules: Ruleset) -> None:
    ranks = hierarchy(rules)
    for rank in ranks:
        keys = [ev.key for ev in rank.results]
        assert keys == sorted(keys, reverse=True)
        assert len({ev.deckel for ev in rank.results}) == 1, rank.name
    for upper, lower in zip(ranks, ranks[1:], strict=False):
        assert upper.worst >= lower.best, (upper.name, lower.name)
        assert upper.best > lower.best
    # every result the engine can produce stands in exactly one line
    listed = [(ev.dice, ev.hand) for rank in ranks for ev in rank.results]
    produced = {(ev.dice, ev.hand) for ev in evaluation_table(rules).values()}
    assert len(listed) == len(set(listed)) and set(listed) == produced
    # the page lists them in this order, with the engine's Deckel
    bullets = describe(rules)[1].bullets
    assert len(bullets) == len(ranks)
    for bullet, rank in zip(bullets, ranks, strict=True):
        assert bullet.startswith(f"{rank.name} (")
        assert f": {deckel_text(rank.first)}" in bullet


def test_the_order_of_the_rule_book_and_its_variants() -> None:
    def names(rules: Ruleset) -> list[str]:
        return [rank.name for rank in hierarchy(rules)]

    schocks = [f"Schock {h}" for h in range(6, 1, -1)]
    assert names(PRESETS["standard"]) == ["Schock aus", *schocks, "General", "Straße", "Zahl"]
    assert names(PRESETS["bvb"]) == ["Schock aus", *schocks[:4], "General", "Schock 2",
                                     "Straße", "Zahl"]  # fmt: skip
    assert names(PRESETS["wolbeck"])[:3] == ["Schock aus", "Jule", "Schock 6"]
    top = PRESETS["standard"].replace(jule="top", specials=["neuner"])
    assert names(top)[:4] == ["Jule", "Schock aus", "Neuner", "Schock 6"]


def test_two_dice_list_only_what_two_dice_can_make() -> None:
    three, two = PRESETS["standard"], PRESETS["standard"].replace(two_dice=True)
    assert "1-2-3" in describe(three)[1].bullets[-2]
    straight = next(b for b in describe(two)[1].bullets if b.startswith("Straße"))
    assert "1-2-3" not in straight  # 1 and 2 make Schock 2 with an imagined 1
    assert evaluate((2, 1), True, two).name == "Schock 2"
    assert [r.name for r in hierarchy(two)] == [r.name for r in hierarchy(three)]
    assert len(hierarchy(two)[-1].results) < len(hierarchy(three)[-1].results)


def test_a_group_of_up_to_six_results_is_listed_one_by_one() -> None:
    """A line lists its results one by one up to six different dice, else first to last: under
    two dice with General only from the hand and two specials, Zahl keeps exactly six."""
    rules = PRESETS["standard"].replace(
        two_dice=True, hand_only=["general"], specials=["siebener", "achter"]
    )
    zahl = next(rank for rank in hierarchy(rules) if rank.name == "Zahl")
    assert len(zahl.dice()) == 6
    assert next(b for b in describe(rules)[1].bullets if b.startswith("Zahl")) == (
        "Zahl (6-6-6 vor 3-6-6 vor 2-6-6 vor 5-5-6 vor 2-5-6 vor 4-4-6): 1 Deckel; "
        "zusammengelegt zählen hier auch General"
    )
    many = next(b for b in describe(PRESETS["standard"])[1].bullets if b.startswith("Zahl"))
    assert many.startswith("Zahl (alles andere; von ")


def test_equal_straights_are_said_to_be_equal() -> None:
    bullets = describe(PRESETS["standard"].replace(strassen="equal"))[1].bullets
    assert "Straße (4-5-6, 3-4-5, 2-3-4 und 1-2-3, alle gleich hoch): 2 Deckel" in bullets


#: the hierarchy section word for word: wolbeck (hand_only General and Straße, Naturschock,
#: Jule), hennef (hand_only Straße, General over Schock 2, no Jule), and Jule only from the hand
#: (api/rules/RULES.md §10.28: assembled, 4-2-1 is the Zahl 421), also as the only hand rule
#: (then „Aus der Hand“ is explained), and a Jule that counts assembled too
HIERARCHY_TEXTS: list[tuple[str, dict[str, Any], tuple[str, ...], tuple[str, ...]]] = [
    (
        "wolbeck",
        {},
        (
            "Schock aus (1-1-1): alle Deckel; aus der Hand vor zusammengelegt",
            "Jule (1-2-4): 7 Deckel",
            "Schock 6 (1-1-6): 6 Deckel; aus der Hand vor zusammengelegt",
            "Schock 5 (1-1-5): 5 Deckel; aus der Hand vor zusammengelegt",
            "Schock 4 (1-1-4): 4 Deckel; aus der Hand vor zusammengelegt",
            "Schock 3 (1-1-3): 3 Deckel; aus der Hand vor zusammengelegt",
            "Schock 2 (1-1-2): 2 Deckel; aus der Hand vor zusammengelegt",
            "General (6-6-6 vor 5-5-5 vor 4-4-4 vor 3-3-3 vor 2-2-2): 3 Deckel; nur aus der Hand",
            "Straße (4-5-6 vor 3-4-5 vor 2-3-4 vor 1-2-3): 2 Deckel; nur aus der Hand",
            "Zahl (alles andere; von 6-6-6 = 666 bis 1-2-2 = 221, gelesen von der höchsten Augenzahl an): 1 Deckel; zusammengelegt zählen hier auch General und Straße",
        ),
        (
            "Der schlechteste Wurf der Runde bekommt so viele Deckel, wie der beste wert ist: hat der Beste Schock 5 und der Schlechteste Zahl 632, bekommt er 5 Deckel.",
            "Jeder Schock ist höher als jeder General – auch Schock 2, obwohl er nur 2 Deckel bringt und ein General 3 Deckel.",
            "Straßen zählen nach Höhe: 4-5-6 ist die höchste, 1-2-3 die niedrigste.",
            "General und Straße zählen nur aus der Hand; zusammengelegt ist das eine Zahl: 5-5-5 zusammengelegt ist Zahl 555.",
            "Bei gleichem Wurf schlägt der aus der Hand geworfene den zusammengelegten („Naturschock“) – bei Schock aus und bei jedem anderen Schock; das gilt vor der Regel für Gleichstand.",
            "„Aus der Hand“ heißt: der letzte Wurf warf alle Würfel, nichts war herausgelegt oder umgedreht.",
            "Sonderwurf Jule (1-2-4): zwischen Schock aus und Schock 6, 7 Deckel; zählt auch zusammengelegt.",
        ),
    ),
    (
        "hennef",
        {},
        (
            "Schock aus (1-1-1): alle Deckel",
            "Schock 6 (1-1-6): 6 Deckel",
            "Schock 5 (1-1-5): 5 Deckel",
            "Schock 4 (1-1-4): 4 Deckel",
            "Schock 3 (1-1-3): 3 Deckel",
            "General (6-6-6 vor 5-5-5 vor 4-4-4 vor 3-3-3 vor 2-2-2): 3 Deckel",
            "Schock 2 (1-1-2): 2 Deckel",
            "Straße (4-5-6 vor 3-4-5 vor 2-3-4 vor 1-2-3): 2 Deckel; nur aus der Hand",
            "Zahl (alles andere; von 5-6-6 = 665 bis 1-2-2 = 221, gelesen von der höchsten Augenzahl an): 1 Deckel; zusammengelegt zählen hier auch Straße",
        ),
        (
            "Der schlechteste Wurf der Runde bekommt so viele Deckel, wie der beste wert ist: hat der Beste Schock 5 und der Schlechteste Zahl 632, bekommt er 5 Deckel.",
            "Ein General ist bei uns höher als Schock 2, aber niedriger als Schock 3.",
            "Straßen zählen nach Höhe: 4-5-6 ist die höchste, 1-2-3 die niedrigste.",
            "Straße zählt nur aus der Hand; zusammengelegt ist das eine Zahl: 4-5-6 zusammengelegt ist Zahl 654.",
            "„Aus der Hand“ heißt: der letzte Wurf warf alle Würfel, nichts war herausgelegt oder umgedreht.",
            "4-2-1 ist bei uns keine Jule, sondern die Zahl 421.",
        ),
    ),
    (
        "standard",
        {"hand_only": ["general", "strasse", "jule"], "jule": "sieben"},
        (
            "Schock aus (1-1-1): alle Deckel",
            "Jule (1-2-4): 7 Deckel; nur aus der Hand",
            "Schock 6 (1-1-6): 6 Deckel",
            "Schock 5 (1-1-5): 5 Deckel",
            "Schock 4 (1-1-4): 4 Deckel",
            "Schock 3 (1-1-3): 3 Deckel",
            "Schock 2 (1-1-2): 2 Deckel",
            "General (6-6-6 vor 5-5-5 vor 4-4-4 vor 3-3-3 vor 2-2-2): 3 Deckel; nur aus der Hand",
            "Straße (4-5-6 vor 3-4-5 vor 2-3-4 vor 1-2-3): 2 Deckel; nur aus der Hand",
            "Zahl (alles andere; von 6-6-6 = 666 bis 1-2-2 = 221, gelesen von der höchsten Augenzahl an): 1 Deckel; zusammengelegt zählen hier auch Jule, General und Straße",
        ),
        (
            "Der schlechteste Wurf der Runde bekommt so viele Deckel, wie der beste wert ist: hat der Beste Schock 5 und der Schlechteste Zahl 632, bekommt er 5 Deckel.",
            "Jeder Schock ist höher als jeder General – auch Schock 2, obwohl er nur 2 Deckel bringt und ein General 3 Deckel.",
            "Straßen zählen nach Höhe: 4-5-6 ist die höchste, 1-2-3 die niedrigste.",
            "General und Straße zählen nur aus der Hand; zusammengelegt ist das eine Zahl: 5-5-5 zusammengelegt ist Zahl 555.",
            "„Aus der Hand“ heißt: der letzte Wurf warf alle Würfel, nichts war herausgelegt oder umgedreht.",
            "Sonderwurf Jule (1-2-4): zwischen Schock aus und Schock 6, 7 Deckel; zählt nur aus der Hand, zusammengelegt ist das die Zahl 421.",
        ),
    ),
    (
        "standard",
        {"jule": "sieben"},
        (
            "Schock aus (1-1-1): alle Deckel",
            "Jule (1-2-4): 7 Deckel",
            "Schock 6 (1-1-6): 6 Deckel",
            "Schock 5 (1-1-5): 5 Deckel",
            "Schock 4 (1-1-4): 4 Deckel",
            "Schock 3 (1-1-3): 3 Deckel",
            "Schock 2 (1-1-2): 2 Deckel",
            "General (6-6-6 vor 5-5-5 vor 4-4-4 vor 3-3-3 vor 2-2-2): 3 Deckel",
            "Straße (4-5-6 vor 3-4-5 vor 2-3-4 vor 1-2-3): 2 Deckel",
            "Zahl (alles andere; von 5-6-6 = 665 bis 1-2-2 = 221, gelesen von der höchsten Augenzahl an): 1 Deckel",
        ),
        (
            "Der schlechteste Wurf der Runde bekommt so viele Deckel, wie der beste wert ist: hat der Beste Schock 5 und der Schlechteste Zahl 632, bekommt er 5 Deckel.",
            "Jeder Schock ist höher als jeder General – auch Schock 2, obwohl er nur 2 Deckel bringt und ein General 3 Deckel.",
            "Straßen zählen nach Höhe: 4-5-6 ist die höchste, 1-2-3 die niedrigste.",
            "Sonderwurf Jule (1-2-4): zwischen Schock aus und Schock 6, 7 Deckel; zählt auch zusammengelegt.",
        ),
    ),
    (
        "standard",
        {"hand_only": ["jule"], "jule": "sieben"},
        (
            "Schock aus (1-1-1): alle Deckel",
            "Jule (1-2-4): 7 Deckel; nur aus der Hand",
            "Schock 6 (1-1-6): 6 Deckel",
            "Schock 5 (1-1-5): 5 Deckel",
            "Schock 4 (1-1-4): 4 Deckel",
            "Schock 3 (1-1-3): 3 Deckel",
            "Schock 2 (1-1-2): 2 Deckel",
            "General (6-6-6 vor 5-5-5 vor 4-4-4 vor 3-3-3 vor 2-2-2): 3 Deckel",
            "Straße (4-5-6 vor 3-4-5 vor 2-3-4 vor 1-2-3): 2 Deckel",
            "Zahl (alles andere; von 5-6-6 = 665 bis 1-2-2 = 221, gelesen von der höchsten Augenzahl an): 1 Deckel; zusammengelegt zählen hier auch Jule",
        ),
        (
            "Der schlechteste Wurf der Runde bekommt so viele Deckel, wie der beste wert ist: hat der Beste Schock 5 und der Schlechteste Zahl 632, bekommt er 5 Deckel.",
            "Jeder Schock ist höher als jeder General – auch Schock 2, obwohl er nur 2 Deckel bringt und ein General 3 Deckel.",
            "Straßen zählen nach Höhe: 4-5-6 ist die höchste, 1-2-3 die niedrigste.",
            "„Aus der Hand“ heißt: der letzte Wurf warf alle Würfel, nichts war herausgelegt oder umgedreht.",
            "Sonderwurf Jule (1-2-4): zwischen Schock aus und Schock 6, 7 Deckel; zählt nur aus der Hand, zusammengelegt ist das die Zahl 421.",
        ),
    ),
]


@pytest.mark.parametrize(("preset", "overrides", "bullets", "notes"), HIERARCHY_TEXTS)
def test_the_hierarchy_reads_word_for_word(
    preset: str, overrides: dict[str, Any], bullets: tuple[str, ...], notes: tuple[str, ...]
) -> None:
    section = describe(ruleset_from_config({"preset": preset, "overrides": overrides}))[1]
    assert section.bullets == bullets
    assert section.notes == notes
