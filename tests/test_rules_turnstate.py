"""The turn state (api/rules/throws.py: turn_state): whose turn, the round's opener and limit, the open
turn's throws and kept dice, and whether ``stop`` is needed — checked against what the engine
then accepts or refuses, in set pieces per rule system and over random throw-by-throw games."""

from __future__ import annotations

import random

import pytest
from engine_play import ANNA, BERT, CLARA, rules, stop, throw

from api.rules import (
    PRESETS,
    Game,
    Half,
    MalformedInput,
    OpenTurn,
    RecordPenalty,
    RecordThrow,
    RecordTurn,
    RuleViolation,
    Throw,
    evaluation_table,
    parse_event,
    record_command,
    record_throw,
    turn_state,
)
from api.rules.simulate import play_turn


def summary(player: str, dice, throws: int = 1, hand: bool | None = None) -> RecordTurn:
    return RecordTurn(player, tuple(dice), throws, throws == 1 if hand is None else hand)


def play(game: Game, *throws: RecordThrow, open_turn: OpenTurn | None = None):
    for t in throws:
        open_turn, _ = record_throw(game, open_turn, t)
    return open_turn


# ---------------------------------------------------------------------------- set pieces


@pytest.mark.parametrize(("preset", "cap"), [("standard", 3), ("wikipedia", 3), ("nrw", 3)])
def test_before_the_opener_throws_the_limit_is_the_openers_cap(preset, cap):
    game = Game.start(PRESETS[preset], [ANNA, BERT, CLARA], BERT)
    t = turn_state(game, None)
    assert t is not None
    assert (t.half, t.round, t.round_of_half) == (Half.HALF1, 0, 1)
    assert (t.opener, t.player, t.position, t.last_in_round) == (BERT, BERT, 0, False)
    assert (t.limit, t.limit_fixed, t.opener_cap) == (cap, False, cap)
    assert t.open is None and t.must_stop is False
    assert game.limit is None  # the state's limit says nothing yet; the turn state does


def test_the_openers_cap_follows_the_house_rules():
    game = Game.start(rules(max_throws=5), [ANNA, BERT], ANNA)
    t = turn_state(game, None)
    assert t is not None and (t.limit, t.opener_cap) == (5, 5)
    opened = play(game, throw(ANNA, 2, 3, 5), throw(ANNA, 2, 3, 6), throw(ANNA, 2, 4, 6))
    t = turn_state(game, opened)
    assert t is not None and t.open is not None
    assert (t.open.throws_used, t.open.throws_left) == (3, 2)
    play(game, throw(ANNA, 2, 3, 6), throw(ANNA, 2, 4, 6), open_turn=opened)  # 5: closes
    t = turn_state(game, None)
    assert t is not None and (t.player, t.limit, t.limit_fixed) == (BERT, 5, True)


def test_while_the_opener_throws_and_after_they_finished():
    game = Game.start(PRESETS["standard"], [ANNA, BERT, CLARA], ANNA)
    opened = play(game, throw(ANNA, 1, 4, 6, aside=[1]))
    t = turn_state(game, opened)
    assert t is not None and t.open is not None
    assert (t.player, t.opener, t.limit, t.limit_fixed) == (ANNA, ANNA, 3, False)
    assert t.open.to_json() == {
        "throws_used": 1,
        "throws_left": 2,
        "kept": [1],
        "dice_in_cup": 2,
        "blind": False,
        "can_stop": True,
        "next_player": BERT,
    }
    assert t.must_stop is False  # Bert's entry would end Anna's turn
    opened = play(game, throw(ANNA, 1, 5), open_turn=opened)  # 1-1-5 after two throws
    t = turn_state(game, opened)
    assert t is not None and t.open is not None
    assert (t.open.throws_used, t.open.throws_left, t.open.kept) == (2, 1, (1,))
    assert t.must_stop is False
    opened = play(game, throw(BERT, 6, 6, 2), open_turn=opened)  # Bert's throw ends Anna's
    t = turn_state(game, opened)
    assert t is not None and t.open is not None
    assert (t.player, t.position, t.limit, t.limit_fixed) == (BERT, 1, 2, True)
    assert (t.open.throws_used, t.open.throws_left) == (1, 1)
    assert game.limit == 2


