"""Rounds and Deckel: api/rules/RULES.md sections 4, 5 and 7, the worked examples of section 9 and the
readings of section 10 (8–18)."""

from __future__ import annotations

import pytest
from engine_play import (
    ANNA,
    BERT,
    CLARA,
    DIETER,
    FOUR,
    THREE,
    apply,
    last,
    pen,
    phase2_three,
    play,
    rules,
    start_of_half_2,
    t,
)

from api.rules import Game, MalformedInput, RuleViolation, parse_event

# --------------------------------------------------------------------------- section 9


def test_example_1_dieter_is_worst_and_receives_4_from_the_mitte_and_opens_the_next_round():
    r = rules()
    anna = {
        "player": ANNA,
        "detail": [
            {"dice": [1, 4, 6], "aside": [1]},
            {"dice": [1, 5], "aside": [1]},
            {"dice": [4]},
        ],
    }
    game = play(
        r,
        FOUR,
        ANNA,
        [anna, t(BERT, "3-4-5", 3), t(CLARA, "5-5-5", 1), t(DIETER, "2-3-6", 3)],
    )
    assert last(game) == {
        "half": 1, "starter": ANNA, "limit": 3, "best": ANNA, "worst": DIETER,
        "deckel": 4, "from": "mitte", "repeated": False,
    }  # fmt: skip
    assert game.state().to_json() == {
        "phase": "half1",
        "mitte": 9,
        "stacks": {ANNA: 0, BERT: 0, CLARA: 0, DIETER: 4},
        "active": FOUR,
        "next_player": DIETER,
        "limit": None,
    }


def test_example_2_loser_receives_only_what_is_left_in_the_mitte_then_the_best_pays():
    r = rules()
    game = play(
        r,
        THREE,
        ANNA,
        [
            t(ANNA, "1-1-6"), t(BERT, "2-3-6"), t(CLARA, "2-4-5"),  # Clara +6, Mitte 7
            t(CLARA, "1-1-3"), t(ANNA, "2-4-6"), t(BERT, "2-3-5"),  # Bert +3, Mitte 4
        ],
    )  # fmt: skip
    assert game.mitte == 4
    apply(game, t(BERT, "1-1-6"), t(CLARA, "2-5-6"), t(ANNA, "3-4-6"))
    assert last(game)["worst"] == ANNA and last(game)["deckel"] == 4
    assert last(game)["from"] == "mitte"
    assert game.mitte == 0 and game.stacks == {ANNA: 4, BERT: 3, CLARA: 6}
    # from the next round on the best player pays
    apply(game, t(ANNA, "1-1-2"), t(BERT, "3-5-6"), t(CLARA, "1-4-6"))
    assert last(game)["best"] == ANNA and last(game)["worst"] == CLARA
    assert last(game)["from"] == ANNA and last(game)["deckel"] == 2
    assert game.stacks == {ANNA: 2, BERT: 3, CLARA: 8} and game.mitte == 0


def test_example_3_best_schock_2_beats_a_general_and_the_loser_receives_2():
    game = play(rules(), THREE, ANNA, [t(ANNA, "1-1-2"), t(BERT, "6-6-6"), t(CLARA, "2-3-5")])
    assert last(game)["best"] == ANNA and last(game)["worst"] == CLARA
    assert last(game)["deckel"] == 2 and game.stacks[CLARA] == 2 and game.mitte == 11


def test_example_3_under_bvb_the_general_is_best_and_the_loser_receives_3():
    game = play(rules("bvb"), THREE, ANNA, [t(ANNA, "1-1-2"), t(BERT, "6-6-6"), t(CLARA, "2-3-5")])
    assert last(game)["best"] == BERT and last(game)["deckel"] == 3


def test_example_4_starter_stops_after_one_throw_so_everybody_has_exactly_one():
    r = rules()
    game = play(r, FOUR, ANNA, [t(ANNA, "2-4-6", 1)])
    assert game.state().limit == 1
    before = game.outcome()
    with pytest.raises(RuleViolation):
        game.apply(parse_event(t(BERT, "1-1-1", 2, hand=True), r))
    with pytest.raises(RuleViolation):
        game.apply(
            parse_event(
                {"player": BERT, "detail": [{"dice": [1, 4, 6], "aside": [1]}, {"dice": [1, 1]}]},
                r,
            )
        )
    assert game.outcome() == before
    apply(game, t(BERT, "3-5-6"), t(CLARA, "1-3-6"), t(DIETER, "4-5-6"))
    assert last(game)["limit"] == 1 and last(game)["worst"] == CLARA


