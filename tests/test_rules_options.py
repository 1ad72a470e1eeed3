"""House rules (api/rules/RULES.md, schemas/GAMELOG.md "rules"): every option, its values and its effect on a game.

A refused house rule is part of the engine's contract: the API answers with its code, its field
and its German message, so the refusal tables state all three exactly.

Every ruleset that is evaluated is built inside its test: a ruleset keeps its evaluation table
once it has been used, so a shared module-level ruleset would answer from an old table.
"""

from __future__ import annotations

import itertools

import pytest

from api.rules import (
    OPTION_HELP,
    OPTION_NAMES,
    PRESETS,
    InvalidRules,
    MalformedInput,
    Ruleset,
    evaluate,
    ruleset_from_config,
)
from api.rules.results import build_evaluation_table


def overrides(**options):
    return ruleset_from_config({"preset": "standard", "overrides": options})


def zwoelfer(**fields):
    """A Stammtisch's own special result (api/rules/RULES.md §10.4), with some of its fields changed."""
    return {"name": "Zwölfer", "pips": [6, 4, 2], "rank": 485, "deckel": 12, **fields}


def specials(*items):
    return {"overrides": {"specials": list(items)}}


# --------------------------------------------------------------------------- refusals

LIMITS = "(erlaubt: ganze Zahl von {} bis {})."
REFUSED_OPTIONS = [
    pytest.param(
        {"overrides": {"deckel": 1}},
        "deckel",
        "Hausregel „deckel“: 1 ist ungültig " + LIMITS.format(2, 99),
        id="schemas/GAMELOG.md deckel: at least 2",
    ),
    pytest.param(
        {"overrides": {"deckel": 100}},
        "deckel",
        "Hausregel „deckel“: 100 ist ungültig " + LIMITS.format(2, 99),
        id="schemas/GAMELOG.md deckel: at most 99",
    ),
    pytest.param(
        {"overrides": {"max_throws": 6}},
        "max_throws",
        "Hausregel „max_throws“: 6 ist ungültig " + LIMITS.format(1, 5),
        id="schemas/GAMELOG.md max_throws: 1 to 5",
    ),
    pytest.param(
        {"overrides": {"penalty": 0}},
        "penalty",
        "Hausregel „penalty“: 0 ist ungültig " + LIMITS.format(1, 99),
        id="schemas/GAMELOG.md penalty: null or 1 to 99",
    ),
    pytest.param(
        {"overrides": {"deckel": None}},
        "deckel",
        "Hausregel „deckel“: None ist ungültig " + LIMITS.format(2, 99),
        id="only penalty may be null",
    ),
    pytest.param(
        {"overrides": {"bier": True}},
        "bier",
        "Unbekannte Hausregel „bier“ (bekannt: deckel, max_throws, sixes_turning, "
        "ones_only_aside, general_over_schock2, strassen, hand_only, hand_beats_assembled, "
        "ties, jule, specials, two_fives_never_lose, schock_aus, schock_aus_ends_round, "
        "passing_on, next_starter, finale_opener, blind, penalty, penalty_mode, two_dice).",
        id="the options of schemas/GAMELOG.md",
    ),
    pytest.param(
        {"overrides": {"sixes_turning": "yes"}},
        "sixes_turning",
        "Hausregel „sixes_turning“: 'yes' ist kein true/false.",
        id="a switch is true or false",
    ),
    pytest.param(
        {"overrides": {"strassen": "diagonal"}},
        "strassen",
        "Hausregel „strassen“: unbekannter Wert 'diagonal' (erlaubt: height, equal).",
        id="strassen: height or equal",
    ),
    pytest.param(
        {"overrides": {"hand_only": "general"}},
        "hand_only",
        "Hausregel „hand_only“: erwartet eine Liste.",
        id="hand_only is a list",
    ),
    pytest.param(
        {"overrides": {"hand_only": ["zahl"]}},
        "hand_only",
        "Hausregel „hand_only“: unbekannter Wert 'zahl' (erlaubt: general, strasse, jule).",
        id="hand_only: a subset of general, strasse, jule",
    ),
    pytest.param(
        {"overrides": {"two_dice": True, "sixes_turning": True}},
        "two_dice",
        "Hausregeln „two_dice“ und „sixes_turning“ passen nicht zusammen.",
        id="two dice cannot turn sixes",
    ),
    pytest.param(
        ["standard"],
        None,
        "Die Hausregeln müssen ein Objekt mit preset und overrides sein.",
        id="the house rules are an object",
    ),
    pytest.param(
        {"preset": "standard", "zusatz": 2, "extra": 1},
        None,
        "Unbekannte Felder in den Hausregeln: extra, zusatz.",
        id="the house rules have preset and overrides only",
    ),
    pytest.param(
        {"overrides": ["deckel"]},
        "overrides",
        "„overrides“ muss ein Objekt sein.",
        id="overrides is an object",
    ),
    pytest.param(
        {"preset": "kneipe"},
        "preset",
        "Unbekanntes Regelwerk 'kneipe' (bekannt: standard, wikipedia, bvb, hennef, wolbeck, "
        "party, nrw).",
        id="the seven presets of api/rules/RULES.md §8",
    ),
]

