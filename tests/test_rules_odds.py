"""The odds of a turn (api/rules/odds.py, api/rules/RULES.md §12): exact probabilities,
checked against values computed by hand, against the engine itself playing the advised
decisions with random dice (Monte Carlo), and by properties every position must have."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from engine_play import ANNA, BERT, rules, t
from hypothesis import given, settings
from hypothesis import strategies as st

from api.rules import PRESETS, Game, MalformedInput, RoundLost, parse_event
from api.rules.odds import Solver, Target, odds, play_advised, solver

STANDARD = PRESETS["standard"]


def close(p: float, exact: Fraction) -> bool:
    return abs(p - float(exact)) < 1e-9


def outcome(solve, dice: tuple[int, ...], throws: int, hand: bool) -> str:
    """How a final result compares with the solver's target."""
    beat, tie = solve.final(dice, throws, hand)
    return "beat" if beat else "tie" if tie else "lost"


def chances(answer, stop: bool = False, aside: tuple[int, ...] = (), sixes: int = 0):
    (found,) = [d for d in answer.decisions if (d.stop, d.aside, d.sixes) == (stop, aside, sixes)]
    return found.p_beat, found.p_tie


# ---------------------------------------------------------------- computed by hand


def test_the_issue_example_stopping_keeps_schock_4_throwing_the_4_again_wins_two_in_six() -> None:
    answer = odds(STANDARD, (1, 1), (4,), 2, 3, Target((1, 1, 5), 2, False))
    assert [(d.stop, d.aside, d.sixes) for d in answer.decisions] == [
        (True, (), 0),
        (False, (), 0),
    ]
    assert chances(answer, stop=True) == (0.0, 0.0)
    beat, tie = chances(answer)
    assert close(beat, Fraction(2, 6)) and tie == 0.0  # a 5 in three throws loses the tie
    assert answer.best == 1


def test_schock_aus_in_one_throw_is_one_in_216() -> None:
    # with one throw only Schock aus beats Schock 6 (General ranks below a Schock)
    beat, tie = solver(STANDARD, Target((1, 1, 6), 1, True), 1).start()
    assert close(beat, Fraction(1, 216))
    assert close(tie, Fraction(3, 216))  # Schock 6 in one throw, like the target


def test_a_solver_made_for_a_target_knows_its_place_in_the_round() -> None:
    # Solver(rules, target, limit) places the target itself; solver() hands it the place
    target = Target((1, 1, 6), 1, True)
    assert Solver(STANDARD, target, 1).start() == solver(STANDARD, target, 1).start()
    assert close(Solver(STANDARD, target, 1).start()[0], Fraction(1, 216))


def test_one_one_aside_with_two_throws_left_makes_a_third_one_eleven_in_36() -> None:
    answer = odds(STANDARD, (), (1, 1, 4), 1, 3, Target((1, 1, 6), 1, True))
    beat, tie = chances(answer, aside=(1, 1))
    assert close(beat, Fraction(11, 36)) and tie == 0.0
    assert answer.decisions[answer.best].aside == (1, 1)


def test_a_tie_on_throws_is_kept_only_when_nothing_better_is_left() -> None:
    # Schock 5 in two throws against Schock 5 in two: the last throw may only stop there
    answer = odds(STANDARD, (1, 1), (5,), 2, 2, Target((1, 1, 5), 2, False))
    assert [d.stop for d in answer.decisions] == [True]
    assert chances(answer, stop=True) == (0.0, 1.0)
    # with a throw left, throwing again (1 or 6 win: 2/6) beats keeping the tie
    answer = odds(STANDARD, (1, 1), (5,), 2, 3, Target((1, 1, 5), 2, False))
    assert close(chances(answer)[0], Fraction(2, 6))
    assert answer.best == 1