def test_turning_sixes_means_the_player_cannot_stop_yet():
    game = Game.start(PRESETS["wikipedia"], [ANNA, BERT], ANNA)
    opened = play(game, throw(ANNA, 6, 6, 3, sixes=1))
    t = turn_state(game, opened)
    assert t is not None and t.open is not None
    assert (t.open.kept, t.open.dice_in_cup, t.open.can_stop) == ((1,), 2, False)
    assert t.must_stop is False and t.open.next_player is None
    with pytest.raises(RuleViolation):  # and the engine agrees: no stop here
        record_throw(game.copy(), opened, stop(ANNA))
    with pytest.raises(RuleViolation):  # nor may Bert's throw end Anna's turn
        record_throw(game.copy(), opened, throw(BERT, 2, 3, 4))


def _two_throw_round(game: Game) -> None:
    """Anna opens with 1-1-4 in two throws: a limit of 2, Schock 4 the best so far."""
    play(game, throw(ANNA, 2, 3, 5), throw(ANNA, 1, 1, 4, stop=True))


def test_the_last_player_who_would_lose_the_round_must_stop():
    game = Game.start(PRESETS["standard"], [ANNA, BERT], ANNA)
    _two_throw_round(game)
    opened = play(game, throw(BERT, 6, 3, 2))  # the worst: Bert would open the next round
    t = turn_state(game, opened)
    assert t is not None and t.last_in_round and t.must_stop is True
    # without stop, Bert's next entry continues his turn or is refused
    with pytest.raises(RuleViolation, match="offenen Zug"):
        record_command(game.copy(), opened, summary(BERT, [2, 3, 5]))
    probe = game.copy()
    after, _ = record_throw(probe, opened, throw(BERT, 6, 5, 4))
    last = probe.turns[-1]  # read as Bert's second throw, not as the next round's first
    assert after is None and (last.player, last.throws, last.dice) == (BERT, 2, "4-5-6")
    play(game, stop(BERT), open_turn=opened)
    t = turn_state(game, None)
    assert t is not None and (t.opener, t.player, t.round, t.limit_fixed) == (BERT, BERT, 1, False)


def test_the_last_player_who_wins_the_round_need_not_stop():
    game = Game.start(PRESETS["standard"], [ANNA, BERT], ANNA)
    _two_throw_round(game)
    opened = play(game, throw(BERT, 1, 1, 6))  # Schock 6: Anna loses and opens next
    t = turn_state(game, opened)
    assert t is not None and t.last_in_round and t.must_stop is False
    after, _ = record_throw(game, opened, throw(ANNA, 2, 3, 5))  # closes Bert's turn
    assert game.rounds[-1].worst == ANNA and after is not None and after.player == ANNA


def test_a_middle_player_whose_schock_aus_ends_the_round_and_who_must_lose_it_must_stop():
    # nrw: a Schock aus after another result ends the round; here Bert must lose it anyway
    game = Game.start(rules("nrw", penalty_mode="round_loser"), [ANNA, BERT, CLARA], ANNA)
    game.apply(summary(ANNA, [6, 4, 2], 2, False))
    game.apply(RecordPenalty(BERT, "Würfel fallen lassen"))
    opened = play(game, throw(BERT, 1, 1, 1))
    t = turn_state(game, opened)
    assert t is not None and not t.last_in_round and t.must_stop is True
    play(game, stop(BERT), open_turn=opened)
    assert game.rounds[-1].worst == BERT and game.next_player == BERT


