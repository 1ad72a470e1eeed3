"""Invariants of the game state machine, checked over random games under every preset, and what
a refused command says (its code, field and German message).

Games are driven by the simulator's strategy with hypothesis choosing the preset, house-rule
overrides, the number of players, the seed, whether turns come throw by throw, and penalties
sprinkled in between turns. After every command the invariants below must hold.
"""

from __future__ import annotations

import random

import pytest
from engine_play import ANNA, BERT, CLARA, THREE, pen, rules, t
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.rules import (
    PRESETS,
    EventKind,
    Game,
    Half,
    MalformedInput,
    Phase,
    RecordPenalty,
    RecordTurn,
    RuleViolation,
    parse_event,
    replay_log,
    ruleset_from_config,
    to_log,
)
from api.rules.simulate import NAMES, play_turn

#: random games per property; mutation testing (the "mutation" profile, tests/conftest.py)
#: judges thousands of mutants, each on a fixed 20 of them
MANY = 20 if settings.get_current_profile_name() == "mutation" else 150
SOME = 20 if settings.get_current_profile_name() == "mutation" else 100

OVERRIDES = st.fixed_dictionaries(
    {},
    optional={
        "deckel": st.integers(2, 17),
        "max_throws": st.integers(1, 5),
        "general_over_schock2": st.booleans(),
        "strassen": st.sampled_from(["height", "equal"]),
        "ties": st.sampled_from(["throws_then_repeat", "later_lower_unless_fewer", "earlier_wins"]),
        "jule": st.sampled_from(["off", "top", "sieben"]),
        "specials": st.sampled_from([[], ["neuner"], ["achter"], ["siebener", "achter"]]),
        "two_fives_never_lose": st.booleans(),
        "schock_aus": st.sampled_from(["half", "total"]),
        "schock_aus_ends_round": st.booleans(),
        "passing_on": st.booleans(),
        "next_starter": st.sampled_from(["round_loser", "last_receiver"]),
        "finale_opener": st.sampled_from(["last_loser", "first_half_loser"]),
        "penalty": st.integers(1, 3),
        "penalty_mode": st.sampled_from(["deckel", "round_loser"]),
        "ones_only_aside": st.booleans(),
    },
)

GAMES = st.fixed_dictionaries(
    {
        "preset": st.sampled_from(sorted(PRESETS)),
        "overrides": OVERRIDES,
        "players": st.integers(2, 6),
        "seed": st.integers(0, 2**32 - 1),
        "detail": st.booleans(),
        "penalty_rate": st.sampled_from([0.0, 0.02, 0.1]),
    }
)


def conserved(game: Game) -> bool:
    return game.mitte + sum(game.stacks.values()) == game.total


def play(spec: dict, check) -> Game:
    """Play a random game, calling ``check(game, command, events, before)`` after each command."""
    rules = ruleset_from_config({"preset": spec["preset"], "overrides": spec["overrides"]})
    rng = random.Random(spec["seed"])
    names = list(NAMES[: spec["players"]])
    game = Game.start(rules, names, names[int(rng.random() * len(names))])
    for _ in range(20_000):
        if game.finished:
            return game
        before = game.copy()
        if rules.penalty is not None and rng.random() < spec["penalty_rate"]:
            offender = rng.choice(game.active)
            command = RecordPenalty(offender, "Würfel vom Tisch gefallen")
            try:
                events = game.apply(command)
            except RuleViolation:  # a second "offender loses the round" in one round
                assert game.outcome() == before.outcome()
                continue
        else:
            turns = game.round_turns
            command = play_turn(
                game.next_player,
                game.limit or rules.max_throws,
                min(t.ev.key for t in turns) if turns else None,
                rules,
                rng.random,
                spec["detail"],
            )
            if command.detail is not None:  # go through the parser like a client would
                command = parse_event(command.to_json(), rules)
            events = game.apply(command)
        check(game, command, events, before)
    raise AssertionError("the game did not end")


