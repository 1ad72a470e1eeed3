"""Evaluation of a final result: api/rules/RULES.md §2, its variants and the readings of 10.1–10.7.

The golden tables at the end were written from api/rules/RULES.md by hand (never produced by the engine):
every one of the 56 unordered results under every preset, with its category, name and Deckel,
and the complete order of all results from the hand and assembled.
"""

from __future__ import annotations

import itertools
from collections import Counter
from functools import cache

import pytest
from engine_play import rules

from api.rules import (
    PRESETS,
    InvalidRules,
    MalformedInput,
    evaluate,
    evaluation_table,
)

STD = PRESETS["standard"]


def dice(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("-"))


def key(text: str, hand: bool, ruleset=STD) -> int:
    return evaluate(dice(text), hand, ruleset).key


# --------------------------------------------------------------------------- section 2 rows

SECTION_2_ROWS = [
    # dice in throw order (not sorted), category, name, Deckel (None: all)
    ((1, 1, 1), "schock_aus", "Schock aus", None),
    ((6, 1, 1), "schock", "Schock 6", 6),
    ((1, 5, 1), "schock", "Schock 5", 5),
    ((1, 1, 4), "schock", "Schock 4", 4),
    ((3, 1, 1), "schock", "Schock 3", 3),
    ((1, 2, 1), "schock", "Schock 2", 2),
    ((6, 6, 6), "general", "General", 3),
    ((5, 5, 5), "general", "General", 3),
    ((4, 4, 4), "general", "General", 3),
    ((3, 3, 3), "general", "General", 3),
    ((2, 2, 2), "general", "General", 3),
    ((5, 6, 4), "strasse", "Straße", 2),
    ((3, 5, 4), "strasse", "Straße", 2),
    ((4, 2, 3), "strasse", "Straße", 2),
    ((2, 1, 3), "strasse", "Straße", 2),
    ((6, 5, 3), "zahl", "Zahl 653", 1),
    ((6, 5, 2), "zahl", "Zahl 652", 1),
    ((1, 5, 3), "zahl", "Zahl 531", 1),
    ((4, 2, 5), "zahl", "Zahl 542", 1),
    ((2, 2, 1), "zahl", "Zahl 221", 1),
    ((6, 6, 5), "zahl", "Zahl 665", 1),
    ((4, 2, 1), "zahl", "Zahl 421", 1),
]


@pytest.mark.parametrize("hand", [True, False], ids=["hand", "assembled"])
@pytest.mark.parametrize(
    ("throw", "category", "name", "deckel"),
    SECTION_2_ROWS,
    ids=[f"{r[2].replace('ß', 'ss')}-{''.join(map(str, r[0]))}" for r in SECTION_2_ROWS],
)
def test_each_row_of_the_default_table_has_its_category_name_and_deckel(
    throw, category, name, deckel, hand
):
    ev = evaluate(throw, hand, STD)
    assert ev.category == category
    assert ev.name == name
    if deckel is None:
        assert ev.takes_all and ev.deckel == STD.deckel
    else:
        assert not ev.takes_all and ev.deckel == deckel
    assert ev.notation == "-".join(map(str, sorted(throw)))


def test_the_default_ranks_are_strictly_ordered_from_schock_aus_down_to_the_lowest_zahl():
    chain = [
        "1-1-1",
        "1-1-6",
        "1-1-5",
        "1-1-4",
        "1-1-3",
        "1-1-2",
        "6-6-6",
        "5-5-5",
        "4-4-4",
        "3-3-3",
        "2-2-2",
        "4-5-6",
        "3-4-5",
        "2-3-4",
        "1-2-3",
        "5-6-6",
        "3-5-6",
        "2-5-6",
        "1-2-2",
    ]
    keys = [key(r, True) for r in chain]
    assert keys == sorted(keys, reverse=True)
    assert len(set(keys)) == len(keys)


def test_a_schock_2_beats_every_general_by_default():
    assert key("1-1-2", False) > key("6-6-6", True)


def test_a_zahl_is_read_with_its_pips_descending():
    assert key("3-5-6", True) > key("2-5-6", True)  # 653 > 652
    assert key("1-2-6", True) > key("4-5-5", True)  # 621 > 554: the first pip counts most
    assert evaluate((3, 6, 5), True, STD).name == "Zahl 653"