def test_a_round_that_would_end_the_half_hands_the_next_half_to_its_loser():
    game = Game.start(PRESETS["standard"], [ANNA, BERT, CLARA], ANNA)
    play(game, throw(ANNA, 2, 3, 5), throw(ANNA, 1, 1, 1, stop=True))  # Schock aus, limit 2
    game.apply(summary(BERT, [6, 5, 2], 2, False))
    opened = play(game, throw(CLARA, 6, 4, 2))  # the worst: she would lose the half
    t = turn_state(game, opened)
    assert t is not None and t.open is not None and t.open.throws_left == 1
    assert t.half is Half.HALF1 and t.must_stop is True  # and she opens the second half
    play(game, stop(CLARA), open_turn=opened)
    t = turn_state(game, None)
    assert t is not None and game.half_losers == [CLARA]
    assert (t.half, t.round, t.round_of_half, t.opener, t.player) == (
        Half.HALF2,
        1,
        1,
        CLARA,
        CLARA,
    )
    assert (t.limit, t.limit_fixed, t.must_stop) == (3, False, False)


def test_the_limit_of_one_throw_closes_the_turn_by_itself():
    game = Game.start(PRESETS["standard"], [ANNA, BERT], ANNA)
    game.apply(summary(ANNA, [2, 3, 6]))
    t = turn_state(game, None)
    assert t is not None and (t.player, t.limit, t.limit_fixed) == (BERT, 1, True)
    assert play(game, throw(BERT, 6, 4, 2)) is None  # no open turn, no stop needed
    assert len(game.rounds) == 1


def _to_the_finale(preset: str) -> Game:
    """Clara loses half 1, Bert half 2 (each by a Schock aus)."""
    game = Game.start(PRESETS[preset], [ANNA, BERT, CLARA], ANNA)
    for turn in [
        summary(ANNA, [1, 1, 1]),
        summary(BERT, [6, 5, 2]),
        summary(CLARA, [6, 4, 2]),
        summary(CLARA, [1, 1, 1]),
        summary(ANNA, [6, 5, 2]),
        summary(BERT, [6, 4, 2]),
    ]:
        game.apply(turn)
    return game


@pytest.mark.parametrize(("preset", "opener"), [("standard", BERT), ("nrw", CLARA)])
def test_the_finales_opener_depends_on_the_rule_system(preset, opener):
    game = _to_the_finale(preset)
    t = turn_state(game, None)
    assert t is not None
    assert (t.half, t.round_of_half, t.opener, t.player, t.position) == (
        Half.FINALE,
        1,
        opener,
        opener,
        0,
    )
    assert t.to_json()["half"] == "finale"


def test_the_turn_that_would_end_the_game_must_stop_and_then_there_is_no_turn():
    game = _to_the_finale("standard")  # Bert opens the Finale against Clara
    play(game, throw(BERT, 2, 3, 5), throw(BERT, 1, 1, 1, stop=True))
    opened = play(game, throw(CLARA, 6, 4, 2))
    t = turn_state(game, opened)
    assert t is not None and t.half is Half.FINALE and t.must_stop is True
    with pytest.raises(RuleViolation, match="vorbei"):  # nobody could end it for her
        record_command(game.copy(), opened, summary(BERT, [2, 3, 5]))
    play(game, stop(CLARA), open_turn=opened)
    assert game.finished and turn_state(game, None) is None


def test_the_turn_state_of_a_repeated_round_starts_it_again():
    game = Game.start(PRESETS["standard"], [ANNA, BERT], ANNA)
    game.apply(summary(ANNA, [6, 4, 2], 2, False))
    game.apply(summary(BERT, [6, 4, 2], 2, False))  # equal, equal throws: repeated
    t = turn_state(game, None)
    assert t is not None and game.rounds[-1].repeated
    assert (t.round, t.round_of_half, t.opener, t.limit_fixed) == (1, 2, ANNA, False)


# ---------------------------------------------------------------------------- random games