@settings(max_examples=MANY, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GAMES)
def test_deckel_are_conserved_after_every_event(spec):
    def check(game, command, events, before):
        assert conserved(game), (command, game.state())
        assert all(v >= 0 for v in game.stacks.values())
        assert game.mitte >= 0

    play(spec, check)


@settings(max_examples=MANY, deadline=None)
@given(GAMES)
def test_every_game_ends_with_exactly_one_loser(spec):
    game = play(spec, lambda *a: None)
    assert game.phase is Phase.FINISHED
    assert game.loser in game.players
    assert game.loser in game.half_losers
    assert len(game.half_losers) == 2
    if game.half_losers[0] == game.half_losers[1]:
        assert game.blattschuss and game.finale is None
    else:
        assert not game.blattschuss
        assert sorted(game.finale) == sorted(game.half_losers)


@settings(max_examples=MANY, deadline=None)
@given(GAMES)
def test_a_blattschuss_game_has_no_finale(spec):
    kinds: list[EventKind] = []
    game = play(spec, lambda g, c, events, b: kinds.extend(e.kind for e in events))
    assert game.blattschuss == (EventKind.BLATTSCHUSS in kinds)
    if game.blattschuss:
        assert EventKind.FINALE_STARTED not in kinds
        assert game.finale is None
        assert not any(r.half is Half.FINALE for r in game.rounds)
    else:
        assert kinds.count(EventKind.FINALE_STARTED) == 1


@settings(max_examples=MANY, deadline=None)
@given(GAMES)
def test_the_half_loser_holds_all_deckel_when_the_half_ends(spec):
    def check(game, command, events, before):
        for e in events:
            if e.kind is EventKind.HALF_LOST or e.kind is EventKind.GAME_LOST:
                stacks = e.data.stacks
                assert stacks[e.data.player] == game.total
                assert sum(stacks.values()) == game.total
        if any(e.kind is EventKind.HALF_LOST for e in events) and not game.finished:
            # a new half or the Finale starts with every Deckel in the Mitte
            assert game.mitte == game.total and not any(game.stacks.values())

    play(spec, check)


@settings(max_examples=MANY, deadline=None)
@given(GAMES)
def test_an_eliminated_player_never_throws_again_in_that_half(spec):
    out: set[str] = set()

    def check(game, command, events, before):
        if before.phase is not game.phase:
            out.clear()
        if isinstance(command, RecordTurn):
            assert command.player not in out
        for e in events:
            if e.kind is EventKind.PLAYER_OUT:
                out.add(e.data.player)
                assert game.stacks[e.data.player] == 0
                assert e.data.player not in game.active
                with pytest.raises(RuleViolation, match="raus"):
                    game.copy().apply(RecordTurn(e.data.player, (6, 5, 4), 1, True))

    play(spec, check)


@settings(max_examples=SOME, deadline=None)
@given(GAMES)
def test_replaying_a_games_log_reproduces_its_outcome(spec):
    game = play(spec, lambda *a: None)
    log = to_log(game)
    again = replay_log(log)
    assert again.outcome() == game.outcome()
    assert to_log(again) == log


BAD_EVENTS = st.one_of(
    st.builds(lambda p: {"player": p, "dice": [1, 2, 3], "throws": 1}, st.sampled_from(NAMES)),
    st.builds(
        lambda d, t: {"player": "Anna", "dice": d, "throws": t},
        st.lists(st.integers(-1, 8), max_size=4),
        st.integers(-1, 7),
    ),
    st.builds(lambda t: {"player": "Anna", "dice": [1, 1, 1], "throws": 1, "hand": t}, st.just(0)),
    st.just({"player": "Nobody", "dice": [1, 1, 2], "throws": 1}),
    st.just({"penalty": {"player": "Anna"}}),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)


@settings(max_examples=SOME, deadline=None)
@given(GAMES, st.integers(0, 400), BAD_EVENTS)
def test_a_rejected_event_changes_nothing(spec, stop_after, bad):
    full = play(spec, lambda *a: None)
    rules = full.rules
    # rebuild the game from its commands, stopping part-way
    game = Game.start(rules, full.players, full.first_starter)
    for command in full.commands[:stop_after]:
        game.apply(command)
    before = game.outcome()
    try:
        game.apply(parse_event(bad, rules))
    except (MalformedInput, RuleViolation):
        assert game.outcome() == before
        assert len(game.commands) == min(stop_after, len(full.commands))