def test_the_lowest_result_is_2_2_1():
    lowest = min(evaluation_table(STD).values(), key=lambda e: e.key)
    assert lowest.notation == "1-2-2"
    assert lowest.name == "Zahl 221"


def test_the_order_of_the_dice_never_matters():
    for combo in itertools.combinations_with_replacement(range(1, 7), 3):
        for hand in (True, False):
            evs = {evaluate(perm, hand, STD) for perm in itertools.permutations(combo)}
            assert len({(e.key, e.name, e.deckel) for e in evs}) == 1, combo


def test_enumerating_all_216_throws_from_the_hand_reproduces_the_probability_table():
    counts = Counter()
    for throw in itertools.product(range(1, 7), repeat=3):
        counts[evaluate(throw, True, STD).category.value] += 1
    assert sum(counts.values()) == 216
    assert counts == {"schock_aus": 1, "schock": 15, "general": 5, "strasse": 24, "zahl": 171}
    assert counts["schock"] == 3 * counts["general"]


def test_impossible_dice_are_rejected_as_malformed():
    for bad in [(0, 1, 1), (7, 1, 1), (1, 1), (1, 1, 1, 1)]:
        with pytest.raises(MalformedInput):
            evaluate(bad, True, STD)


# --------------------------------------------------------------------------- variants


def test_general_over_schock2_puts_every_general_between_schock_2_and_schock_3():
    r = rules(general_over_schock2=True)
    assert key("2-2-2", True, r) > key("1-1-2", True, r)
    assert key("6-6-6", True, r) < key("1-1-3", True, r)
    assert key("6-6-6", True, r) > key("5-5-5", True, r)
    assert evaluate((2, 2, 2), True, r).deckel == 3
    assert evaluate((1, 1, 2), True, r).deckel == 2


def test_strassen_equal_makes_every_strasse_the_same():
    r = rules(strassen="equal")
    assert len({key(s, True, r) for s in ["4-5-6", "3-4-5", "2-3-4", "1-2-3"]}) == 1
    assert key("1-2-3", True, r) > key("5-6-6", True, r)
    assert key("4-5-6", True, r) < key("2-2-2", True, r)
    # by height by default
    assert key("4-5-6", True) > key("3-4-5", True) > key("2-3-4", True) > key("1-2-3", True)


def test_hand_only_general_makes_an_assembled_general_a_zahl_of_the_same_pips():
    r = rules(hand_only=["general"])
    assembled = evaluate((5, 5, 5), False, r)
    assert (assembled.category, assembled.name, assembled.deckel) == ("zahl", "Zahl 555", 1)
    assert key("5-5-5", False, r) < key("3-4-6", True, r)  # "555" is below "643" (10.1)
    assert key("5-5-5", False, r) > key("4-5-5", True, r)  # and above "554"
    assert evaluate((5, 5, 5), True, r).category == "general"
    assert evaluate((4, 5, 6), False, r).category == "strasse"  # Straße untouched


def test_hand_only_strasse_makes_an_assembled_strasse_a_zahl_of_the_same_pips():
    r = rules(hand_only=["strasse"])
    assembled = evaluate((4, 5, 6), False, r)
    assert (assembled.category, assembled.name, assembled.deckel) == ("zahl", "Zahl 654", 1)
    assert key("5-5-6", True, r) > key("4-5-6", False, r) > key("3-5-6", True, r)
    assert evaluate((4, 5, 6), True, r).category == "strasse"
    assert evaluate((2, 2, 2), False, r).category == "general"  # General untouched


def test_hand_beats_assembled_schock_aus_ranks_a_natural_schock_aus_above_an_assembled_one():
    r = rules(hand_beats_assembled=["schock_aus"])
    assert key("1-1-1", True, r) > key("1-1-1", False, r) > key("1-1-6", True, r)
    assert key("1-1-6", True, r) == key("1-1-6", False, r)  # only Schock aus
    assert key("1-1-1", True) == key("1-1-1", False)  # off by default