def test_the_starters_throw_count_caps_everybody_else_but_they_may_stop_earlier():
    r = rules()
    game = play(r, THREE, ANNA, [t(ANNA, "2-4-6", 2)])
    assert game.state().limit == 2
    with pytest.raises(RuleViolation):
        game.apply(parse_event(t(BERT, "1-1-1", 3, hand=True), r))
    apply(game, t(BERT, "3-5-6", 1), t(CLARA, "1-3-6", 2))
    assert last(game)["limit"] == 2


# --------------------------------------------------------------------------- order of play


def test_players_follow_clockwise_from_the_starter():
    r = rules()
    game = Game.start(r, FOUR, CLARA)
    seen = []
    for result in ["2-3-6", "3-5-6", "1-1-4", "2-4-6"]:
        seen.append(game.next_player)
        apply(game, t(game.next_player, result))
    assert seen == [CLARA, DIETER, ANNA, BERT]
    assert game.next_player == CLARA  # Clara's 2-3-6 was worst: she opens


def test_only_active_players_take_turns_once_some_are_out():
    game = phase2_three()
    assert game.active == [BERT, CLARA, DIETER]
    assert game.next_player == BERT
    with pytest.raises(RuleViolation):
        apply(game, t(ANNA, "1-1-1"))
    seen = []
    for result in ["2-3-6", "3-5-6", "1-1-3"]:
        seen.append(game.next_player)
        apply(game, t(game.next_player, result))
    assert seen == [BERT, CLARA, DIETER]


# --------------------------------------------------------------------------- ties (4.4, 10.8, 10.9)


def test_standard_ties_the_one_who_needed_more_throws_is_lower():
    game = play(
        rules(), THREE, ANNA, [t(ANNA, "1-1-3", 2), t(BERT, "2-5-6", 2), t(CLARA, "2-5-6", 1)]
    )
    assert last(game)["worst"] == BERT
    game = play(
        rules(), THREE, ANNA, [t(ANNA, "1-1-3", 2), t(BERT, "2-5-6", 1), t(CLARA, "2-5-6", 2)]
    )
    assert last(game)["worst"] == CLARA


def test_standard_ties_an_unresolved_tie_at_the_bottom_repeats_the_round():
    r = rules()
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3", 2), t(BERT, "2-5-6", 2), t(CLARA, "2-5-6", 2)])
    assert last(game) == {
        "half": 1, "starter": ANNA, "limit": 2, "best": None, "worst": None,
        "deckel": 0, "from": None, "repeated": True,
    }  # fmt: skip
    assert game.state().mitte == 13 and game.next_player == ANNA
    assert game.state().limit is None
    # the repeated round: same starter, a new limit
    apply(game, t(ANNA, "1-1-3", 3), t(BERT, "2-5-6", 3), t(CLARA, "3-5-6", 1))
    assert last(game)["limit"] == 3 and last(game)["worst"] == BERT
    assert len(game.rounds) == 2


def test_standard_ties_a_tie_at_the_top_needs_no_repeat_while_the_mitte_pays():
    game = play(rules(), THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "1-1-3"), t(CLARA, "2-3-5")])
    assert not last(game)["repeated"]
    assert last(game)["worst"] == CLARA and last(game)["deckel"] == 3
    assert last(game)["best"] in (ANNA, BERT)


def test_standard_ties_a_tie_at_the_top_repeats_when_the_best_has_to_pay():
    game = phase2_three()
    apply(game, t(BERT, "1-1-3"), t(CLARA, "1-1-3"), t(DIETER, "2-3-5"))
    assert last(game)["repeated"] is True
    assert game.stacks == {ANNA: 0, BERT: 1, CLARA: 1, DIETER: 1}
    assert game.next_player == BERT


def test_standard_ties_a_schock_aus_tie_at_the_top_needs_no_best():
    game = phase2_three()
    apply(game, t(BERT, "1-1-1"), t(CLARA, "1-1-1"), t(DIETER, "2-3-5"))
    assert last(game)["from"] == "all" and last(game)["worst"] == DIETER
    assert game.half_losers == [DIETER]