SPECIAL_IS = "Hausregel „specials[0]“: "
REFUSED_SPECIALS = [
    pytest.param(
        specials("neuner", "siebener"),
        "specials",
        "Hausregel „specials“: Neuner und Siebener haben dieselben Augen 1-2-2.",
        id="two specials with the same pips",
    ),
    pytest.param(
        {"overrides": {"jule": "sieben", "specials": [zwoelfer(name="Vierer", pips=[1, 2, 4])]}},
        "specials",
        "Hausregel „specials“: Jule und Vierer haben dieselben Augen 1-2-4.",
        id="an own special on the pips of the Jule",
    ),
    pytest.param(
        {"overrides": {"specials": "neuner"}},
        "specials",
        "Hausregel „specials“: erwartet eine Liste.",
        id="specials is a list",
    ),
    pytest.param(
        specials("zwoelfer"),
        "specials",
        SPECIAL_IS + "unbekannter Sonderwurf 'zwoelfer' (bekannt: neuner, siebener, achter).",
        id="the named specials are neuner, siebener, achter",
    ),
    pytest.param(
        specials(7),
        "specials",
        SPECIAL_IS + "erwartet einen Namen oder ein Objekt mit name, pips, rank, deckel.",
        id="a special is a name or an object",
    ),
    pytest.param(
        specials(zwoelfer(farbe="rot")),
        "specials",
        SPECIAL_IS + "unbekannte Felder ['farbe']",
        id="an own special has no other fields",
    ),
    pytest.param(
        specials({"name": "Zwölfer", "pips": [6, 4, 2]}),
        "specials",
        SPECIAL_IS + "es fehlen ['deckel', 'rank']",
        id="an own special names pips, rank and deckel",
    ),
    pytest.param(
        specials(zwoelfer(name=12)),
        "specials",
        SPECIAL_IS + "der Name muss 1–40 Zeichen haben.",
        id="the name of a special is text",
    ),
    pytest.param(
        specials(zwoelfer(name="  ")),
        "specials",
        SPECIAL_IS + "der Name muss 1–40 Zeichen haben.",
        id="the name of a special is not blank",
    ),
    pytest.param(
        specials(zwoelfer(name="x" * 41)),
        "specials",
        SPECIAL_IS + "der Name muss 1–40 Zeichen haben.",
        id="the name of a special has at most 40 characters",
    ),
    pytest.param(
        specials(zwoelfer(pips=[6, 4])),
        "specials",
        SPECIAL_IS + "pips muss drei Augenzahlen von 1 bis 6 enthalten.",
        id="a special has three pips",
    ),
    pytest.param(
        specials(zwoelfer(pips=[6, 4, 7])),
        "specials",
        SPECIAL_IS + "pips muss drei Augenzahlen von 1 bis 6 enthalten.",
        id="the pips of a special are 1 to 6",
    ),
    pytest.param(
        specials("achter", zwoelfer(rank=0)),
        "specials[1].rank",
        "Hausregel „specials[1].rank“: 0 ist ungültig " + LIMITS.format(1, 999),
        id="the rank of a special is 1 to 999",
    ),
    pytest.param(
        specials(zwoelfer(deckel=100)),
        "specials[0].deckel",
        "Hausregel „specials[0].deckel“: 100 ist ungültig " + LIMITS.format(1, 99),
        id="a special costs 1 to 99 Deckel",
    ),
    pytest.param(
        specials(zwoelfer(deckel="alle")),
        "specials[0].deckel",
        "Hausregel „specials[0].deckel“: 'alle' ist ungültig " + LIMITS.format(1, 99),
        id="a special costs a number of Deckel or all",
    ),
]


@pytest.mark.parametrize(("config", "field", "message"), REFUSED_OPTIONS + REFUSED_SPECIALS)
def test_a_refused_house_rule_names_its_field_in_a_german_message(config, field, message):
    """schemas/GAMELOG.md: an unknown key or value is an error that names it (code invalid_rules)."""
    with pytest.raises(InvalidRules) as err:
        ruleset_from_config(config)
    assert (err.value.code, err.value.field, err.value.message) == (
        "invalid_rules",
        field,
        message,
    )


# --------------------------------------------------------------------------- the options