def test_hand_beats_assembled_schock_covers_every_schock_including_schock_aus():
    r = rules(hand_beats_assembled=["schock"])
    for h in [1, 6, 5, 4, 3, 2]:
        assert key(f"1-1-{h}", True, r) > key(f"1-1-{h}", False, r), h
    # a hand bonus never lifts a Schock over the next higher one
    assert key("1-1-6", False, r) > key("1-1-5", True, r)
    assert key("1-1-1", False, r) > key("1-1-6", True, r)
    # Generals are not affected
    assert key("6-6-6", True, r) == key("6-6-6", False, r)


def test_jule_off_is_a_plain_zahl_421():
    ev = evaluate((4, 2, 1), True, STD)
    assert (ev.category, ev.name, ev.deckel) == ("zahl", "Zahl 421", 1)


def test_jule_top_is_above_schock_aus_and_takes_every_deckel():
    r = rules(jule="top", hand_beats_assembled=["schock_aus"], deckel=15)
    for hand in (True, False):
        ev = evaluate((1, 2, 4), hand, r)
        assert ev.name == "Jule"
        assert ev.takes_all and ev.deckel == 15
        assert ev.key > key("1-1-1", True, r)


def test_jule_sieben_sits_between_schock_6_and_schock_aus_and_costs_7():
    r = rules(jule="sieben")
    for hand in (True, False):
        ev = evaluate((2, 4, 1), hand, r)
        assert (ev.name, ev.deckel, ev.takes_all) == ("Jule", 7, False)
        assert key("1-1-1", False, r) > ev.key > key("1-1-6", True, r)


@pytest.mark.parametrize(
    ("special", "throw", "name", "deckel"),
    [
        ("neuner", (2, 1, 2), "Neuner", 9),
        ("siebener", (1, 2, 2), "Siebener", 7),
        ("achter", (3, 1, 3), "Achter", 8),
    ],
)
def test_named_special_results_have_their_name_and_deckel_whatever_the_hand_flag(
    special, throw, name, deckel
):
    r = rules(specials=[special])
    for hand in (True, False):
        ev = evaluate(throw, hand, r)
        assert (ev.category, ev.name, ev.deckel) == ("special", name, deckel)
        assert key("1-1-1", True, r) > ev.key > key("1-1-6", True, r)


def test_specials_sit_on_the_rank_scale_jule_sieben_siebener_achter_neuner():
    # 10.4: Jule "sieben" 470 < Siebener 475 < Achter 480 < Neuner 490 < Schock aus 500
    r1 = rules(jule="sieben", specials=["siebener", "achter"])
    assert key("1-2-4", True, r1) < key("1-2-2", True, r1) < key("1-3-3", True, r1)
    r2 = rules(specials=["neuner", "achter"])
    assert key("1-3-3", True, r2) < key("1-2-2", True, r2) < key("1-1-1", True, r2)


def test_two_specials_with_the_same_pips_are_rejected():
    with pytest.raises(InvalidRules, match="Neuner"):
        rules(specials=["neuner", "siebener"])


def test_a_custom_special_result_is_data_with_pips_rank_and_deckel():
    r = rules(specials=[{"name": "Zicke", "pips": [1, 5, 6], "rank": 455, "deckel": 5}])
    ev = evaluate((6, 1, 5), False, r)
    assert (ev.category, ev.name, ev.deckel) == ("special", "Zicke", 5)
    assert key("1-1-6", True, r) > ev.key > key("1-1-5", True, r)  # 455 between 460 and 450


def test_a_custom_special_worth_all_behaves_like_schock_aus():
    r = rules(
        deckel=7, specials=[{"name": "Bombe", "pips": [3, 3, 3], "rank": 600, "deckel": "all"}]
    )
    ev = evaluate((3, 3, 3), True, r)
    assert ev.name == "Bombe" and ev.takes_all and ev.deckel == 7
    assert ev.key > key("1-1-1", True, r)


def test_two_dice_imagines_the_third_die_that_gives_the_highest_result():
    r = rules(two_dice=True)
    cases = {
        (6, 4): ("Straße", "4-5-6"),
        (1, 1): ("Schock aus", "1-1-1"),
        (6, 1): ("Schock 6", "1-1-6"),
        (1, 2): ("Schock 2", "1-1-2"),
        (3, 2): ("Straße", "2-3-4"),
        (5, 5): ("General", "5-5-5"),
        (2, 6): ("Zahl 662", "2-6-6"),
    }
    for throw, (name, notation) in cases.items():
        ev = evaluate(throw, True, r)
        assert (ev.name, ev.notation) == (name, notation), throw
    assert evaluate((1, 1), True, r).takes_all
    with pytest.raises(MalformedInput):
        evaluate((1, 1, 4), True, r)
    with pytest.raises(MalformedInput):
        evaluate((1, 1), True, STD)