def test_standard_ties_all_equal_repeats_the_round():
    game = play(rules(), [ANNA, BERT], ANNA, [t(ANNA, "2-3-5"), t(BERT, "2-3-5")])
    assert last(game)["repeated"] is True and game.mitte == 13


@pytest.mark.parametrize(
    ("ties", "claras_throws", "lower"),
    [
        pytest.param("later_lower_unless_fewer", 2, CLARA, id="the later is lower"),
        pytest.param("later_lower_unless_fewer", 1, BERT, id="unless it needed fewer throws"),
        pytest.param("earlier_wins", 1, CLARA, id="the earlier wins whatever the throws"),
    ],
)
def test_of_equal_results_the_ties_rule_picks_the_lower(ties, claras_throws, lower):
    """Bert's and Clara's equal results: at the bottom the lower one loses the round; at the top
    the higher one is the best and pays."""
    higher = BERT if lower == CLARA else CLARA
    r = rules(ties=ties)
    game = play(
        r, THREE, ANNA, [t(ANNA, "1-1-3", 2), t(BERT, "2-5-6", 2), t(CLARA, "2-5-6", claras_throws)]
    )
    assert last(game)["worst"] == lower and not last(game)["repeated"]
    game = phase2_three(ties=ties)
    apply(game, t(BERT, "1-1-3", 2), t(CLARA, "1-1-3", claras_throws), t(DIETER, "2-3-5"))
    assert (last(game)["from"], last(game)["worst"], last(game)["deckel"]) == (higher, DIETER, 1)


@pytest.mark.parametrize(
    ("preset", "worst_if_later_needed_fewer", "worst_if_same_throws"),
    [("standard", BERT, None), ("party", BERT, None), ("nrw", BERT, None),
     ("wikipedia", BERT, CLARA), ("hennef", BERT, CLARA),
     ("bvb", CLARA, CLARA), ("wolbeck", CLARA, CLARA)],
)  # fmt: skip
def test_each_presets_tie_rule_decides_who_is_lower(
    preset, worst_if_later_needed_fewer, worst_if_same_throws
):
    # Bert and Clara tie on 6-4-2 at the bottom (None: the round is repeated)
    r = rules(preset)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3", 3), t(BERT, "2-4-6", 3), t(CLARA, "2-4-6", 2)])
    assert last(game)["worst"] == worst_if_later_needed_fewer
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3", 3), t(BERT, "2-4-6", 2), t(CLARA, "2-4-6", 2)])
    assert last(game)["worst"] == worst_if_same_throws
    assert last(game)["repeated"] is (worst_if_same_throws is None)


# --------------------------------------------------------------------------- Deckel (5.1–5.3)


def test_phase_2_the_best_pays_from_their_stack_capped_by_what_they_hold():
    game = phase2_three()
    apply(game, t(BERT, "1-1-6"), t(CLARA, "2-5-6"), t(DIETER, "2-3-5"))
    assert last(game)["from"] == BERT and last(game)["deckel"] == 1  # Schock 6, Bert holds 1
    assert game.stacks == {ANNA: 0, BERT: 0, CLARA: 1, DIETER: 2}
    assert game.active == [CLARA, DIETER]  # Bert is out now
    assert game.next_player == DIETER


def test_an_eliminated_player_cannot_throw_or_be_penalised_again_in_that_half():
    game = phase2_three(penalty=1)
    before = game.outcome()
    with pytest.raises(RuleViolation):
        apply(game, t(ANNA, "1-1-1"))
    with pytest.raises(RuleViolation):
        apply(game, pen(ANNA))
    assert game.outcome() == before


def test_nobody_is_out_while_the_mitte_still_holds_deckel():
    game = play(
        rules(),
        FOUR,
        ANNA,
        [t(ANNA, "5-6-6"), t(BERT, "4-6-6"), t(CLARA, "3-6-6"), t(DIETER, "2-3-5")],
    )
    assert game.active == FOUR and game.stacks[ANNA] == 0


def test_elimination_happens_as_soon_as_the_mitte_is_empty():
    game = phase2_three()
    assert game.active == [BERT, CLARA, DIETER]
    assert any(e for e in game.rounds) and game.mitte == 0