# --------------------------------------------------------------------------- what a refusal says


ANNA_OUT = [  # 2 Deckel: Clara and Bert receive one each, Anna holds none and is out, Bert opens
    t(ANNA, "5-6-6"), t(BERT, "4-6-6"), t(CLARA, "2-3-5"),
    t(CLARA, "5-6-6"), t(ANNA, "4-6-6"), t(BERT, "2-3-5"),
]  # fmt: skip
FINALE = [  # Clara loses half 1, Anna half 2: the Finale is Anna against Clara, Anna opens
    t(ANNA, "2-5-6"), t(BERT, "1-1-1"), t(CLARA, "2-3-5"),
    t(CLARA, "2-5-6"), t(ANNA, "2-3-5"), t(BERT, "1-1-1"),
]  # fmt: skip
OVER = [t(ANNA, "1-1-1"), t(BERT, "2-3-5"), t(BERT, "2-3-5"), t(ANNA, "1-1-1")]  # Blattschuss
SIXES = dict(sixes_turning=True)
LIMIT_2 = [t(ANNA, "2-3-5", 2)]


def detail(*throws: dict) -> dict:
    return {"player": BERT, "detail": list(throws)}


REFUSALS = [  # rule, options, events before, the refused event, its code, field and message
    ("6.2: nothing after the game's end", dict(deckel=2), OVER, t(BERT, "1-1-1"),
     "game_finished", None, "Das Spiel ist schon vorbei: Bert hat verloren."),
    ("a player not in the game (422)", {}, [], t("Egon", "1-1-1"),
     "unknown_player", "player", "„Egon“ spielt in diesem Spiel nicht mit."),
    ("a penalty for a player not in the game", {}, [], pen("Egon", 1),
     "unknown_player", "player", "„Egon“ spielt in diesem Spiel nicht mit."),
    ("5.3: out for the rest of the half", dict(deckel=2), ANNA_OUT, t(ANNA, "1-1-1"),
     "player_out", "player", "Anna ist in dieser Hälfte schon raus (keine Deckel mehr)."),
    ("5.3: no penalty for a player who is out", dict(deckel=2, penalty=1), ANNA_OUT, pen(ANNA),
     "player_out", "player", "Anna ist in dieser Hälfte schon raus (keine Deckel mehr)."),
    ("6.3: only the two half losers play the Finale", dict(deckel=2), FINALE, t(BERT, "1-1-1"),
     "player_out", "player", "Bert spielt im Finale nicht mit."),
    ("4.1: the starter opens", {}, [], t(BERT, "1-1-1"),
     "turn_not_yours", "player", "Bert ist nicht an der Reihe, sondern Anna."),
    ("4.2: clockwise after the starter", {}, [t(ANNA, "2-3-5")], t(CLARA, "1-1-1"),
     "turn_not_yours", "player", "Clara ist nicht an der Reihe, sondern Bert."),
    ("4.2: the starter's one throw is the limit", {}, [t(ANNA, "2-3-5")],
     t(BERT, "1-1-1", 2, hand=True), "throw_limit_exceeded", "throws",
     "In dieser Runde ist höchstens 1 Wurf erlaubt (Anna hat vorgelegt), nicht 2."),
    ("4.2: the starter's two throws are the limit", {}, LIMIT_2, t(BERT, "1-1-1", 3, hand=True),
     "throw_limit_exceeded", "throws",
     "In dieser Runde sind höchstens 2 Würfe erlaubt (Anna hat vorgelegt), nicht 3."),
    ("4.2: a turn in detail over the limit", SIXES, LIMIT_2,
     detail({"dice": [6, 6, 2], "sixes": 1}, {"dice": [6, 2]}, {"dice": [3, 4]}),
     "throw_limit_exceeded", "detail",
     "In dieser Runde sind höchstens 2 Würfe erlaubt (Anna hat vorgelegt), nicht 3."),
    ("3.3: no turning on the round's last allowed throw (Wurf 2 of 2)", SIXES, LIMIT_2,
     detail({"dice": [6, 5, 2], "aside": [2]}, {"dice": [6, 6], "sixes": 1}, {"dice": [3]}),
     "throw_limit_exceeded", "detail",
     "Nach dem letzten erlaubten Wurf (Wurf 2) dürfen keine Sechsen umgedreht werden."),
    ("3.3: no turning on the round's last allowed throw (Wurf 1 of 1)", SIXES, [t(ANNA, "2-3-5")],
     detail({"dice": [6, 6, 2], "sixes": 1}, {"dice": [3, 4]}),
     "throw_limit_exceeded", "detail",
     "Nach dem letzten erlaubten Wurf (Wurf 1) dürfen keine Sechsen umgedreht werden."),
]  # fmt: skip