def test_schock_aus_total_is_worth_the_games_deckel_total_without_taking_all():
    r = rules(schock_aus="total", deckel=9)
    ev = evaluate((1, 1, 1), True, r)
    assert ev.category == "schock_aus" and ev.deckel == 9 and not ev.takes_all
    assert ev.key > key("1-1-6", True, r)


# --------------------------------------------------------------------------- golden tables
# One line per category, written from api/rules/RULES.md §2 (default order, S0).

STANDARD_ROWS = """
1-1-1 schock_aus "Schock aus" all
1-1-6 schock "Schock 6" 6
1-1-5 schock "Schock 5" 5
1-1-4 schock "Schock 4" 4
1-1-3 schock "Schock 3" 3
1-1-2 schock "Schock 2" 2
6-6-6 general General 3
5-5-5 general General 3
4-4-4 general General 3
3-3-3 general General 3
2-2-2 general General 3
4-5-6 strasse Straße 2
3-4-5 strasse Straße 2
2-3-4 strasse Straße 2
1-2-3 strasse Straße 2
5-6-6 zahl "Zahl 665" 1
4-6-6 zahl "Zahl 664" 1
3-6-6 zahl "Zahl 663" 1
2-6-6 zahl "Zahl 662" 1
1-6-6 zahl "Zahl 661" 1
5-5-6 zahl "Zahl 655" 1
3-5-6 zahl "Zahl 653" 1
2-5-6 zahl "Zahl 652" 1
1-5-6 zahl "Zahl 651" 1
4-4-6 zahl "Zahl 644" 1
3-4-6 zahl "Zahl 643" 1
2-4-6 zahl "Zahl 642" 1
1-4-6 zahl "Zahl 641" 1
3-3-6 zahl "Zahl 633" 1
2-3-6 zahl "Zahl 632" 1
1-3-6 zahl "Zahl 631" 1
2-2-6 zahl "Zahl 622" 1
1-2-6 zahl "Zahl 621" 1
4-5-5 zahl "Zahl 554" 1
3-5-5 zahl "Zahl 553" 1
2-5-5 zahl "Zahl 552" 1
1-5-5 zahl "Zahl 551" 1
4-4-5 zahl "Zahl 544" 1
2-4-5 zahl "Zahl 542" 1
1-4-5 zahl "Zahl 541" 1
3-3-5 zahl "Zahl 533" 1
2-3-5 zahl "Zahl 532" 1
1-3-5 zahl "Zahl 531" 1
2-2-5 zahl "Zahl 522" 1
1-2-5 zahl "Zahl 521" 1
3-4-4 zahl "Zahl 443" 1
2-4-4 zahl "Zahl 442" 1
1-4-4 zahl "Zahl 441" 1
3-3-4 zahl "Zahl 433" 1
1-3-4 zahl "Zahl 431" 1
2-2-4 zahl "Zahl 422" 1
1-2-4 zahl "Zahl 421" 1
2-3-3 zahl "Zahl 332" 1
1-3-3 zahl "Zahl 331" 1
2-2-3 zahl "Zahl 322" 1
1-2-2 zahl "Zahl 221" 1
"""


def _parse_rows(text: str) -> dict[str, tuple[str, str, int | str]]:
    import shlex

    rows = {}
    for line in text.strip().splitlines():
        notation, category, name, deckel = shlex.split(line)
        rows[notation] = (category, name, deckel if deckel == "all" else int(deckel))
    return rows


STANDARD = _parse_rows(STANDARD_ROWS)

# Assembled Generals and Straßen under "hand only" (api/rules/RULES.md §10.1): a Zahl of the same pips.
GENERAL_AS_ZAHL = {
    "6-6-6": ("zahl", "Zahl 666", 1),
    "5-5-5": ("zahl", "Zahl 555", 1),
    "4-4-4": ("zahl", "Zahl 444", 1),
    "3-3-3": ("zahl", "Zahl 333", 1),
    "2-2-2": ("zahl", "Zahl 222", 1),
}
STRASSE_AS_ZAHL = {
    "4-5-6": ("zahl", "Zahl 654", 1),
    "3-4-5": ("zahl", "Zahl 543", 1),
    "2-3-4": ("zahl", "Zahl 432", 1),
    "1-2-3": ("zahl", "Zahl 321", 1),
}
JULE_SIEBEN = {"1-2-4": ("special", "Jule", 7)}