def test_the_half_ends_when_one_player_holds_every_deckel_and_all_deckel_return():
    game = phase2_three()
    apply(game, t(BERT, "1-1-6"), t(CLARA, "2-5-6"), t(DIETER, "2-3-5"))  # Bert out
    assert game.stacks == {ANNA: 0, BERT: 0, CLARA: 1, DIETER: 2} and game.phase == "half1"
    events = apply(game, t(DIETER, "2-3-5"), t(CLARA, "1-1-2"))  # Clara pays 1 -> Dieter 3
    assert [e.kind.value for e in events][-1] == "half_lost"
    assert game.half_losers == [DIETER]
    assert game.state().to_json() == start_of_half_2(game, DIETER)


# --------------------------------------------------------------------------- Schock aus (5.4)


def test_schock_aus_in_phase_1_gives_the_worst_every_deckel_and_the_half():
    r = rules(deckel=5)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-2"), t(BERT, "2-3-5"), t(CLARA, "2-4-6")])
    assert game.stacks[BERT] == 2
    apply(game, t(BERT, "2-5-6"), t(CLARA, "1-1-1"), t(ANNA, "2-3-6"))
    assert last(game)["from"] == "all" and last(game)["worst"] == ANNA
    assert last(game)["deckel"] == 5  # Anna held none: she received all 5 (3 Mitte + 2 Bert)
    assert game.half_losers == [ANNA] and game.phase == "half2"


def test_schock_aus_in_phase_2_takes_the_deckel_of_every_player():
    game = phase2_three()
    apply(game, t(BERT, "1-1-1", 3, hand=False), t(CLARA, "2-5-6"), t(DIETER, "2-3-5"))
    assert last(game)["from"] == "all" and last(game)["worst"] == DIETER
    assert last(game)["deckel"] == 2  # everything Dieter did not hold yet
    assert game.half_losers == [DIETER]
    assert game.mitte == 3 and set(game.stacks.values()) == {0}


def test_schock_aus_total_is_just_a_result_worth_the_total_in_phase_2():
    game = phase2_three(schock_aus="total")
    apply(game, t(BERT, "1-1-1"), t(CLARA, "2-5-6"), t(DIETER, "2-3-5"))
    assert last(game)["from"] == BERT and last(game)["deckel"] == 1
    assert game.half_losers == [] and game.stacks == {ANNA: 0, BERT: 0, CLARA: 1, DIETER: 2}


def test_schock_aus_total_in_phase_1_receives_only_what_is_left_in_the_mitte():
    r = rules(deckel=5, schock_aus="total")
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-2"), t(BERT, "2-3-5"), t(CLARA, "2-4-6")])
    apply(game, t(BERT, "2-5-6"), t(CLARA, "1-1-1"), t(ANNA, "2-3-6"))
    assert last(game)["from"] == "mitte" and last(game)["deckel"] == 3
    assert game.stacks == {ANNA: 3, BERT: 2, CLARA: 0} and game.half_losers == []


def test_schock_aus_ends_round_the_remaining_players_do_not_throw():
    r = rules(schock_aus_ends_round=True, deckel=5)
    game = play(r, FOUR, ANNA, [t(ANNA, "2-5-6"), t(BERT, "2-3-5"), t(CLARA, "1-1-1")])
    assert last(game)["worst"] == BERT and last(game)["from"] == "all"
    assert game.half_losers == [BERT]
    assert DIETER not in [turn.player for turn in game.turns]


def test_schock_aus_ends_round_does_not_apply_to_the_starters_schock_aus():
    r = rules(schock_aus_ends_round=True, deckel=5)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-1")])
    assert game.next_player == BERT and game.rounds == []
    apply(game, t(BERT, "2-3-5"), t(CLARA, "2-4-6"))
    assert last(game)["worst"] == BERT and game.half_losers == [BERT]


def test_nrw_schock_aus_ends_the_round_once_another_result_was_shown():
    game = play(rules("nrw", deckel=5), THREE, ANNA, [t(ANNA, "2-4-6"), t(BERT, "1-1-1")])
    assert last(game)["worst"] == ANNA and game.half_losers == [ANNA]