@pytest.mark.parametrize(("rule", "options", "before", "bad", "code", "field", "message"), REFUSALS)
def test_a_refused_command_says_which_rule_it_breaks(
    rule, options, before, bad, code, field, message
):
    """What a refusal of a game says (its code, the field to correct and the German message a
    player reads); a player not in the game is never right (MalformedInput, 422), the others are
    refused by the game's state (RuleViolation, 409)."""
    r = rules(**options)
    game = Game.start(r, [ANNA, BERT] if before is OVER else THREE, ANNA)
    for event in before:
        game.apply(parse_event(event, r))
    kind = MalformedInput if code == "unknown_player" else RuleViolation
    with pytest.raises(kind) as err:
        game.apply(parse_event(bad, r))
    assert (err.value.code, err.value.field, err.value.message) == (code, field, message), rule


def test_a_turn_with_dice_the_games_rules_cannot_score_is_refused():
    """A command parsed under other house rules (two dice) is checked against the game's own."""
    game = Game.start(rules(), THREE, ANNA)
    bad = parse_event({"player": ANNA, "dice": [6, 4], "throws": 1}, rules(two_dice=True))
    with pytest.raises(MalformedInput) as err:
        game.apply(bad)
    assert (err.value.code, err.value.field, err.value.message) == (
        "invalid_dice", "dice", "[6, 4] ist kein gültiger Wurf: erwartet 3 Würfel mit 1 bis 6 Augen."
    )  # fmt: skip


@pytest.mark.parametrize(
    ("players", "starter", "field", "message"),
    [
        ("Anna", ANNA, "players", "„players“ muss eine Liste von Namen sein."),
        ([ANNA], ANNA, "players", "Ein Spiel braucht 2 bis 20 Spieler, nicht 1."),
        ([f"P{i}" for i in range(21)], "P0", "players", "Ein Spiel braucht 2 bis 20 Spieler, nicht 21."),
        ([ANNA, BERT, ANNA, CLARA, BERT], ANNA, "players",
         "Jeder Spieler darf nur einmal mitspielen: Anna, Bert."),
        ([ANNA, BERT], CLARA, "starter", "Der Startspieler „Clara“ spielt nicht mit."),
        ([ANNA, " "], ANNA, "players", "Der Spielername fehlt oder ist leer."),
        ([ANNA, BERT], "", "starter", "Der Spielername fehlt oder ist leer."),
    ],
)  # fmt: skip
def test_a_game_needs_2_to_20_different_players_and_a_starter_among_them(
    players, starter, field, message
):
    """4.1 and the limits of a game: 2 to 20 players, each once, the starter one of them."""
    with pytest.raises(MalformedInput) as err:
        Game.start(rules(), players, starter)
    assert (err.value.code, err.value.field, err.value.message) == ("invalid_input", field, message)
    assert Game.start(rules(), [f"P{i}" for i in range(20)], "P19").next_player == "P19"
    assert Game.start(rules(), [ANNA, BERT], BERT).state().active == (ANNA, BERT)