# (preset) -> (changes from the hand, changes when assembled), section 8
PRESET_ROW_CHANGES = {
    "standard": ({}, {}),
    "wikipedia": ({}, {}),
    "bvb": ({}, {}),
    "hennef": ({}, STRASSE_AS_ZAHL),
    "wolbeck": (JULE_SIEBEN, {**JULE_SIEBEN, **GENERAL_AS_ZAHL, **STRASSE_AS_ZAHL}),
    "party": ({}, {}),
    "nrw": ({}, {**GENERAL_AS_ZAHL, **STRASSE_AS_ZAHL}),
}

# The complete order of every result (strongest first) from the hand and assembled.
# "1-1-4" means from the hand and assembled (equal), "1-1-1h" only from the hand,
# "1-1-1a" only assembled.
STANDARD_ORDER = """
1-1-1 > 1-1-6 > 1-1-5 > 1-1-4 > 1-1-3 > 1-1-2 > 6-6-6 > 5-5-5 > 4-4-4 > 3-3-3 > 2-2-2
> 4-5-6 > 3-4-5 > 2-3-4 > 1-2-3 > 5-6-6 > 4-6-6 > 3-6-6 > 2-6-6 > 1-6-6 > 5-5-6 > 3-5-6
> 2-5-6 > 1-5-6 > 4-4-6 > 3-4-6 > 2-4-6 > 1-4-6 > 3-3-6 > 2-3-6 > 1-3-6 > 2-2-6 > 1-2-6
> 4-5-5 > 3-5-5 > 2-5-5 > 1-5-5 > 4-4-5 > 2-4-5 > 1-4-5 > 3-3-5 > 2-3-5 > 1-3-5 > 2-2-5
> 1-2-5 > 3-4-4 > 2-4-4 > 1-4-4 > 3-3-4 > 1-3-4 > 2-2-4 > 1-2-4 > 2-3-3 > 1-3-3 > 2-2-3
> 1-2-2
"""
# hand beats assembled for Schock aus ("Naturschock")
WIKIPEDIA_ORDER = """
1-1-1h > 1-1-1a > 1-1-6 > 1-1-5 > 1-1-4 > 1-1-3 > 1-1-2 > 6-6-6 > 5-5-5 > 4-4-4 > 3-3-3
> 2-2-2 > 4-5-6 > 3-4-5 > 2-3-4 > 1-2-3 > 5-6-6 > 4-6-6 > 3-6-6 > 2-6-6 > 1-6-6 > 5-5-6
> 3-5-6 > 2-5-6 > 1-5-6 > 4-4-6 > 3-4-6 > 2-4-6 > 1-4-6 > 3-3-6 > 2-3-6 > 1-3-6 > 2-2-6
> 1-2-6 > 4-5-5 > 3-5-5 > 2-5-5 > 1-5-5 > 4-4-5 > 2-4-5 > 1-4-5 > 3-3-5 > 2-3-5 > 1-3-5
> 2-2-5 > 1-2-5 > 3-4-4 > 2-4-4 > 1-4-4 > 3-3-4 > 1-3-4 > 2-2-4 > 1-2-4 > 2-3-3 > 1-3-3
> 2-2-3 > 1-2-2
"""
# General above Schock 2 (between Schock 2 and Schock 3)
BVB_ORDER = """
1-1-1 > 1-1-6 > 1-1-5 > 1-1-4 > 1-1-3 > 6-6-6 > 5-5-5 > 4-4-4 > 3-3-3 > 2-2-2 > 1-1-2
> 4-5-6 > 3-4-5 > 2-3-4 > 1-2-3 > 5-6-6 > 4-6-6 > 3-6-6 > 2-6-6 > 1-6-6 > 5-5-6 > 3-5-6
> 2-5-6 > 1-5-6 > 4-4-6 > 3-4-6 > 2-4-6 > 1-4-6 > 3-3-6 > 2-3-6 > 1-3-6 > 2-2-6 > 1-2-6
> 4-5-5 > 3-5-5 > 2-5-5 > 1-5-5 > 4-4-5 > 2-4-5 > 1-4-5 > 3-3-5 > 2-3-5 > 1-3-5 > 2-2-5
> 1-2-5 > 3-4-4 > 2-4-4 > 1-4-4 > 3-3-4 > 1-3-4 > 2-2-4 > 1-2-4 > 2-3-3 > 1-3-3 > 2-2-3
> 1-2-2
"""
# General above Schock 2; Straße only from the hand
HENNEF_ORDER = """
1-1-1 > 1-1-6 > 1-1-5 > 1-1-4 > 1-1-3 > 6-6-6 > 5-5-5 > 4-4-4 > 3-3-3 > 2-2-2 > 1-1-2
> 4-5-6h > 3-4-5h > 2-3-4h > 1-2-3h > 5-6-6 > 4-6-6 > 3-6-6 > 2-6-6 > 1-6-6 > 5-5-6
> 4-5-6a > 3-5-6 > 2-5-6 > 1-5-6 > 4-4-6 > 3-4-6 > 2-4-6 > 1-4-6 > 3-3-6 > 2-3-6 > 1-3-6
> 2-2-6 > 1-2-6 > 4-5-5 > 3-5-5 > 2-5-5 > 1-5-5 > 4-4-5 > 3-4-5a > 2-4-5 > 1-4-5 > 3-3-5
> 2-3-5 > 1-3-5 > 2-2-5 > 1-2-5 > 3-4-4 > 2-4-4 > 1-4-4 > 3-3-4 > 2-3-4a > 1-3-4 > 2-2-4
> 1-2-4 > 2-3-3 > 1-3-3 > 2-2-3 > 1-2-3a > 1-2-2
"""
# Jule "sieben"; General and Straße only from the hand; every Schock from the hand is higher
WOLBECK_ORDER = """
1-1-1h > 1-1-1a > 1-2-4 > 1-1-6h > 1-1-6a > 1-1-5h > 1-1-5a > 1-1-4h > 1-1-4a > 1-1-3h
> 1-1-3a > 1-1-2h > 1-1-2a > 6-6-6h > 5-5-5h > 4-4-4h > 3-3-3h > 2-2-2h > 4-5-6h > 3-4-5h
> 2-3-4h > 1-2-3h > 6-6-6a > 5-6-6 > 4-6-6 > 3-6-6 > 2-6-6 > 1-6-6 > 5-5-6 > 4-5-6a
> 3-5-6 > 2-5-6 > 1-5-6 > 4-4-6 > 3-4-6 > 2-4-6 > 1-4-6 > 3-3-6 > 2-3-6 > 1-3-6 > 2-2-6
> 1-2-6 > 5-5-5a > 4-5-5 > 3-5-5 > 2-5-5 > 1-5-5 > 4-4-5 > 3-4-5a > 2-4-5 > 1-4-5 > 3-3-5
> 2-3-5 > 1-3-5 > 2-2-5 > 1-2-5 > 4-4-4a > 3-4-4 > 2-4-4 > 1-4-4 > 3-3-4 > 2-3-4a > 1-3-4
> 2-2-4 > 3-3-3a > 2-3-3 > 1-3-3 > 2-2-3 > 1-2-3a > 2-2-2a > 1-2-2
"""
# the party edition evaluates like the standard
PARTY_ORDER = STANDARD_ORDER
# General and Straße only from the hand
NRW_ORDER = """
1-1-1 > 1-1-6 > 1-1-5 > 1-1-4 > 1-1-3 > 1-1-2 > 6-6-6h > 5-5-5h > 4-4-4h > 3-3-3h
> 2-2-2h > 4-5-6h > 3-4-5h > 2-3-4h > 1-2-3h > 6-6-6a > 5-6-6 > 4-6-6 > 3-6-6 > 2-6-6
> 1-6-6 > 5-5-6 > 4-5-6a > 3-5-6 > 2-5-6 > 1-5-6 > 4-4-6 > 3-4-6 > 2-4-6 > 1-4-6 > 3-3-6
> 2-3-6 > 1-3-6 > 2-2-6 > 1-2-6 > 5-5-5a > 4-5-5 > 3-5-5 > 2-5-5 > 1-5-5 > 4-4-5 > 3-4-5a
> 2-4-5 > 1-4-5 > 3-3-5 > 2-3-5 > 1-3-5 > 2-2-5 > 1-2-5 > 4-4-4a > 3-4-4 > 2-4-4 > 1-4-4
> 3-3-4 > 2-3-4a > 1-3-4 > 2-2-4 > 1-2-4 > 3-3-3a > 2-3-3 > 1-3-3 > 2-2-3 > 1-2-3a
> 2-2-2a > 1-2-2
"""
ORDERS = {
    "standard": STANDARD_ORDER,
    "wikipedia": WIKIPEDIA_ORDER,
    "bvb": BVB_ORDER,
    "hennef": HENNEF_ORDER,
    "wolbeck": WOLBECK_ORDER,
    "party": PARTY_ORDER,
    "nrw": NRW_ORDER,
}