def test_earlier_wins_has_no_ties_and_the_later_player_needs_a_better_result() -> None:
    bvb = PRESETS["bvb"]
    answer = odds(bvb, (1, 1), (5,), 2, 2, Target((1, 1, 5), 2, False))
    assert chances(answer, stop=True) == (0.0, 0.0)
    # the same Schock 5 in fewer throws than the target still loses: the target was earlier
    assert outcome(solver(bvb, Target((1, 1, 5), 3, False), 3), (1, 1, 5), 1, False) == "lost"
    assert outcome(solver(STANDARD, Target((1, 1, 5), 3, False), 3), (1, 1, 5), 1, False) == "beat"
    assert outcome(solver(STANDARD, Target((1, 1, 5), 3, False), 3), (1, 1, 5), 3, False) == "tie"


def test_turning_sixes_is_offered_only_where_the_house_rules_allow_it() -> None:
    target = Target((1, 1, 2), 3, False)
    plain = odds(STANDARD, (), (6, 6, 3), 1, 3, target)
    assert all(d.sixes == 0 for d in plain.decisions)
    turning = odds(rules(sixes_turning=True), (), (6, 6, 3), 1, 3, target)
    turned = [d for d in turning.decisions if d.sixes]
    # two sixes make one 1; the 3 may be set aside too or thrown again with the other six
    assert [(d.aside, d.sixes) for d in turned] == [((), 1), ((3,), 1)]
    # 1 aside, two dice in the cup, two throws: a 1-1 pair beats Schock 2
    assert chances(turning, aside=(), sixes=1)[0] > chances(turning, aside=(6,))[0]


def test_turning_sixes_after_the_last_allowed_throw_is_not_offered() -> None:
    answer = odds(rules(sixes_turning=True), (), (6, 6, 6), 1, 1, Target((1, 1, 2), 1, True))
    assert [(d.stop, d.sixes) for d in answer.decisions] == [(True, 0)]


def test_ones_only_aside_offers_only_ones() -> None:
    answer = odds(rules(ones_only_aside=True), (), (1, 4, 4), 1, 3, Target((1, 1, 2), 3, False))
    assert [(d.stop, d.aside) for d in answer.decisions] == [(True, ()), (False, ()), (False, (1,))]


def test_the_advice_counts_a_turned_six_as_the_1_it_became() -> None:
    # Anna: Schock 4 in three throws. Bert turns two sixes of 3-6-6 into a 1 and throws 1-2:
    # with 1-1 aside the advice throws the 2 again for Schock aus (1-1-2 would lose), and the
    # 1 comes
    r = rules(sixes_turning=True)
    game = Game.start(r, [ANNA, BERT], ANNA)
    game.apply(parse_event(t(ANNA, "1-1-4", throws=3, hand=False), r))
    rolls = iter([(6, 6, 3), (1, 2), (1,)])
    events = play_advised(
        game, BERT, lambda n: next(rolls), solver(r, Target((1, 1, 4), 3, False), 3)
    )
    assert _outcome(events) == "beat"
    assert game.turns[-1].dice == "1-1-1"


def test_every_part_of_a_throw_is_listed_even_when_two_reach_the_same_position() -> None:
    answer = odds(STANDARD, (), (1, 1, 4), 1, 3, Target((1, 1, 2), 3, False))
    listed = [(d.stop, d.aside) for d in answer.decisions]
    assert listed == [
        (True, ()),
        (False, ()),
        (False, (1,)),
        (False, (4,)),
        (False, (1, 1)),
        (False, (1, 4)),
    ]


def test_aus_der_hand_counts_only_when_the_final_throw_threw_every_die() -> None:
    # hand_only Straße (hennef): 2-3-4 from the hand is a Straße, assembled it is a Zahl
    hennef = PRESETS["hennef"]
    solve = solver(hennef, Target((4, 5, 6), 3, False), 3)  # Zahl 654, assembled
    assert outcome(solve, (2, 3, 4), 1, True) == "beat"
    assert outcome(solve, (2, 3, 4), 3, False) == "lost"
    stop_hand = odds(hennef, (), (2, 3, 4), 2, 3, Target((5, 6, 6), 1, True))
    stop_built = odds(hennef, (4,), (2, 3), 2, 3, Target((5, 6, 6), 1, True))
    assert chances(stop_hand, stop=True) == (1.0, 0.0)
    assert chances(stop_built, stop=True) == (0.0, 0.0)