RULE_SYSTEMS = [
    *sorted(PRESETS),
    ("standard", {"next_starter": "last_receiver"}),
    ("standard", {"max_throws": 5}),
]


def _rules_of(system):
    if isinstance(system, str):
        return PRESETS[system]
    preset, overrides = system
    return rules(preset, **overrides)


def _next_turn(game: Game, rand, table) -> RecordTurn:
    """The simulation's strategy (api/rules/simulate.py) for whoever throws next, in detail."""
    turns = game.round_turns
    worst = min(t.ev.key for t in turns) if turns else None
    limit = game.limit or game.rules.max_throws
    player = game.next_player
    assert player is not None
    return play_turn(player, limit, worst, game.rules, rand, True, table)


def _check_limit(game: Game, t) -> None:
    """The limit the turn state names is the one the engine enforces on a whole turn."""
    assert t.player == game.next_player and t.opener == game.order[0]
    assert t.limit == (game.limit or game.rules.max_throws)
    dice = [2, 3, 6][: game.rules.dice_count]
    for throws in (t.limit, t.limit + 1):  # as a client sends it: parsed, then applied
        entry = {"player": t.player, "dice": dice, "throws": throws, "hand": throws == 1}
        if throws == t.limit:
            game.copy().apply(parse_event(entry, game.rules))
        else:  # over the house rules' cap: malformed (422); under it, this round's limit (409)
            refused = MalformedInput if throws > game.rules.max_throws else RuleViolation
            with pytest.raises(refused):
                game.copy().apply(parse_event(entry, game.rules))


def _check_ending(game: Game, opened: OpenTurn, rand, table) -> None:
    """The player is done below the limit: must_stop against what the engine does without."""
    t = turn_state(game, opened)
    assert t is not None and t.open is not None and t.open.can_stop
    stopped = game.copy()
    record_throw(stopped, opened, stop(opened.player))
    assert t.open.next_player == stopped.next_player  # who throws next, as the engine says
    if not t.must_stop:  # the next player's whole turn ends this one, same as stop
        nxt = _next_turn(stopped, rand, table)
        assert nxt.player != opened.player
        without = game.copy()
        record_command(without, opened, nxt)
        stopped.apply(nxt)
        assert without.outcome() == stopped.outcome()
        return
    if stopped.finished:  # nobody could end it for them
        other = next(p for p in game.order if p != opened.player)
        with pytest.raises(RuleViolation):
            record_command(game.copy(), opened, summary(other, (2, 3, 6)[: game.rules.dice_count]))
        return
    assert stopped.next_player == opened.player  # their next entry would be misread
    with pytest.raises(RuleViolation):
        record_command(game.copy(), opened, _next_turn(stopped, rand, table))


def _play_throw_by_throw(game: Game, rand, table) -> str:
    """One turn, throw by throw; says stop when the turn state asks for it (else at random).
    Returns how it ended: "limit", "must_stop" or "free" (below the limit, stop optional)."""
    plan = _next_turn(game, rand, table)
    assert plan.detail is not None
    opened: OpenTurn | None = None
    for i, th in enumerate(plan.detail):
        opened, _ = record_throw(
            game, opened, RecordThrow(plan.player, th.dice, th.aside, th.sixes)
        )
        t = turn_state(game, opened)
        if opened is None:
            return "limit"
        assert t is not None and t.open is not None
        assert (t.open.throws_used, t.open.throws_left) == (i + 1, t.limit - i - 1)
        assert len(t.open.kept) + t.open.dice_in_cup == game.rules.dice_count
        assert t.player == plan.player and not (t.must_stop and not t.open.can_stop)
    assert opened is not None
    _check_ending(game, opened, rand, table)
    t = turn_state(game, opened)
    assert t is not None
    how = "must_stop" if t.must_stop else "free"
    if t.must_stop or rand() < 0.5:
        record_throw(game, opened, stop(plan.player))
    else:  # leave it open: the next player's first throw will end it
        nxt = _next_turn(_closed(game, opened), rand, table)
        assert nxt.detail is not None
        first = nxt.detail[0]
        after, _ = record_throw(game, opened, RecordThrow(nxt.player, first.dice))
        if after is not None:
            record_throw(game, after, stop(nxt.player))
    return how