def test_own_specials_are_kept_as_the_objects_of_the_gamelog():
    """schemas/GAMELOG.md specials: names, or objects {name, pips, rank, deckel}; deckel "all" too."""
    rules = ruleset_from_config(
        specials(
            "achter", zwoelfer(pips=[2, 6, 4]), zwoelfer(name="Bombe", pips=[5, 5, 1], deckel="all")
        )
    )
    assert rules.options()["specials"] == [
        "achter",
        {"name": "Zwölfer", "pips": [6, 4, 2], "rank": 485, "deckel": 12},
        {"name": "Bombe", "pips": [5, 5, 1], "rank": 485, "deckel": "all"},
    ]
    assert ruleset_from_config(rules.to_config()) == rules


def test_a_penalty_of_null_means_no_fixed_number_of_strafdeckel():
    """schemas/GAMELOG.md penalty: null (no fixed number) or the Deckel per penalty."""
    rules = ruleset_from_config({"preset": "wikipedia", "overrides": {"penalty": None}})
    assert rules.penalty is None and PRESETS["wikipedia"].penalty == 2
    assert rules.to_config() == {"preset": "wikipedia", "overrides": {"penalty": None}}


def test_own_specials_pass_from_one_ruleset_to_another():
    """A ruleset's specials (names and Special objects) are valid options of another one."""
    rules = ruleset_from_config(specials("neuner", zwoelfer()))
    copy = PRESETS["standard"].replace(specials=rules.specials)
    assert copy == rules
    assert evaluate((2, 6, 4), False, copy).name == "Zwölfer"


def test_describe_lists_every_option_with_its_value_and_its_german_explanation():
    """The house-rule menu: every option of schemas/GAMELOG.md, its JSON value, its German help."""
    rules = ruleset_from_config({"preset": "wolbeck", "overrides": {"deckel": 15}})
    assert rules.describe() == [
        {"key": name, "value": rules.options()[name], "description": OPTION_HELP[name]}
        for name in OPTION_NAMES
    ]


def test_replace_changes_single_options_and_keeps_the_preset_and_the_other_overrides():
    """A ruleset's copy with some options changed, validated like overrides."""
    rules = ruleset_from_config({"preset": "wolbeck", "overrides": {"deckel": 15}})
    changed = rules.replace(jule="top")
    assert changed.to_config() == {"preset": "wolbeck", "overrides": {"deckel": 15, "jule": "top"}}
    assert changed.preset == "wolbeck" and changed.deckel == 15 and changed.jule == "top"
    with pytest.raises(InvalidRules) as err:
        rules.replace(deckel=1)
    assert err.value.field == "deckel"


def test_a_game_s_expanded_rules_are_built_once_with_one_evaluation_table():
    """Every game stores its rules expanded (every option as an override): building them again
    (a new game, a replay) gives the ruleset built first, whose evaluation table is made once;
    other rules give another ruleset."""
    expanded = {"preset": "standard", "overrides": PRESETS["standard"].options()}
    first = ruleset_from_config(expanded)
    evaluate((1, 1, 1), False, first)  # builds and keeps its evaluation table
    table = first._evaluations
    assert table is not None
    again = ruleset_from_config({"preset": "standard", "overrides": dict(expanded["overrides"])})
    assert again is first and again._evaluations is table
    other = ruleset_from_config({"preset": "standard", "overrides": {"deckel": 15}})
    assert other is not first and other != first and other.deckel == 15


def test_the_config_of_a_ruleset_outside_the_presets_names_its_options():
    """to_config keeps only the options that differ from the preset: with no such preset,
    every option that has a value."""
    rules = Ruleset(preset="stammtisch", deckel=15)
    config = rules.to_config()
    assert config["preset"] == "stammtisch"
    assert config["overrides"]["deckel"] == 15 and config["overrides"]["max_throws"] == 3
    assert {**PRESETS["standard"].options(), **config["overrides"]} == rules.options()


# --------------------------------------------------------------------------- the rank scale


@pytest.mark.parametrize(
    ("rank", "options", "equal_to"),
    [
        pytest.param(460, {}, "1-1-6", id="rank 460 is Schock 6"),
        pytest.param(430, {}, "1-1-3", id="rank 430 is Schock 3"),
        pytest.param(500, {}, "1-1-1", id="rank 500 is Schock aus"),
        pytest.param(200, {"strassen": "equal"}, "4-5-6", id="rank 200 is a Strasse (all equal)"),
    ],
)
@pytest.mark.parametrize("hand", [False, True], ids=["assembled", "hand"])
def test_an_own_special_is_as_strong_as_the_result_at_its_rank(rank, options, equal_to, hand):
    """api/rules/RULES.md §10.4: specials sit on the one rank scale (Schock h = 400 + 10·h, Schock aus 500),
    whatever the hand flag; at the same point of the scale neither result is higher."""
    rules = overrides(specials=[zwoelfer(rank=rank)], **options)
    other = tuple(int(p) for p in equal_to.split("-"))
    assert evaluate((6, 4, 2), hand, rules).key == evaluate(other, False, rules).key


