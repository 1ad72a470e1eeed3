"""The presets of api/rules/RULES.md §8 and the house-rule options of schemas/GAMELOG.md."""

from __future__ import annotations

import pytest

from api.rules import OPTION_NAMES, PRESETS, InvalidRules, ruleset_from_config

# schemas/GAMELOG.md "House-rule options": key -> default (the first value listed)
GAMELOG_DEFAULTS = {
    "deckel": 13,
    "max_throws": 3,
    "sixes_turning": False,
    "ones_only_aside": False,
    "general_over_schock2": False,
    "strassen": "height",
    "hand_only": [],
    "hand_beats_assembled": [],
    "ties": "throws_then_repeat",
    "jule": "off",
    "specials": [],
    "two_fives_never_lose": False,
    "schock_aus": "half",
    "schock_aus_ends_round": False,
    "passing_on": False,
    "next_starter": "round_loser",
    "finale_opener": "last_loser",
    "blind": False,
    "penalty": None,
    "penalty_mode": "deckel",
    "two_dice": False,
}

# api/rules/RULES.md §8, column by column (house-rule switches no preset turns on stay default)
SECTION_8 = {
    "standard": {},
    "wikipedia": {
        "sixes_turning": True,
        "hand_beats_assembled": ["schock_aus"],
        "ties": "later_lower_unless_fewer",
        "penalty": 2,
    },
    "bvb": {"sixes_turning": True, "general_over_schock2": True, "ties": "earlier_wins"},
    "hennef": {
        "sixes_turning": True,
        "general_over_schock2": True,
        "hand_only": ["strasse"],
        "ties": "later_lower_unless_fewer",
    },
    "wolbeck": {
        "sixes_turning": True,
        "hand_only": ["general", "strasse"],
        "hand_beats_assembled": ["schock"],
        "ties": "earlier_wins",
        "jule": "sieben",
    },
    "party": {"sixes_turning": True},
    "nrw": {
        "sixes_turning": True,
        "hand_only": ["general", "strasse"],
        "schock_aus_ends_round": True,
        "two_fives_never_lose": True,
        "penalty": 1,
        "finale_opener": "first_half_loser",
    },
}


def test_the_options_are_exactly_those_of_the_gamelog():
    assert set(OPTION_NAMES) == set(GAMELOG_DEFAULTS)


def test_the_seven_presets_exist():
    assert set(PRESETS) == set(SECTION_8)


@pytest.mark.parametrize("preset", list(SECTION_8))
def test_each_preset_has_the_options_of_section_8(preset):
    expected = {**GAMELOG_DEFAULTS, **SECTION_8[preset]}
    assert PRESETS[preset].options() == expected
    assert PRESETS[preset].preset == preset


@pytest.mark.parametrize("preset", list(SECTION_8))
def test_a_preset_with_no_overrides_round_trips_through_its_config(preset):
    r = ruleset_from_config({"preset": preset})
    assert r == PRESETS[preset]
    assert r.to_config() == {"preset": preset, "overrides": {}}


def test_overrides_change_single_options_and_are_kept_in_the_config():
    r = ruleset_from_config({"preset": "wolbeck", "overrides": {"deckel": 15, "jule": "top"}})
    assert r.deckel == 15 and r.options()["jule"] == "top"
    assert r.options()["ties"] == "earlier_wins"  # the rest of the preset stays
    assert r.to_config() == {"preset": "wolbeck", "overrides": {"deckel": 15, "jule": "top"}}
    assert ruleset_from_config(r.to_config()) == r


def test_the_default_preset_is_standard():
    assert ruleset_from_config({}) == PRESETS["standard"]
    assert ruleset_from_config(None) == PRESETS["standard"]


@pytest.mark.parametrize("deckel", [2, 13, 17, 27, 99])
def test_any_deckel_count_from_2_to_99_is_allowed(deckel):
    assert ruleset_from_config({"overrides": {"deckel": deckel}}).deckel == deckel


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"bier": True}, "bier"),
        ({"deckel": 1}, "deckel"),
        ({"deckel": 100}, "deckel"),
        ({"deckel": "13"}, "deckel"),
        ({"deckel": True}, "deckel"),
        ({"max_throws": 0}, "max_throws"),
        ({"max_throws": 6}, "max_throws"),
        ({"sixes_turning": "yes"}, "sixes_turning"),
        ({"strassen": "diagonal"}, "diagonal"),
        ({"hand_only": ["zahl"]}, "zahl"),
        ({"hand_only": "general"}, "hand_only"),
        ({"hand_beats_assembled": ["general"]}, "general"),
        ({"ties": "coinflip"}, "coinflip"),
        ({"jule": "sometimes"}, "sometimes"),
        ({"specials": ["zwoelfer"]}, "zwoelfer"),
        ({"specials": [{"name": "X", "pips": [1, 2, 7], "rank": 450, "deckel": 4}]}, "pips"),
        ({"specials": [{"name": "X", "pips": [1, 2, 6], "rank": 450}]}, "deckel"),
        ({"schock_aus": "13"}, "schock_aus"),
        ({"next_starter": "oldest"}, "oldest"),
        ({"finale_opener": "youngest"}, "youngest"),
        ({"penalty": 0}, "penalty"),
        ({"penalty_mode": "beer"}, "beer"),
        ({"two_dice": 1}, "two_dice"),
    ],
)
def test_an_unknown_option_or_value_is_invalid_rules_naming_it(overrides, named):
    with pytest.raises(InvalidRules) as err:
        ruleset_from_config({"preset": "standard", "overrides": overrides})
    assert named in err.value.message


def test_an_unknown_preset_is_invalid_rules_naming_it():
    with pytest.raises(InvalidRules, match="kneipe"):
        ruleset_from_config({"preset": "kneipe"})


def test_unknown_top_level_fields_and_wrong_types_are_invalid_rules():
    with pytest.raises(InvalidRules, match="extra"):
        ruleset_from_config({"preset": "standard", "extra": 1})
    with pytest.raises(InvalidRules):
        ruleset_from_config(["standard"])
    with pytest.raises(InvalidRules):
        ruleset_from_config({"overrides": ["deckel"]})


def test_rulesets_are_frozen_and_hashable():
    r = PRESETS["nrw"]
    assert hash(r) == hash(ruleset_from_config({"preset": "nrw"}))
    with pytest.raises(AttributeError):
        r.deckel = 5  # type: ignore[misc]
