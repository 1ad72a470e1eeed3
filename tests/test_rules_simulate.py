"""The simulated games (api.rules.simulate) that feed the demo and the benchmarks: every one is a legal game under its ruleset."""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import datetime, timedelta

import pytest

from api.rules import (
    PRESETS,
    Category,
    evaluate,
    ruleset_from_config,
    simulate_game,
    to_log,
)
from api.rules import simulate_logs as logs_of
from api.rules.simulate import NAMES, play_turn

PLAYERS = ["Anna", "Bert", "Clara"]
#: rule systems with and without turning sixes, a house cap of five throws, two dice
SYSTEMS = {
    "standard": PRESETS["standard"],
    "bvb": PRESETS["bvb"],
    "party, 5 throws": ruleset_from_config({"preset": "party", "overrides": {"max_throws": 5}}),
    "two dice": ruleset_from_config({"preset": "standard", "overrides": {"two_dice": True}}),
}


def _turns_with_their_worst(game, rules):
    """Every turn of a game played in detail: (its fact, its throws, the round's worst key
    before it, the turn's throw limit)."""
    details = [e["detail"] for e in to_log(game)["events"]]
    by_round = defaultdict(list)
    for fact, detail in zip(game.turns, details, strict=True):
        earlier = by_round[fact.round]
        worst = min((f.key for f, _ in earlier), default=None)
        limit = earlier[0][0].throws if earlier else rules.max_throws
        earlier.append((fact, detail))
        yield fact, detail, worst, limit


def _check_turn(fact, detail, worst, limit, rules):
    """One turn against the cautious regular's strategy (the module's docstring)."""
    kept: list[int] = []
    for number, throw in enumerate(detail, start=1):
        dice = throw["dice"]
        ev = evaluate((*kept, *dice), not kept, rules)
        beats = worst is not None and ev.key > worst
        stops = number == limit or ev.category is not Category.ZAHL or beats
        assert stops == (number == len(detail)), (fact, detail, worst, limit)
        if stops:
            return
        assert throw.get("aside", []) == [1] * dice.count(1), detail  # every one aside
        two_sixes = rules.sixes_turning and dice.count(6) >= 2
        assert throw.get("sixes", 0) == (1 if two_sixes else 0), detail
        kept += [1] * (throw.get("sixes", 0) + dice.count(1))


@pytest.mark.parametrize("system", SYSTEMS)
def test_the_cautious_regular_stops_on_more_than_a_zahl_or_on_beating_the_worst(system):
    """The simulated players' strategy: throw until the limit, a result better than a Zahl,
    or (after the opener) a result that beats the round's current worst; until then set every
    one aside and, where the house rules allow it, turn one of two sixes into a one."""
    rules = SYSTEMS[system]
    rng = random.Random(7)
    for _ in range(3):
        game = simulate_game(rules, PLAYERS, "Anna", rng, detail=True)
        assert game.finished
        for fact, detail, worst, limit in _turns_with_their_worst(game, rules):
            assert fact.blind is False  # never blind
            _check_turn(fact, detail, worst, limit, rules)


@pytest.mark.parametrize("seed", range(5))
def test_a_simulated_turn_is_a_summary_unless_the_detail_is_asked_for(seed):
    """A turn played by the strategy, by default as a summary (dice, throws, hand), never
    blind; with ``detail`` throw by throw."""
    rules = PRESETS["standard"]
    turn = play_turn("Anna", 3, None, rules, random.Random(seed).random)
    assert turn.detail is None and turn.blind is False and 1 <= turn.throws <= 3
    again = play_turn("Anna", 3, None, rules, random.Random(seed).random, detail=True)
    assert again.detail is not None and len(again.detail) == again.throws == turn.throws
    assert again.dice == turn.dice and again.blind is False


def test_a_simulated_game_is_a_summary_unless_the_detail_is_asked_for():
    """``simulate_game`` plays whole turns by default, throw by throw with ``detail``."""
    rules = PRESETS["bvb"]
    plain = simulate_game(rules, PLAYERS, "Bert", random.Random(3))
    events = to_log(plain)["events"]
    assert events and all("detail" not in e and "dice" in e for e in events)
    detailed = simulate_game(rules, PLAYERS, "Bert", random.Random(3), detail=True)
    assert all("detail" in e for e in to_log(detailed)["events"])


def test_simulated_logs_default_to_four_players_whole_turns_and_no_date():
    """``simulate_logs``: four players from the name list, whole turns, no date unless a
    start is given."""
    logs = list(logs_of(PRESETS["standard"], 2, seed=5))
    assert len(logs) == 2
    for log in logs:
        assert log["players"] == list(NAMES[:4]) == ["Anna", "Bert", "Clara", "Dieter"]
        assert all("detail" not in e for e in log["events"])
        assert "played_at" not in log or log["played_at"] is None


def test_simulated_logs_take_the_given_players_a_random_opener_and_dates_a_week_apart():
    """Named players are used as given; the opener is drawn at random for each game; the
    dates advance by ``every`` from ``start``."""
    start = datetime(2026, 1, 2, 20, 0)
    logs = list(logs_of(PRESETS["nrw"], 8, players=["Uwe", "Vera"], seed=11, start=start))
    assert {tuple(log["players"]) for log in logs} == {("Uwe", "Vera")}
    assert {log["starter"] for log in logs} == {"Uwe", "Vera"}
    dates = [log["played_at"] for log in logs]
    assert dates == [(start + i * timedelta(days=7)).isoformat() for i in range(8)]


class _SameDice(random.Random):
    """Dice that always show the same: every player throws the same result, for ever."""

    def random(self) -> float:
        return 0.5


def test_a_game_that_cannot_end_is_stopped_with_an_error_not_played_for_ever():
    """Ties at the bottom repeat the round; dice that never change would repeat it for ever,
    so the simulation gives up after MAX_COMMANDS turns and says so."""
    with pytest.raises(AssertionError, match="^game did not end after 20000 turns$"):
        simulate_game(PRESETS["standard"], ["Anna", "Bert"], "Anna", _SameDice())