# --------------------------------------------------------------------------- evaluations


@pytest.mark.parametrize(
    ("options", "dice", "hand", "expected"),
    [
        pytest.param(
            {"deckel": 15},
            (1, 4, 1),
            False,
            ("1-1-4", False, "schock", "Schock 4", 4, False),
            id="Schock 4 costs 4",
        ),
        pytest.param(
            {"deckel": 15},
            (5, 3, 6),
            True,
            ("3-5-6", True, "zahl", "Zahl 653", 1, False),
            id="a Zahl costs 1",
        ),
        pytest.param(
            {"deckel": 15},
            (1, 1, 1),
            True,
            ("1-1-1", True, "schock_aus", "Schock aus", 15, True),
            id="Schock aus takes every Deckel",
        ),
        pytest.param(
            {"deckel": 15, "schock_aus": "total"},
            (1, 1, 1),
            False,
            ("1-1-1", False, "schock_aus", "Schock aus", 15, False),
            id="Schock aus kostet 15 (the total) without taking all",
        ),
        pytest.param(
            {"jule": "sieben"},
            (2, 4, 1),
            False,
            ("1-2-4", False, "special", "Jule", 7, False),
            id="Jule sieben costs 7",
        ),
    ],
)
def test_an_evaluation_in_json_has_the_fields_of_the_api(options, dice, hand, expected):
    """The API's Evaluation: dice (pips ascending), hand, category, name, deckel, takes_all and
    an integer comparison key."""
    evaluation = evaluate(dice, hand, overrides(**options))
    as_json = evaluation.to_json()
    fields = ("dice", "hand", "category", "name", "deckel", "takes_all")
    assert as_json == {**dict(zip(fields, expected, strict=True)), "key": evaluation.key}
    assert type(as_json["key"]) is int


THREE_DICE = {(*d, h) for d in itertools.product(range(1, 7), repeat=3) for h in (False, True)}
TWO_DICE = {(*d, h) for d in itertools.product(range(1, 7), repeat=2) for h in (False, True)}


@pytest.mark.parametrize("preset", list(PRESETS))
def test_every_ruleset_evaluates_exactly_the_throws_of_its_dice(preset):
    """api/rules/RULES.md §2: the 216 throws of three dice with pips 1 to 6, from the hand and assembled
    (api/rules/RULES.md §10.7: two dice under two_dice); every evaluation keeps its hand flag and has an
    integer comparison key."""
    table = build_evaluation_table(PRESETS[preset])
    assert set(table) == THREE_DICE
    assert all(e.hand is throw[-1] and type(e.key) is int for throw, e in table.items())
    two = build_evaluation_table(PRESETS[preset].replace(two_dice=True, sixes_turning=False))
    assert set(two) == TWO_DICE


@pytest.mark.parametrize("preset", list(PRESETS))
def test_a_general_is_above_schock_2_only_under_general_over_schock2(preset):
    """api/rules/RULES.md §2 and 10.2: every Schock beats every General, unless "General above Schock 2"
    puts every General between Schock 2 and Schock 3."""
    rules = PRESETS[preset]
    table = build_evaluation_table(rules)
    schock2, schock3 = table[(1, 1, 2, False)].key, table[(1, 1, 3, False)].key
    generals = [table[(p, p, p, True)].key for p in range(2, 7)]
    if rules.general_over_schock2:
        assert all(schock2 < g < schock3 for g in generals)
    else:
        assert all(g < schock2 for g in generals)


@pytest.mark.parametrize(
    ("options", "dice", "message"),
    [
        pytest.param({}, (7, 1, 1), "[7, 1, 1] ist kein gültiger Wurf: ", id="pips 7"),
        pytest.param({}, (0, 1, 1), "[0, 1, 1] ist kein gültiger Wurf: ", id="pips 0"),
        pytest.param({}, (1, 1), "[1, 1] ist kein gültiger Wurf: ", id="two of three dice"),
        pytest.param(
            {"two_dice": True}, (1, 1, 1), "[1, 1, 1] ist kein gültiger Wurf: ", id="three of two"
        ),
    ],
)
def test_impossible_dice_are_malformed_whatever_the_house_rules(options, dice, message):
    """api/rules/RULES.md §2: a result is three dice (two under two_dice) with 1 to 6 pips."""
    rules = overrides(deckel=15, **options)
    count = 2 if options else 3
    with pytest.raises(MalformedInput) as err:
        evaluate(dice, False, rules)
    assert err.value.message == message + f"erwartet {count} Würfel mit 1 bis 6 Augen."
