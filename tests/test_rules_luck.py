"""Luck and decisions of a game's turns (api/rules/luck.py, api/rules/RULES.md §13): values
computed by hand, and the definition's identity on every rated turn of simulated games."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from api.rules import PRESETS, Game, ruleset_from_config, simulate_game
from api.rules.luck import PlayerLuck, game_luck, turn_luck
from api.rules.odds import Target, solver, worst_so_far
from api.rules.turns import RecordTurn, Throw, turn_in_detail

STANDARD = PRESETS["standard"]


def close(p: float, exact: Fraction | float) -> bool:
    return abs(p - float(exact)) < 1e-9


def opened_with_schock_5_in_two(*throws: Throw) -> Game:
    """Anna opens with Schock 5 in two throws (the limit is two), Bert throws ``throws``."""
    game = Game.start(STANDARD, ["Anna", "Bert"], "Anna")
    game.apply(RecordTurn("Anna", (1, 1, 5), 2, False))
    game.apply(turn_in_detail("Bert", list(throws), False, STANDARD))
    return game


def test_the_best_decision_gives_nothing_away_and_a_failed_last_throw_is_bad_luck() -> None:
    # 1-1-4: setting the ones aside and throwing the 4 again beats Schock 5 with a 1 or a 6
    # (2/6, a 5 loses the tie on throws); the 4 comes again: luck -2/6 in the second throw
    game = opened_with_schock_5_in_two(Throw((1, 1, 4), (1, 1)), Throw((4,)))
    (turn,) = turn_luck(game)
    p_start = solver(STANDARD, Target((1, 1, 5), 2, False), 2).start()[0]
    assert turn.player == "Bert" and turn.split and turn.outcome == 0
    assert close(turn.p_start, p_start)
    assert turn.given_away == 0.0
    # first throw: from p_start to 2/6; second: from 2/6 to 0
    assert close(turn.luck, (Fraction(2, 6) - Fraction(p_start)) + (0 - Fraction(2, 6)))


def test_throwing_all_three_again_after_1_1_4_gives_away_68_in_216() -> None:
    # the best decision keeps 2/6 = 72/216; throwing all three again (aus der Hand, in two
    # throws, as Anna's) beats Schock 5 only with Schock aus (1 way) or Schock 6 (3 ways)
    game = opened_with_schock_5_in_two(Throw((1, 1, 4)), Throw((1, 1, 6)))
    (turn,) = turn_luck(game)
    assert close(turn.given_away, Fraction(68, 216))
    assert turn.outcome == 1
    p_start = Fraction(turn.p_start)
    luck = (Fraction(72, 216) - p_start) + (1 - Fraction(4, 216))
    assert close(turn.luck, luck)


def test_stopping_with_a_loss_when_a_throw_was_left_gives_the_chance_away() -> None:
    # Bert stops after 1-1-4 in his first throw (Schock 4 loses to Schock 5): 2/6 given away
    game = opened_with_schock_5_in_two(Throw((1, 1, 4)))
    (turn,) = turn_luck(game)
    assert close(turn.given_away, Fraction(2, 6)) and turn.outcome == 0


def test_a_summary_of_more_throws_is_rated_at_the_start_but_not_split() -> None:
    game = Game.start(STANDARD, ["Anna", "Bert"], "Anna")
    game.apply(RecordTurn("Anna", (1, 1, 5), 2, False))
    game.apply(RecordTurn("Bert", (1, 1, 6), 2, False))
    (turn,) = turn_luck(game)
    assert not turn.split and turn.outcome == 1
    assert turn.luck == 0.0 and turn.given_away == 0.0
    assert game_luck(game) == {
        "Anna": PlayerLuck(),
        "Bert": PlayerLuck(turns=1, expected=turn.p_start, survived=1, split=0),
    }


def test_a_summary_in_a_round_of_one_throw_is_split_its_dice_being_that_throw() -> None:
    # Anna opens with 1-1-4 in one throw (limit 1): Bert's 1-1-5 in one throw beats it; the
    # throw brought it all (luck 1 − p_start), stopping was forced (nothing given away)
    game = Game.start(STANDARD, ["Anna", "Bert"], "Anna")
    game.apply(RecordTurn("Anna", (1, 1, 4), 1, True))
    game.apply(RecordTurn("Bert", (1, 1, 5), 1, True))
    (turn,) = turn_luck(game)
    assert turn.split and turn.outcome == 1 and turn.given_away == 0.0
    assert close(turn.luck, 1 - Fraction(turn.p_start))


def test_a_summary_of_one_throw_in_a_round_of_more_is_not_split() -> None:
    # stopping after a first throw is a choice made because of that throw: not split
    game = Game.start(STANDARD, ["Anna", "Bert"], "Anna")
    game.apply(RecordTurn("Anna", (1, 1, 5), 2, False))
    game.apply(RecordTurn("Bert", (1, 1, 6), 1, True))
    (turn,) = turn_luck(game)
    assert not turn.split and turn.outcome == 1 and turn.luck == 0.0


def test_a_blind_turn_is_not_split() -> None:
    rules = ruleset_from_config({"preset": "standard", "overrides": {"blind": True}})
    game = Game.start(rules, ["Anna", "Bert"], "Anna")
    game.apply(RecordTurn("Anna", (1, 1, 5), 2, False))
    game.apply(RecordTurn("Bert", (1, 1, 6), 1, True, blind=True))
    (turn,) = turn_luck(game)
    assert not turn.split and turn.outcome == 1 and turn.luck == 0.0


def test_the_target_is_the_worst_result_so_far_of_the_round() -> None:
    # Anna Schock 5, Bert a Zahl (worse): Clara must beat Bert's Zahl, not Anna's Schock
    game = Game.start(STANDARD, ["Anna", "Bert", "Clara"], "Anna")
    game.apply(RecordTurn("Anna", (1, 1, 5), 1, True))
    game.apply(RecordTurn("Bert", (2, 3, 5), 1, True))
    game.apply(RecordTurn("Clara", (2, 4, 5), 1, True))
    bert, clara = turn_luck(game)
    assert close(bert.p_start, solver(STANDARD, Target((1, 1, 5), 1, True), 1).start()[0])
    assert close(clara.p_start, solver(STANDARD, Target((2, 3, 5), 1, True), 1).start()[0])
    assert clara.outcome == 1  # 5-4-2 beats 5-3-2


def test_the_worst_so_far_is_the_one_the_round_would_lose_the_earliest_of_equal_ones() -> None:
    assert worst_so_far(STANDARD, []) is None
    # standard: the same Schock 5 in fewer throws is better; in as many throws the earlier
    # of the two counts (they are equal)
    game = Game.start(STANDARD, ["Anna", "Bert", "Clara"], "Anna")
    game.apply(RecordTurn("Anna", (1, 1, 5), 2, False))
    game.apply(RecordTurn("Bert", (1, 1, 5), 1, True))
    worst = worst_so_far(STANDARD, game.turns)
    assert worst is not None and worst.player == "Anna"
    game.apply(RecordTurn("Clara", (1, 1, 5), 2, False))
    worst = worst_so_far(STANDARD, game.turns)
    assert worst is not None and worst.player == "Anna"
    # bvb (earlier_wins): of equal results the later one is worse
    bvb = PRESETS["bvb"]
    game = Game.start(bvb, ["Anna", "Bert", "Clara"], "Anna")
    game.apply(RecordTurn("Anna", (1, 1, 5), 2, False))
    game.apply(RecordTurn("Bert", (1, 1, 5), 2, False))
    worst = worst_so_far(bvb, game.turns)
    assert worst is not None and worst.player == "Bert"


def test_a_target_thrown_aus_der_hand_is_rated_as_the_hand_made_it() -> None:
    # hennef: Anna's 2-3-4 aus der Hand is a Straße; Bert's Zahl 653 does not beat it (it
    # would beat the Zahl 432 the same dice make assembled)
    hennef = PRESETS["hennef"]
    game = Game.start(hennef, ["Anna", "Bert"], "Anna")
    game.apply(RecordTurn("Anna", (2, 3, 4), 1, True))
    game.apply(RecordTurn("Bert", (3, 5, 6), 1, True))
    (turn,) = turn_luck(game)
    assert turn.outcome == 0
    assert close(turn.p_start, solver(hennef, Target((2, 3, 4), 1, True), 1).start()[0])
    assert Target.of(game.turns[0]) == Target((4, 3, 2), 1, True)


def test_a_turned_six_counts_as_its_1_in_the_split() -> None:
    # sixes_turning: Bert turns two sixes into a 1, throws 1-2 and sets the 1 aside, then
    # throws the third 1: Schock aus beats Anna's Schock 4, every decision the best one
    rules = ruleset_from_config({"preset": "standard", "overrides": {"sixes_turning": True}})
    game = Game.start(rules, ["Anna", "Bert"], "Anna")
    game.apply(RecordTurn("Anna", (1, 1, 4), 3, False))
    throws = [Throw((3, 6, 6), (), 1), Throw((1, 2), (1,)), Throw((1,))]
    game.apply(turn_in_detail("Bert", throws, False, rules))
    (turn,) = turn_luck(game)
    assert turn.split and turn.outcome == 1
    assert close(turn.given_away, 0.0)
    assert close(turn.p_start + turn.luck - turn.given_away, 1)


def test_turns_of_a_round_not_yet_resolved_are_not_rated() -> None:
    game = Game.start(STANDARD, ["Anna", "Bert", "Clara"], "Anna")
    game.apply(RecordTurn("Anna", (1, 1, 5), 1, True))
    game.apply(RecordTurn("Bert", (2, 3, 5), 1, True))
    assert turn_luck(game) == []


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("detail", [True, False])
def test_chance_plus_luck_minus_given_away_is_the_outcome_of_every_rated_turn(
    preset: str, detail: bool
) -> None:
    rng = random.Random(17)
    rules = PRESETS[preset]
    game = simulate_game(rules, ["Anna", "Bert", "Clara", "Dieter"], "Anna", rng, detail=detail)
    turns = turn_luck(game)
    assert len(turns) == len(game.turns) - len(game.rounds)  # all but each round's first
    for turn, fact in zip(turns, [f for f in game.turns if f.order], strict=True):
        assert (turn.player, turn.round) == (fact.player, fact.round)
        assert 0.0 <= turn.p_start <= 1.0 and turn.outcome in (0, 1)
        assert turn.given_away >= 0.0
        assert turn.split is (detail or game.rounds[fact.round].limit == 1)
        if turn.split:
            assert abs(turn.p_start + turn.luck - turn.given_away - turn.outcome) < 1e-9
        else:
            assert turn.luck == turn.given_away == 0.0
    sums = game_luck(game)
    for name in game.players:
        mine = [t for t in turns if t.player == name]
        assert sums[name].turns == len(mine)
        assert sums[name].survived == sum(t.outcome for t in mine)
        assert sums[name].split == sum(t.split for t in mine)
        assert close(sums[name].expected, sum(t.p_start for t in mine))
        assert close(sums[name].luck, sum(t.luck for t in mine))
        assert close(sums[name].given_away, sum(t.given_away for t in mine))


@pytest.mark.parametrize("detail", [True, False])
def test_luck_is_zero_on_average_whatever_the_strategy(detail: bool) -> None:
    """The simulator's strategy is far from optimal and stops early on good throws; the luck
    of the split turns still averages 0 (within 4 standard errors), and with summaries the
    split turns are those of rounds of one throw only."""
    rng = random.Random(23)
    values = []
    for _ in range(60):
        game = simulate_game(STANDARD, ["Anna", "Bert", "Clara", "Dieter"], "Anna", rng,
                             detail=detail)  # fmt: skip
        values += [t.luck for t in turn_luck(game) if t.split]
    mean = sum(values) / len(values)
    spread = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    assert len(values) > 200
    assert abs(mean) < 4 * spread / len(values) ** 0.5, (mean, spread, len(values))