def test_by_default_every_player_finishes_the_round_after_a_schock_aus():
    game = play(rules(deckel=5), THREE, ANNA, [t(ANNA, "2-4-6"), t(BERT, "1-1-1")])
    assert game.rounds == [] and game.next_player == CLARA
    apply(game, t(CLARA, "2-3-5"))
    assert last(game)["worst"] == CLARA


# --------------------------------------------------------------------------- two fives (10.6)


def test_two_fives_never_lose_the_loser_is_the_lowest_without_two_fives():
    r = rules(two_fives_never_lose=True)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-5-5"), t(CLARA, "2-4-6")])
    assert last(game)["worst"] == CLARA  # 552 is lower than 642 but has two fives
    game = play(rules(), THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-5-5"), t(CLARA, "2-4-6")])
    assert last(game)["worst"] == BERT  # without the option


def test_two_fives_includes_a_general_of_fives():
    r = rules(two_fives_never_lose=True)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "5-5-5"), t(CLARA, "6-6-6")])
    assert last(game)["worst"] == CLARA


def test_two_fives_lose_when_every_other_result_has_two_fives():
    r = rules("nrw")
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-5-5"), t(CLARA, "1-5-5")])
    assert last(game)["worst"] == CLARA


def test_two_fives_the_best_result_never_loses():
    r = rules(two_fives_never_lose=True)
    game = play(r, THREE, ANNA, [t(ANNA, "1-5-5"), t(BERT, "2-5-5"), t(CLARA, "3-5-5")])
    assert last(game)["best"] == CLARA and last(game)["worst"] == ANNA


# --------------------------------------------------------------------------- passing on (5.5)


def test_passing_on_the_best_pays_from_their_stack_while_the_mitte_is_not_empty():
    r = rules(passing_on=True)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5")])
    assert last(game)["from"] == "mitte"  # Anna held nothing
    apply(game, t(CLARA, "1-1-4"), t(ANNA, "2-4-6"), t(BERT, "1-3-5"))
    assert last(game)["from"] == CLARA and last(game)["deckel"] == 3  # capped by her stack
    assert game.stacks == {ANNA: 0, BERT: 3, CLARA: 0} and game.mitte == 10


def test_passing_on_a_tie_at_the_top_repeats_when_a_tied_player_holds_deckel():
    r = rules(passing_on=True)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5")])
    apply(game, t(CLARA, "1-1-4"), t(ANNA, "1-1-4"), t(BERT, "1-3-5"))
    assert last(game)["repeated"] is True and game.stacks[CLARA] == 3


def test_passing_on_a_tie_at_the_top_without_deckel_is_paid_by_the_mitte():
    r = rules(passing_on=True)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "1-1-3"), t(CLARA, "2-3-5")])
    assert last(game)["repeated"] is False and last(game)["from"] == "mitte"