def test_a_target_aus_der_hand_keeps_what_the_hand_made_it() -> None:
    # hennef: 2-3-4 aus der Hand is a Straße, which Zahl 653 does not beat; assembled it is
    # Zahl 432, which 653 beats
    hennef = PRESETS["hennef"]
    assert chances(odds(hennef, (), (3, 5, 6), 1, 1, Target((2, 3, 4), 1, True)), stop=True) == (
        0.0,
        0.0,
    )
    assert chances(odds(hennef, (), (3, 5, 6), 1, 1, Target((2, 3, 4), 1, False)), stop=True) == (
        1.0,
        0.0,
    )


def test_the_solver_gives_one_decision_the_chances_the_odds_list_for_it() -> None:
    # what the phone's Chancen card asks (api.table.chancen): Schock 5 in two against Schock 5
    # in two, a throw left: stopping ties, throwing the 5 again wins with a 1 or a 6
    target = Target((1, 1, 5), 2, False)
    solve = solver(STANDARD, target, 3)
    assert solve.chances((1, 1), (5,), 2, (True, (), 0)) == (0.0, 1.0)
    beat, tie = solve.chances((1, 1), (5,), 2, (False, (), 0))
    assert close(beat, Fraction(2, 6)) and tie == 0.0
    for d in odds(STANDARD, (1, 1), (5,), 2, 3, target).decisions:
        assert solve.chances((1, 1), (5,), 2, (d.stop, d.aside, d.sixes)) == (d.p_beat, d.p_tie)


def test_two_dice_takes_two_dice_and_two_dice_results() -> None:
    two = rules(two_dice=True)
    # two dice count as the three with the best third die: 1-6 is Schock 6
    answer = odds(two, (), (1, 4), 1, 3, Target((1, 6), 1, True))
    assert [(d.stop, d.aside) for d in answer.decisions] == [
        (True, ()),
        (False, ()),
        (False, (1,)),
        (False, (4,)),
    ]
    # a 1 aside, two throws left for the second 1: only Schock aus beats Schock 6 in one
    assert close(chances(answer, aside=(1,))[0], Fraction(11, 36))


# ---------------------------------------------------------------- bad input


TARGET = Target((1, 1, 2), 3, False)
PIPS = "Würfel zeigen 1 bis 6 Augen, nicht"


