"""A turn (api/rules/RULES.md §3, schemas/GAMELOG.md "turn summary" and "turn in detail")."""

from __future__ import annotations

import pytest
from engine_play import rules

from api.rules import (
    PRESETS,
    Game,
    MalformedInput,
    RecordTurn,
    RuleViolation,
    parse_event,
)

STD = PRESETS["standard"]
PARTY = PRESETS["party"]  # sixes turning, otherwise the standard


def detail(*throws, player="Anna", **extra):
    return {"player": player, "detail": list(throws), **extra}


def sorted_dice(turn: RecordTurn) -> list[int]:
    return sorted(turn.dice)


# --------------------------------------------------------------------------- summaries


def test_a_summary_gives_dice_throws_and_hand_flag():
    t = parse_event({"player": "Anna", "dice": [4, 1, 1], "throws": 3, "hand": False}, STD)
    assert (t.player, sorted_dice(t), t.throws, t.hand, t.blind) == (
        "Anna",
        [1, 1, 4],
        3,
        False,
        False,
    )


def test_a_missing_hand_flag_means_from_the_hand_only_for_one_throw():
    assert parse_event({"player": "Anna", "dice": [5, 5, 5], "throws": 1}, STD).hand is True
    assert parse_event({"player": "Anna", "dice": [5, 5, 5], "throws": 2}, STD).hand is False


def test_a_result_from_the_hand_may_come_in_the_third_throw():
    t = parse_event({"player": "Anna", "dice": [1, 1, 1], "throws": 3, "hand": True}, STD)
    assert t.hand is True and t.throws == 3


def test_one_throw_reported_as_not_from_the_hand_is_malformed():
    with pytest.raises(MalformedInput):
        parse_event({"player": "Anna", "dice": [1, 1, 1], "throws": 1, "hand": False}, STD)


def test_more_throws_than_the_house_rules_allow_are_a_rule_violation():
    with pytest.raises(MalformedInput):
        parse_event({"player": "Anna", "dice": [1, 2, 3], "throws": 4, "hand": False}, STD)
    t = parse_event(
        {"player": "Anna", "dice": [1, 2, 3], "throws": 5, "hand": False}, rules(max_throws=5)
    )
    assert t.throws == 5


def test_blind_is_rejected_unless_the_house_rules_allow_it():
    with pytest.raises(MalformedInput):
        parse_event({"player": "Anna", "dice": [1, 2, 3], "throws": 1, "blind": True}, STD)


def test_blind_means_exactly_one_throw():
    r = rules(blind=True)
    assert parse_event({"player": "Anna", "dice": [1, 2, 3], "throws": 1, "blind": True}, r).blind
    with pytest.raises(MalformedInput):
        parse_event(
            {"player": "Anna", "dice": [1, 2, 3], "throws": 2, "hand": False, "blind": True}, r
        )
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 2, 3], "aside": [1]}, {"dice": [4, 4]}, blind=True), r)
    assert parse_event(detail({"dice": [1, 2, 3]}, blind=True), r).blind


# --------------------------------------------------------------------------- details


def test_s0_example_anna_sets_a_one_aside_and_ends_with_schock_4_not_from_the_hand():
    t = parse_event(
        detail({"dice": [1, 4, 6], "aside": [1]}, {"dice": [1, 5], "aside": [1]}, {"dice": [4]}),
        STD,
    )
    assert (sorted_dice(t), t.throws, t.hand) == ([1, 1, 4], 3, False)


def test_stopping_after_the_first_throw_is_a_result_from_the_hand():
    t = parse_event(detail({"dice": [5, 5, 5]}), STD)
    assert (sorted_dice(t), t.throws, t.hand) == ([5, 5, 5], 1, True)


