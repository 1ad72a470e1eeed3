"""Readings of points the rule book leaves open (api/rules/RULES.md §10.23–27) that no other
engine test file states: the state of a finished game, and a penalty between a repeated round
and its replay."""

from __future__ import annotations

from engine_play import ANNA, BERT, CLARA, DIETER, play, rules, t

from api.rules import PRESETS, parse_event, replay_log
from api.rules.simulate import simulate_logs


def test_a_finished_game_keeps_the_players_of_its_last_part_as_active() -> None:
    for seed in range(12):
        log = next(iter(simulate_logs(PRESETS["standard"], 1, seed=seed)))
        game = replay_log(log)
        state = game.state()
        assert game.finished
        assert state.next_player is None and state.limit is None
        assert state.mitte == game.total and not any(game.stacks.values())
        assert game.loser in state.active
        if game.blattschuss:
            assert game.finale is None and len(state.active) >= 2
        else:
            assert list(state.active) == game.finale  # both finalists, the loser included


def test_a_penalty_before_the_replay_of_a_repeated_round_lets_its_receiver_open_it() -> None:
    r = rules("standard", next_starter="last_receiver")
    tie = [t(ANNA, "6-5-4"), t(BERT, "6-5-4"), t(CLARA, "6-5-4"), t(DIETER, "6-5-4")]
    game = play(r, [ANNA, BERT, CLARA, DIETER], ANNA, tie)
    assert game.rounds[-1].repeated and game.next_player == ANNA  # the same starter
    game.apply(
        parse_event({"penalty": {"player": CLARA, "deckel": 2, "reason": "Würfel vom Tisch"}}, r)
    )
    assert game.next_player == CLARA and game.stacks[CLARA] == 2


def test_under_round_loser_the_replay_keeps_its_starter_and_the_offender_loses_it() -> None:
    r = rules("standard", next_starter="last_receiver", penalty_mode="round_loser")
    tie = [t(ANNA, "6-5-4"), t(BERT, "6-5-4"), t(CLARA, "6-5-4")]
    game = play(r, [ANNA, BERT, CLARA], ANNA, tie)
    game.apply(parse_event({"penalty": {"player": CLARA, "reason": "Würfel vom Tisch"}}, r))
    assert game.next_player == ANNA
    for e in (t(ANNA, "6-5-2"), t(BERT, "6-5-3"), t(CLARA, "1-1-1")):
        game.apply(parse_event(e, r))
    last = game.rounds[-1]
    assert (last.best, last.worst, last.deckel) == (BERT, CLARA, 1)  # Zahl 653 is worth 1


def test_the_jule_from_the_hand_only_is_a_zahl_421_when_assembled() -> None:
    from api.rules import evaluate

    for jule in ("top", "sieben"):
        strict = rules("standard", jule=jule, hand_only=["jule"])
        loose = rules("standard", jule=jule)
        assert evaluate((4, 2, 1), True, strict).name == "Jule"
        assert evaluate((4, 2, 1), False, strict).name == "Zahl 421"
        assert evaluate((4, 2, 1), False, loose).name == "Jule"  # §10.4: whatever the hand flag
    # in a round: the assembled 4-2-1 is the round's worst, the one from the hand its best
    r = rules("standard", jule="sieben", hand_only=["jule"])
    game = play(
        r,
        [ANNA, BERT, CLARA],
        ANNA,
        [t(ANNA, "4-2-1", 2, hand=True), t(BERT, "6-5-2", 2), t(CLARA, "4-2-1", 2)],
    )
    last = game.rounds[-1]
    assert (last.best, last.worst, last.deckel) == (ANNA, CLARA, 7)


def test_the_jule_switch_is_told_in_the_house_rules_prose() -> None:
    from api.rules import house_rules_prose

    text = " ".join(
        line
        for section in house_rules_prose(rules("standard", jule="top", hand_only=["jule"]))
        for line in (*section.bullets, *section.notes)
    )
    assert (
        "Jule (1-2-4): ganz oben, über Schock aus, alle Deckel wie Schock aus; zählt nur aus der Hand"
        in text
    )
    assert "zusammengelegt ist das die Zahl 421" in text