def test_without_passing_on_the_mitte_pays_even_if_the_best_holds_deckel():
    game = play(rules(), THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5")])
    apply(game, t(CLARA, "1-1-4"), t(ANNA, "2-4-6"), t(BERT, "1-3-5"))
    assert last(game)["from"] == "mitte" and last(game)["deckel"] == 4


# --------------------------------------------------------------------------- blind (3.4, 10.12)


def test_blind_doubles_the_best_results_deckel():
    r = rules(blind=True)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3", blind=True), t(BERT, "2-4-6"), t(CLARA, "2-3-5")])
    assert last(game)["deckel"] == 6


def test_blind_by_a_player_who_is_not_best_still_doubles():
    r = rules(blind=True)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-4-6", blind=True), t(CLARA, "2-3-5")])
    assert last(game)["deckel"] == 6


def test_several_blind_turns_double_only_once():
    r = rules(blind=True)
    game = play(
        r,
        THREE,
        ANNA,
        [t(ANNA, "1-1-3", blind=True), t(BERT, "2-4-6", blind=True), t(CLARA, "2-3-5", blind=True)],
    )
    assert last(game)["deckel"] == 6


def test_blind_doubling_comes_before_the_cap():
    r = rules(blind=True, deckel=8)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5")])
    assert game.mitte == 5
    apply(game, t(CLARA, "1-1-4", blind=True), t(ANNA, "2-4-6"), t(BERT, "2-3-5"))
    # Schock 4 doubled is 8, capped by the 5 left in the Mitte (undoubled it would be 4)
    assert last(game)["deckel"] == 5 and game.mitte == 0


def test_a_blind_starter_sets_the_limit_to_one_throw():
    r = rules(blind=True)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3", blind=True)])
    with pytest.raises(RuleViolation):
        apply(game, t(BERT, "2-4-6", 2))


# --------------------------------------------------------------------------- next starter (4.1)


def test_the_round_loser_opens_the_next_round_by_default():
    game = play(
        rules(penalty=1), THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5")]
    )
    apply(game, pen(ANNA))
    assert game.next_player == CLARA


def test_last_receiver_a_penalty_receiver_opens_the_next_round():
    r = rules(next_starter="last_receiver", penalty=1)
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5")])
    assert game.next_player == CLARA
    apply(game, pen(ANNA))
    assert game.next_player == ANNA


def test_last_receiver_a_round_whose_loser_receives_nothing_does_not_change_it():
    game = phase2_three(next_starter="last_receiver", penalty=1)
    apply(game, t(BERT, "1-1-3"), t(CLARA, "2-3-5"))
    # Dieter's penalty is paid by the richest other player clockwise from him: Bert (Anna is out)
    apply(game, pen(DIETER))
    assert game.stacks == {ANNA: 0, BERT: 0, CLARA: 1, DIETER: 2}
    apply(game, t(DIETER, "2-5-6"))
    # Clara is worst; Bert is best but holds nothing: she receives nothing
    assert last(game)["worst"] == CLARA and last(game)["deckel"] == 0
    assert game.active == [CLARA, DIETER]
    assert game.next_player == DIETER  # the last receiver, not the round loser


def test_round_loser_rule_with_a_round_where_the_loser_receives_nothing():
    game = phase2_three(penalty=1)
    apply(game, t(BERT, "1-1-3"), t(CLARA, "2-3-5"), pen(DIETER), t(DIETER, "2-5-6"))
    assert game.next_player == CLARA


def test_a_starter_who_is_out_is_replaced_by_the_next_active_player_clockwise():
    game = phase2_three()
    apply(game, t(BERT, "2-5-6"), t(CLARA, "1-1-6"), t(DIETER, "1-2-6"))
    # Dieter is worst; Clara pays 1 and is out; Dieter opens
    assert game.next_player == DIETER
    game = phase2_three(next_starter="last_receiver")
    apply(game, t(BERT, "1-1-2"), t(CLARA, "2-3-6"), t(DIETER, "2-5-6"))
    # Clara receives Bert's only Deckel; Bert is out; Clara opens
    assert game.active == [CLARA, DIETER] and game.next_player == CLARA


# --------------------------------------------------------------------------- penalties (7, 10.17)


def test_a_penalty_takes_deckel_from_the_mitte():
    game = play(rules(), THREE, ANNA, [pen(BERT, 2)])
    assert game.mitte == 11 and game.stacks[BERT] == 2
    assert game.penalties[-1].source == "mitte" and game.penalties[-1].deckel == 2
    assert game.penalties[-1].reason == "Würfel vom Tisch"


def test_a_penalty_uses_the_rulesets_amount_when_none_is_given():
    game = play(rules("wikipedia"), THREE, ANNA, [pen(BERT)])
    assert game.stacks[BERT] == 2
    game = play(rules("nrw"), THREE, ANNA, [pen(BERT)])
    assert game.stacks[BERT] == 1
    with pytest.raises(MalformedInput):
        play(rules(), THREE, ANNA, [pen(BERT)])


def test_a_penalty_takes_only_what_is_left_in_the_mitte():
    r = rules(deckel=4)
    game = play(
        r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5"), pen(BERT, 2)]
    )
    assert game.mitte == 0 and game.stacks == {ANNA: 0, BERT: 1, CLARA: 3}
    assert game.penalties[-1].deckel == 1
    # between rounds elimination is checked at once (10.16): Anna is out
    assert game.active == [BERT, CLARA] and game.next_player == CLARA


def test_with_the_mitte_empty_a_penalty_comes_from_the_richest_other_player():
    game = phase2_three()
    apply(game, t(BERT, "1-1-6"), t(CLARA, "2-5-6"), t(DIETER, "2-3-5"))  # Clara 1, Dieter 2
    apply(game, pen(CLARA, 1))
    assert game.penalties[-1].source == DIETER
    assert game.stacks == {ANNA: 0, BERT: 0, CLARA: 2, DIETER: 1}


def test_a_penalty_tie_between_richest_players_is_broken_clockwise_from_the_offender():
    game = phase2_three()
    apply(game, pen(CLARA, 1))  # Bert and Dieter hold 1 each; clockwise from Clara: Dieter
    assert game.penalties[-1].source == DIETER
    assert game.stacks == {ANNA: 0, BERT: 1, CLARA: 2, DIETER: 0}
    assert game.active == [BERT, CLARA]  # Dieter is out between rounds
    game = phase2_three()
    apply(game, pen(DIETER, 1))  # clockwise from Dieter: Anna (out), Bert
    assert game.penalties[-1].source == BERT


def test_a_penalty_from_a_player_is_capped_by_their_stack():
    game = phase2_three()
    apply(game, pen(CLARA, 3))
    assert game.penalties[-1].deckel == 1 and game.stacks[CLARA] == 2


def test_a_penalty_that_gives_the_offender_every_deckel_ends_the_half_at_once():
    game = phase2_three()
    apply(game, t(BERT, "2-3-5"), pen(CLARA, 1), pen(CLARA, 1))  # from Dieter, then Bert
    assert game.half_losers == [CLARA]
    assert game.state().to_json() == {
        "phase": "half2",
        "mitte": 3,
        "stacks": dict.fromkeys(FOUR, 0),
        "active": FOUR,
        "next_player": CLARA,
        "limit": None,
    }
    assert game.current_round() == []  # the round in progress was dropped


def test_a_penalty_during_a_round_waits_for_the_round_end_to_eliminate():
    game = phase2_three()
    apply(game, t(BERT, "2-3-5"), pen(CLARA, 1))  # Dieter pays his only Deckel
    assert game.stacks[DIETER] == 0 and DIETER in game.state().active
    apply(game, t(CLARA, "5-6-6"), t(DIETER, "2-4-6"))  # Dieter may still throw; Bert is worst
    assert last(game)["worst"] == BERT and last(game)["from"] == CLARA
    assert game.active == [BERT, CLARA]  # Dieter is out at the round's end


def test_penalty_mode_round_loser_makes_the_offender_lose_whatever_they_throw():
    r = rules(penalty_mode="round_loser")
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), pen(BERT), t(BERT, "5-6-6"), t(CLARA, "2-3-5")])
    assert last(game)["worst"] == BERT and last(game)["deckel"] == 3 and game.stacks[BERT] == 3
    with pytest.raises(MalformedInput):  # no Deckel in this mode: never right, 422
        play(r, THREE, ANNA, [pen(BERT, 2)])
    with pytest.raises(RuleViolation):  # the round is lost already: the state, 409
        play(r, THREE, ANNA, [pen(BERT), pen(CLARA)])