def test_throwing_all_three_dice_again_in_the_last_throw_is_from_the_hand():
    t = parse_event(detail({"dice": [6, 4, 2]}, {"dice": [5, 3, 2]}, {"dice": [1, 1, 1]}), STD)
    assert (sorted_dice(t), t.throws, t.hand) == ([1, 1, 1], 3, True)


def test_gamelog_example_bert_sets_aside_two_dice_and_throws_one():
    t = parse_event(
        {"player": "Bert", "detail": [{"dice": [3, 4, 2], "aside": [3, 4]}, {"dice": [5]}]}, STD
    )
    assert (sorted_dice(t), t.throws, t.hand) == ([3, 4, 5], 2, False)


def test_each_throw_must_throw_exactly_the_dice_still_in_the_cup():
    # set-aside dice are never thrown again
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 4, 6], "aside": [1]}, {"dice": [1, 2, 3]}), STD)
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 4, 6], "aside": [1]}, {"dice": [2]}), STD)
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 4]}), STD)


def test_only_dice_shown_in_the_throw_can_be_set_aside():
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 4, 6], "aside": [2]}, {"dice": [3, 3]}), STD)
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 4, 6], "aside": [1, 1]}, {"dice": [3]}), STD)


def test_no_further_throw_once_every_die_is_set_aside():
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 1, 4], "aside": [1, 1, 4]}, {"dice": []}), STD)


def test_ones_only_aside_forbids_setting_aside_anything_but_ones():
    r = rules(ones_only_aside=True)
    t = parse_event(detail({"dice": [1, 4, 6], "aside": [1]}, {"dice": [1, 1]}), r)
    assert sorted_dice(t) == [1, 1, 1]
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 4, 6], "aside": [1, 6]}, {"dice": [1]}), r)
    # without the option any die may be set aside
    assert sorted_dice(
        parse_event(detail({"dice": [1, 4, 6], "aside": [1, 6]}, {"dice": [1]}), STD)
    ) == [1, 1, 6]


# --------------------------------------------------------------------------- sixes turning


def test_sixes_turning_is_rejected_where_the_rules_do_not_allow_it():
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 6, 6], "aside": [1], "sixes": 1}, {"dice": [3]}), STD)


def test_s3_example_two_sixes_become_a_one_and_a_schock_is_certain():
    # 1-6-6: keep the 1, turn the sixes into a one, one six goes back: one die in the cup
    t = parse_event(detail({"dice": [1, 6, 6], "aside": [1], "sixes": 1}, {"dice": [3]}), PARTY)
    assert (sorted_dice(t), t.throws, t.hand) == ([1, 1, 3], 2, False)


def test_the_other_six_goes_back_into_the_cup_and_cannot_be_set_aside():
    # 6-6-3 turned, nothing else aside: the six and the three are thrown again (two dice)
    t = parse_event(detail({"dice": [6, 6, 3], "sixes": 1}, {"dice": [5, 2]}), PARTY)
    assert (sorted_dice(t), t.throws, t.hand) == ([1, 2, 5], 2, False)
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [6, 6, 3], "sixes": 1}, {"dice": [5]}), PARTY)
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [6, 6, 3], "aside": [6], "sixes": 1}, {"dice": [5]}), PARTY)


def test_three_sixes_become_two_ones_and_the_third_six_goes_back():
    t = parse_event(detail({"dice": [6, 6, 6], "sixes": 2}, {"dice": [1]}), PARTY)
    assert (sorted_dice(t), t.throws, t.hand) == ([1, 1, 1], 2, False)
    t = parse_event(detail({"dice": [6, 6, 6], "sixes": 2}, {"dice": [6]}), PRESETS["nrw"])
    assert sorted_dice(t) == [1, 1, 6]


def test_sixes_can_be_turned_only_with_enough_sixes():
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 6, 5], "sixes": 1}, {"dice": [3, 3]}), PARTY)
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 6, 6], "sixes": 2}, {"dice": [3]}), PARTY)