def _closed(game: Game, opened: OpenTurn) -> Game:
    probe = game.copy()
    record_throw(probe, opened, stop(opened.player))
    return probe


@pytest.mark.parametrize("system", RULE_SYSTEMS, ids=str)
def test_must_stop_agrees_with_the_engine_in_random_games(system):
    rules_ = _rules_of(system)
    table = evaluation_table(rules_)
    rng = random.Random(14)
    seen: dict[str, int] = {}
    for _ in range(6):
        game = Game.start(rules_, [ANNA, BERT, CLARA, "Dieter"], ANNA)
        while not game.finished:
            t = turn_state(game, None)
            assert t is not None and t.must_stop is False and t.open is None
            _check_limit(game, t)
            if not t.last_in_round and rng.random() < 0.5:  # the last: throw by throw
                game.apply(_next_turn(game, rng.random, table))
            else:
                how = _play_throw_by_throw(game, rng.random, table)
                seen[how] = seen.get(how, 0) + 1
        assert turn_state(game, None) is None
    assert seen.get("must_stop", 0) >= 5 and seen.get("free", 0) >= 20, seen


# ---------------------------------------------------------------------------- as the API shows it


def test_the_turn_state_as_json_names_every_field_as_the_api_documents_it():
    """Every game answer carries ``turn``: half, round, opener, player, limit, the open turn
    and ``must_stop``, under these names (the API's turn-closing rules)."""
    game = Game.start(PRESETS["standard"], [ANNA, BERT, CLARA], ANNA)
    game.apply(summary(ANNA, [1, 1, 4], 2, False))
    opened = play(game, throw(BERT, 1, 5, 3, aside=[1]))
    t = turn_state(game, opened)
    assert t is not None and t.to_json() == {
        "half": 1,
        "round": 0,
        "round_of_half": 1,
        "opener": ANNA,
        "player": BERT,
        "position": 1,
        "last_in_round": False,
        "limit": 2,
        "limit_fixed": True,
        "opener_cap": 3,
        "open": {
            "throws_used": 1,
            "throws_left": 1,
            "kept": [1],
            "dice_in_cup": 2,
            "blind": False,
            "can_stop": True,
            "next_player": CLARA,
        },
        "must_stop": False,
    }
    t = turn_state(game, None)
    assert t is not None and t.to_json()["open"] is None


@pytest.mark.parametrize(
    ("throws", "blind", "left", "in_cup"),
    [
        pytest.param([Throw((2, 3, 4))], False, 2, 3, id="one of three throws used"),
        pytest.param([Throw((2, 3, 4))], True, 0, 3, id="blind: one throw and no more"),
        pytest.param(
            [Throw((1, 2, 4), (1,)), Throw((1, 3), (1,)), Throw((1,), (1,))],
            False,
            0,
            0,
            id="all throws used, every die kept",
        ),  # fmt: skip
    ],
)
def test_an_open_turn_counts_the_throws_left_and_the_dice_in_the_cup(throws, blind, left, in_cup):
    """The open turn as the turn state shows it: a blind turn is one throw, so nothing is
    left; otherwise the limit minus the throws used, and the dice not yet kept are in the cup
    (never fewer than none, even for an open turn that has used everything)."""
    game = Game.start(PRESETS["standard"], [ANNA, BERT], ANNA)
    t = turn_state(game, OpenTurn(ANNA, tuple(throws), blind))
    assert t is not None and t.open is not None
    assert (t.open.throws_used, t.open.throws_left, t.open.dice_in_cup) == (
        len(throws),
        left,
        in_cup,
    )