def test_penalty_mode_round_loser_between_rounds_applies_to_the_next_round():
    r = rules(penalty_mode="round_loser")
    game = play(r, THREE, ANNA, [t(ANNA, "1-1-3"), t(BERT, "2-4-6"), t(CLARA, "2-3-5"), pen(ANNA)])
    apply(game, t(CLARA, "1-1-4"), t(ANNA, "6-6-6"), t(BERT, "1-2-4"))
    assert last(game)["worst"] == ANNA and last(game)["deckel"] == 4


# --------------------------------------------------------------------------- more readings


def test_hand_beats_assembled_breaks_a_tie_before_the_tie_rule():
    # wolbeck: earlier wins, but Clara's Schock 3 from the hand beats Bert's assembled one
    game = phase2_three("wolbeck")
    apply(game, t(BERT, "1-1-3", 2), t(CLARA, "1-1-3", 2, hand=True), t(DIETER, "2-3-5"))
    assert last(game)["best"] == CLARA and last(game)["from"] == CLARA
    game = phase2_three("bvb")  # earlier wins without the hand bonus: Bert pays
    apply(game, t(BERT, "1-1-3", 2), t(CLARA, "1-1-3", 2, hand=True), t(DIETER, "2-3-5"))
    assert last(game)["from"] == BERT