def test_turning_obliges_a_further_throw():
    with pytest.raises(MalformedInput):
        parse_event(detail({"dice": [1, 6, 6], "aside": [1], "sixes": 1}), PARTY)


def test_sixes_are_never_turned_after_the_last_allowed_throw():
    # the third throw is the starter's last: turning there would need a fourth
    with pytest.raises(MalformedInput):
        parse_event(
            detail(
                {"dice": [2, 3, 4]},
                {"dice": [2, 3, 5]},
                {"dice": [6, 6, 2], "sixes": 1},
                {"dice": [4, 4]},
            ),
            PARTY,
        )


def test_sixes_are_never_turned_on_the_last_throw_the_round_allows():
    game = Game.start(PARTY, ["Anna", "Bert"], "Anna")
    game.apply(
        parse_event({"player": "Anna", "dice": [6, 5, 3], "throws": 2, "hand": False}, PARTY)
    )
    assert game.state().limit == 2
    before = game.outcome()
    cmd = parse_event(
        detail(
            {"dice": [2, 3, 4]}, {"dice": [6, 6, 2], "sixes": 1}, {"dice": [4, 4]}, player="Bert"
        ),
        PARTY,
    )
    with pytest.raises(RuleViolation):
        game.apply(cmd)
    assert game.outcome() == before
    # turning in the first throw leaves a second one: allowed
    game.apply(
        parse_event(
            detail({"dice": [6, 6, 2], "aside": [2], "sixes": 1}, {"dice": [1]}, player="Bert"),
            PARTY,
        )
    )
    assert game.rounds[-1].worst == "Anna"  # Bert's 1-1-2 beats Anna's 653


def test_turned_ones_count_as_set_aside_for_the_hand_flag():
    t = parse_event(detail({"dice": [6, 6, 3], "sixes": 1}, {"dice": [1, 1]}), PARTY)
    assert sorted_dice(t) == [1, 1, 1] and t.hand is False


def test_a_detailed_turn_keeps_its_throws_and_a_summary_has_none():
    t = parse_event(detail({"dice": [1, 6, 6], "aside": [1], "sixes": 1}, {"dice": [3]}), PARTY)
    assert [th.to_json() for th in t.detail] == [
        {"dice": [1, 6, 6], "aside": [1], "sixes": 1},
        {"dice": [3]},
    ]
    assert parse_event({"player": "Anna", "dice": [3, 1, 1], "throws": 1}, STD).detail is None


@pytest.mark.parametrize(
    "bad",
    [
        detail({"dice": [1, 2, 3], "sixes": 3}),
        detail({"dice": [1, 2, 7]}),
        detail({"dice": [1, 2, 3], "what": 1}),
        detail({"aside": [1]}),
        detail("1-2-3"),
        {"player": "Anna", "detail": []},
        {"player": "Anna", "detail": "nope"},
        {"detail": [{"dice": [1, 2, 3]}]},
    ],
)
def test_malformed_details_are_rejected(bad):
    with pytest.raises(MalformedInput):
        parse_event(bad, PARTY)


def test_more_detailed_throws_than_the_house_rules_allow_are_rejected():
    with pytest.raises(MalformedInput):
        parse_event(
            detail(
                {"dice": [2, 3, 4]}, {"dice": [2, 3, 5]}, {"dice": [2, 3, 6]}, {"dice": [2, 3, 6]}
            ),
            STD,
        )


def test_two_dice_turns_throw_two_dice():
    r = rules(two_dice=True)
    t = parse_event({"player": "Anna", "dice": [6, 4], "throws": 1}, r)
    assert sorted(t.dice) == [4, 6]
    with pytest.raises(MalformedInput):
        parse_event({"player": "Anna", "dice": [6, 4, 5], "throws": 1}, r)
    t = parse_event(detail({"dice": [1, 4], "aside": [1]}, {"dice": [1]}), r)
    assert sorted(t.dice) == [1, 1] and t.hand is False