@pytest.mark.parametrize(
    ("aside", "dice", "throws", "limit", "target", "field", "code", "message"),
    [
        ((), (1, 2, 7), 1, 3, TARGET, "dice", "invalid_dice", f"„dice“: {PIPS} [1, 2, 7]."),
        ((), (0, 2, 3), 1, 3, TARGET, "dice", "invalid_dice", f"„dice“: {PIPS} [0, 2, 3]."),
        ((), (True, 2, 3), 1, 3, TARGET, "dice", "invalid_dice", f"„dice“: {PIPS} [True, 2, 3]."),
        ((2.0,), (2, 3), 2, 3, TARGET, "aside", "invalid_dice", f"„aside“: {PIPS} [2.0]."),
        (
            (1,), (2, 3, 4), 2, 3, TARGET, "dice", "dice_count_wrong",
            "„dice“: mit 1 herausgelegten Würfeln sind 2 im Becher, geworfen wurden aber 3 (2-3-4).",
        ),
        (
            (), (2, 3), 1, 3, TARGET, "dice", "dice_count_wrong",
            "„dice“: mit 0 herausgelegten Würfeln sind 3 im Becher, geworfen wurden aber 2 (2-3).",
        ),
        (
            (1, 1), (), 2, 3, TARGET, "dice", "dice_count_wrong",
            "„dice“: mit 2 herausgelegten Würfeln sind 1 im Becher, geworfen wurden aber 0 (keiner).",
        ),
        (
            (1, 1, 1), (), 2, 3, TARGET, "aside", "dice_count_wrong",
            "„aside“: von 3 Würfeln können höchstens 2 herausliegen, wenn noch geworfen wurde, "
            "nicht 3.",
        ),
        (
            (1,), (2, 3), 1, 3, TARGET, "aside", "detail_inconsistent",
            "„aside“: im ersten Wurf eines Zuges liegt noch nichts heraus.",
        ),
        (
            (), (2, 3, 4), 4, 3, TARGET, "throws", "throw_limit_exceeded",
            "„throws“ muss zwischen 1 und dem Wurflimit 3 liegen, nicht 4.",
        ),
        (
            (), (2, 3, 4), 0, 3, TARGET, "throws", "throw_limit_exceeded",
            "„throws“ muss zwischen 1 und dem Wurflimit 3 liegen, nicht 0.",
        ),
        (
            (), (2, 3, 4), 1, 4, TARGET, "limit", "throws_over_house_limit",
            "„limit“ muss zwischen 1 und 3 liegen: nach diesen Hausregeln sind höchstens 3 Würfe "
            "erlaubt, nicht 4.",
        ),
        (
            (), (2, 3, 4), 1, 0, TARGET, "limit", "throws_over_house_limit",
            "„limit“ muss zwischen 1 und 3 liegen: nach diesen Hausregeln sind höchstens 3 Würfe "
            "erlaubt, nicht 0.",
        ),
        (
            (), (2, 3, 4), 1, 3, Target((1, 1), 3, False), "target.dice", "dice_count_wrong",
            "„target.dice“: ein Ergebnis hat 3 Würfel, nicht 2.",
        ),
        (
            (), (2, 3, 4), 1, 3, Target((1, 1, 9), 3, False), "target.dice", "invalid_dice",
            f"„target.dice“: {PIPS} [1, 1, 9].",
        ),
        (
            (), (2, 3, 4), 1, 2, TARGET, "target.throws", "throw_limit_exceeded",
            "„target.throws“: der Wurf zum Schlagen fiel in derselben Runde, also in 1 bis 2 "
            "Würfen, nicht in 3.",
        ),
        (
            (), (2, 3, 4), 1, 2, Target((1, 1, 2), 0, False), "target.throws",
            "throw_limit_exceeded",
            "„target.throws“: der Wurf zum Schlagen fiel in derselben Runde, also in 1 bis 2 "
            "Würfen, nicht in 0.",
        ),
    ],
)  # fmt: skip
def test_a_position_that_cannot_be_is_refused_in_german(
    aside, dice, throws, limit, target, field, code, message
) -> None:
    with pytest.raises(MalformedInput) as refused:
        odds(STANDARD, aside, dice, throws, limit, target)
    assert (refused.value.field, refused.value.code, refused.value.message) == (
        field,
        code,
        message,
    )


def test_an_aside_the_house_rules_forbid_is_refused() -> None:
    # a 2 aside under ones_only_aside: anything but a 1 is refused
    with pytest.raises(MalformedInput) as refused:
        odds(rules(ones_only_aside=True), (2,), (1, 3), 2, 3, TARGET)
    assert (refused.value.field, refused.value.code, refused.value.message) == (
        "aside",
        "house_rule_forbids",
        "„aside“: nach diesen Hausregeln dürfen nur Einsen herausgelegt werden.",
    )


# ---------------------------------------------------------------- properties

POSITION = st.tuples(
    st.sampled_from(sorted(PRESETS)),
    st.lists(st.integers(1, 6), min_size=0, max_size=2),
    st.lists(st.integers(1, 6), min_size=3, max_size=3),
    st.integers(1, 3),
    st.integers(1, 3),
    st.lists(st.integers(1, 6), min_size=3, max_size=3),
    st.integers(1, 3),
    st.booleans(),
)