def test_hand_only_presets_score_an_assembled_general_as_a_zahl_in_a_round():
    # nrw: Bert's assembled 5-5-5 is "555", below Clara's 6-4-3: Bert loses (1 Deckel: a Zahl best)
    game = play(
        rules("nrw"), THREE, ANNA, [t(ANNA, "2-4-4", 3), t(BERT, "5-5-5", 3), t(CLARA, "3-4-6", 2)]
    )
    assert last(game)["best"] == CLARA and last(game)["worst"] == ANNA
    game = play(
        rules("nrw"), THREE, ANNA, [t(ANNA, "3-6-6", 3), t(BERT, "4-4-4", 3), t(CLARA, "3-4-6", 2)]
    )
    assert last(game)["worst"] == BERT and last(game)["deckel"] == 1
    game = play(
        rules(), THREE, ANNA, [t(ANNA, "3-6-6", 3), t(BERT, "4-4-4", 3), t(CLARA, "3-4-6", 2)]
    )
    assert last(game)["best"] == BERT and last(game)["deckel"] == 3


def test_jule_top_takes_every_deckel_like_schock_aus():
    game = play(
        rules(jule="top", deckel=5),
        THREE,
        ANNA,
        [t(ANNA, "2-5-6"), t(BERT, "1-2-4"), t(CLARA, "2-3-5")],
    )
    assert last(game)["from"] == "all" and last(game)["worst"] == CLARA
    assert game.half_losers == [CLARA]


def test_jule_top_ends_the_round_where_schock_aus_does():
    r = rules(jule="top", deckel=5, schock_aus_ends_round=True)
    game = play(r, THREE, ANNA, [t(ANNA, "2-5-6"), t(BERT, "1-2-4")])
    assert last(game)["worst"] == ANNA and game.half_losers == [ANNA]


def test_jule_top_costs_the_total_under_schock_aus_total():
    game = phase2_three(jule="top", schock_aus="total")
    apply(game, t(BERT, "1-2-4"), t(CLARA, "2-5-6"), t(DIETER, "2-3-5"))
    assert last(game)["from"] == BERT and last(game)["deckel"] == 1 and game.half_losers == []


def test_two_dice_rounds_score_the_imagined_third_die():
    r = rules(two_dice=True, deckel=5)
    game = Game.start(r, THREE, ANNA)
    for player, pair in [(ANNA, [6, 4]), (BERT, [2, 6]), (CLARA, [1, 3])]:
        game.apply(parse_event({"player": player, "dice": pair, "throws": 1}, r))
    # Clara 1-1-3 (Schock 3) is best, Bert 6-6-2 ("662") is below Anna's Straße 4-5-6
    assert last(game)["best"] == CLARA and last(game)["worst"] == BERT
    assert last(game)["deckel"] == 3


def test_a_forced_loser_round_with_a_tie_at_the_top_repeats_when_the_best_has_to_pay():
    game = phase2_three(penalty_mode="round_loser")
    apply(game, pen(DIETER), t(BERT, "1-1-3"), t(CLARA, "1-1-3"), t(DIETER, "6-6-6"))
    assert last(game)["repeated"] is True
    assert game.stacks == {ANNA: 0, BERT: 1, CLARA: 1, DIETER: 1}
    # the offender still loses the repeated round, whatever they throw
    apply(game, t(BERT, "1-1-3"), t(CLARA, "2-3-5"), t(DIETER, "6-6-6"))
    assert last(game)["worst"] == DIETER and last(game)["from"] == BERT


def test_equal_strassen_tie_at_the_bottom_and_repeat_the_round_under_the_standard_tie_rule():
    events = [t(ANNA, "1-1-3"), t(BERT, "1-2-3"), t(CLARA, "4-5-6")]
    game = play(rules(strassen="equal"), THREE, ANNA, events)
    assert last(game)["repeated"] is True
    game = play(rules(), THREE, ANNA, events)
    assert last(game)["worst"] == BERT and last(game)["deckel"] == 3


def test_a_penalty_between_rounds_that_puts_the_next_starter_out_passes_the_start_clockwise():
    game = phase2_three()
    apply(game, pen(DIETER, 1))  # paid by Bert (clockwise from Dieter; Anna is out)
    assert game.penalties[-1].source == BERT
    assert game.active == [CLARA, DIETER]
    assert game.next_player == CLARA