def _tiers(text: str) -> list[set[tuple[str, bool]]]:
    """The order as a list of tiers of equal (notation, hand) results, strongest first."""
    tiers = []
    for token in text.replace("\n", " ").split(">"):
        token = token.strip()
        if token.endswith("h"):
            tiers.append({(token[:-1], True)})
        elif token.endswith("a"):
            tiers.append({(token[:-1], False)})
        else:
            tiers.append({(token, True), (token, False)})
    return tiers


@cache
def _expected_position(preset: str) -> dict[tuple[str, bool], int]:
    return {item: i for i, tier in enumerate(_tiers(ORDERS[preset])) for item in tier}


@cache
def _engine_position(preset: str) -> dict[tuple[str, bool], int]:
    """The engine's dense rank of each (notation, hand): 0 for the strongest."""
    r = PRESETS[preset]
    keys = {(n, h): key(n, h, r) for n in STANDARD for h in (True, False)}
    distinct = sorted(set(keys.values()), reverse=True)
    return {item: distinct.index(k) for item, k in keys.items()}


def test_the_golden_tables_cover_all_56_unordered_results_in_every_preset():
    assert len(STANDARD) == 56
    all_results = {
        "-".join(map(str, c)) for c in itertools.combinations_with_replacement(range(1, 7), 3)
    }
    assert set(STANDARD) == all_results
    for preset, order in ORDERS.items():
        items = [item for tier in _tiers(order) for item in tier]
        assert len(items) == 112 == len(set(items)), preset
    assert set(ORDERS) == set(PRESETS) == set(PRESET_ROW_CHANGES)