def _position(drawn):
    name, aside, dice, throws, limit, target, target_throws, hand = drawn
    r = PRESETS[name]
    limit = min(limit, r.max_throws)
    throws = min(throws, limit)
    if throws == 1:
        aside = []
    dice = dice[: 3 - len(aside)]
    if r.ones_only_aside:
        aside = [1] * len(aside)
    return (
        r,
        tuple(aside),
        tuple(dice),
        throws,
        limit,
        Target(tuple(target), min(target_throws, limit), hand),
    )


@settings(max_examples=150, deadline=None)
@given(POSITION)
def test_every_answer_is_a_probability_and_best_is_the_highest(drawn) -> None:
    r, aside, dice, throws, limit, target = _position(drawn)
    answer = odds(r, aside, dice, throws, limit, target)
    assert answer.decisions[0].stop
    for d in answer.decisions:
        assert 0.0 <= d.p_beat <= 1.0 and 0.0 <= d.p_tie <= 1.0
        assert d.p_beat + d.p_tie <= 1.0 + 1e-12
    best = answer.decisions[answer.best].p_beat
    assert all(best >= d.p_beat for d in answer.decisions)
    assert all(d.p_beat < best for d in answer.decisions[: answer.best])
    if throws == limit:
        assert len(answer.decisions) == 1  # after the last allowed throw: stop only


@settings(max_examples=60, deadline=None)
@given(POSITION)
def test_one_more_throw_allowed_never_lowers_the_best_chance(drawn) -> None:
    r, aside, dice, throws, limit, target = _position(drawn)
    if limit >= r.max_throws:
        limit -= 1
        throws = min(throws, limit)
        if throws == 1:
            aside, dice = (), (dice + (2, 2))[:3]
        target = Target(target.dice, min(target.throws, limit), target.hand)
    if limit < 1 or limit >= r.max_throws:
        return
    fewer = odds(r, aside, dice, throws, limit, target)
    more = odds(r, aside, dice, throws, limit + 1, target)
    assert more.decisions[more.best].p_beat >= fewer.decisions[fewer.best].p_beat - 1e-12


# ---------------------------------------------------------------- Monte Carlo


def _outcome(events) -> str:
    """How the engine decided the round of Anna (the target, earlier) and Bert."""
    lost = [e.data.player for e in events if isinstance(e.data, RoundLost)]
    return "tie" if not lost else "beat" if lost == [ANNA] else "lost"


def _monte_carlo(name: str, turns: int, target: str, seed: int = 27) -> None:
    r = PRESETS[name]
    limit = r.max_throws
    dice = tuple(int(p) for p in target.split("-"))
    aim = Target(dice, limit, False)
    start = Game.start(r, [ANNA, BERT], ANNA)
    start.apply(parse_event(t(ANNA, target, throws=limit, hand=False), r))
    rng = random.Random(seed)
    seen = {"beat": 0, "tie": 0, "lost": 0}
    solve = solver(r, aim, limit)
    for _ in range(turns):
        events = play_advised(
            start.copy(), BERT, lambda n: tuple(rng.randint(1, 6) for _ in range(n)), solve
        )
        seen[_outcome(events)] += 1
    beat, tie = solver(r, aim, limit).start()
    for p, n in ((beat, seen["beat"]), (tie, seen["tie"])):
        error = max((p * (1 - p) / turns) ** 0.5, 1 / turns)
        assert abs(n / turns - p) <= 4 * error, (name, target, n / turns, p)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_the_engine_playing_the_advice_with_random_dice_agrees_with_the_odds(name: str) -> None:
    _monte_carlo(name, 1000, "1-1-4")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRESETS))
@pytest.mark.parametrize("target", ["1-1-4", "2-2-2", "6-5-3"])
def test_monte_carlo_200000_turns_per_preset(name: str, target: str) -> None:
    _monte_carlo(name, 200_000 // 3 + 1, target, seed=2026)