GOLDEN_CASES = [(p, n) for p in ORDERS for n in STANDARD]


@pytest.mark.parametrize(
    ("preset", "notation"), GOLDEN_CASES, ids=[f"{p}-{n}" for p, n in GOLDEN_CASES]
)
def test_each_result_of_the_golden_table_has_its_category_name_deckel_and_place(preset, notation):
    r = PRESETS[preset]
    hand_changes, assembled_changes = PRESET_ROW_CHANGES[preset]
    for hand, changes in ((True, hand_changes), (False, assembled_changes)):
        category, name, deckel = changes.get(notation, STANDARD[notation])
        ev = evaluate(dice(notation), hand, r)
        assert (ev.category.value, ev.name) == (category, name), hand
        if deckel == "all":
            assert ev.takes_all and ev.deckel == r.deckel
        else:
            assert (ev.deckel, ev.takes_all) == (deckel, False)
        # its place in the complete order of the preset
        expected = _expected_position(preset)[(notation, hand)]
        assert _engine_position(preset)[(notation, hand)] == expected, hand


@pytest.mark.parametrize("preset", list(ORDERS))
def test_the_engine_orders_all_results_by_strength_exactly_as_the_golden_order(preset):
    r = PRESETS[preset]
    expected = [
        sorted((n, h) for n, h in tier) for tier in _tiers(ORDERS[preset])
    ]  # tiers of equal strength
    by_key: dict[int, list[tuple[str, bool]]] = {}
    for n in STANDARD:
        for h in (True, False):
            by_key.setdefault(key(n, h, r), []).append((n, h))
    actual = [sorted(by_key[k]) for k in sorted(by_key, reverse=True)]
    assert actual == expected
