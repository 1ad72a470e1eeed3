"""Throw by throw (api/rules/RULES.md §3): a turn recorded one throw at a time, in the pure engine.

Each test states one rule of the open turn; the table tests give the refusals word for word.
"""

from __future__ import annotations

import pytest
from engine_play import ANNA, BERT, CLARA, rules, stop, throw

from api.rules import (
    PRESETS,
    EventKind,
    Game,
    MalformedInput,
    OpenTurn,
    RecordPenalty,
    RecordThrow,
    RecordTurn,
    RuleViolation,
    SchockenError,
    ThrowRecorded,
    parse_throw,
    record_command,
    record_event,
    record_throw,
)

STD = PRESETS["standard"]


def new_game(r=STD, players=(ANNA, BERT, CLARA)) -> Game:
    return Game.start(r, list(players), players[0])


def play(game: Game, *throws: RecordThrow, open_turn: OpenTurn | None = None):
    """Record the throws in order; the open turn afterwards and every event's kind."""
    kinds: list[str] = []
    for t in throws:
        open_turn, events = record_throw(game, open_turn, t)
        kinds += [e.kind.value for e in events]
    return open_turn, kinds


def snapshot(game: Game, open_turn: OpenTurn | None):
    return game.outcome(), list(game.commands), game.next_player, open_turn


# --------------------------------------------------------------------------- an open turn


def test_a_throw_that_sets_dice_aside_opens_a_turn_and_says_what_happened():
    game = new_game()
    open_turn, events = record_throw(game, None, throw(ANNA, 1, 4, 6, aside=[1]))
    assert open_turn == OpenTurn(ANNA, (((1, 4, 6), (1,), 0),))
    assert [e.message for e in events] == ["Anna: Wurf 1 – 1-4-6, legt 1 heraus."]
    assert events[0].data == ThrowRecorded(ANNA, 1, (1, 4, 6), (1,))
    assert events[0].to_json()["data"] == {
        "player": ANNA,
        "throw": 1,
        "dice": [1, 4, 6],
        "aside": [1],
    }
    assert game.commands == [] and game.next_player == ANNA  # nothing reached the game yet


def test_stop_ends_the_turn_with_the_dice_set_aside_and_the_last_throw():
    game = new_game()
    open_turn, kinds = play(game, throw(ANNA, 1, 4, 6, aside=[1]), throw(ANNA, 1, 5), stop(ANNA))
    assert open_turn is None
    assert kinds == ["throw_recorded", "throw_recorded", "turn_recorded"]
    turn = game.commands[-1]
    assert isinstance(turn, RecordTurn)
    assert (sorted(turn.dice), turn.throws, turn.hand) == ([1, 1, 5], 2, False)
    assert turn.to_json() == {
        "player": ANNA,
        "detail": [{"dice": [1, 4, 6], "aside": [1]}, {"dice": [1, 5]}],
    }
    assert game.limit == 2 and game.next_player == BERT


def test_stop_together_with_the_throw_ends_the_turn_at_once():
    game = new_game()
    open_turn, kinds = play(game, throw(ANNA, 6, 4, 1, stop=True))
    assert open_turn is None and kinds == ["throw_recorded", "turn_recorded"]
    assert game.commands[-1].hand is True and game.limit == 1


def test_the_round_limit_ends_the_turn_without_stop():
    game = new_game()
    play(game, throw(ANNA, 6, 4, 2, stop=True))  # Anna opens with one throw: limit 1
    open_turn, kinds = play(game, throw(BERT, 3, 3, 2))
    assert open_turn is None and kinds == ["throw_recorded", "turn_recorded"]
    assert game.next_player == CLARA


def test_the_opener_may_use_the_maximum_number_of_throws():
    game = new_game()
    open_turn, _ = play(game, throw(ANNA, 6, 4, 2), throw(ANNA, 6, 5, 2))
    assert open_turn is not None and len(open_turn.throws) == 2  # still open: 3 allowed
    open_turn, kinds = play(game, throw(ANNA, 6, 5, 3), open_turn=open_turn)
    assert open_turn is None and kinds == ["throw_recorded", "turn_recorded"]
    assert game.limit == 3


def test_the_next_players_throw_ends_the_open_turn_first():
    game = new_game()
    open_turn, _ = play(game, throw(ANNA, 1, 4, 6, aside=[1]), throw(ANNA, 1, 5))
    open_turn, events = record_throw(game, open_turn, throw(BERT, 5, 5, 1, aside=[1]))
    assert [e.kind for e in events] == [EventKind.TURN_RECORDED, EventKind.THROW_RECORDED]
    assert events[0].data.player == ANNA and game.commands[-1].throws == 2
    assert open_turn is not None and open_turn.player == BERT
    assert game.limit == 2  # Anna stopped after two throws by leaving the cup to Bert


def test_the_next_players_whole_turn_ends_the_open_turn_first():
    game = new_game()
    open_turn, _ = play(game, throw(ANNA, 6, 4, 2))
    summary = RecordTurn(BERT, (3, 2, 1), 1, True)
    open_turn, events = record_command(game, open_turn, summary)
    assert open_turn is None
    assert [(e.kind, e.data.player) for e in events] == [
        (EventKind.TURN_RECORDED, ANNA),
        (EventKind.TURN_RECORDED, BERT),
    ]
    assert game.commands[-1] == summary


def test_a_blind_first_throw_is_the_whole_turn():
    game = new_game(rules(blind=True))
    open_turn, kinds = play(game, throw(ANNA, 5, 4, 2, blind=True))
    assert open_turn is None and kinds == ["throw_recorded", "turn_recorded"]
    assert game.commands[-1].blind is True and game.limit == 1


def test_turning_sixes_keeps_the_turn_open_and_one_six_goes_back_into_the_cup():
    game = new_game(PRESETS["party"])
    open_turn, _ = play(game, throw(ANNA, 6, 6, 3, sixes=1))
    assert open_turn is not None
    open_turn, _ = play(game, throw(ANNA, 1, 1, stop=True), open_turn=open_turn)
    assert open_turn is None and sorted(game.commands[-1].dice) == [1, 1, 1]


# --------------------------------------------------------------------------- refusals

SETS_ASIDE_TOO_LATE = (
    "Nach dem letzten erlaubten Wurf (Wurf {n}) darf nichts mehr herausgelegt oder umgedreht "
    "werden."
)

REFUSED = [
    pytest.param(
        STD,
        [throw(ANNA, 1, 4, 6, aside=[1])],
        throw(ANNA, 3, 5, blind=True),
        "Blind kann nur vor dem ersten Wurf angesagt werden.",
        id="blind only before the first throw",
    ),
    pytest.param(
        STD,
        [throw(ANNA, 6, 4, 2, stop=True)],
        throw(BERT, 1, 4, 6, aside=[1]),
        SETS_ASIDE_TOO_LATE.format(n=1),
        id="nothing set aside after the round's last allowed throw",
    ),
    pytest.param(
        STD,
        [throw(ANNA, 6, 4, 2)],
        throw(BERT, 1, 4, 6, aside=[1]),
        SETS_ASIDE_TOO_LATE.format(n=1),
        id="the next player's throw ends the open turn, whose throws set the limit",
    ),
    pytest.param(
        STD,
        [throw(ANNA, 1, 4, 6, aside=[1]), throw(ANNA, 1, 5)],
        throw(ANNA, 1, 4, aside=[1]),
        SETS_ASIDE_TOO_LATE.format(n=3),
        id="nothing set aside after the opener's third throw",
    ),
    pytest.param(
        rules(blind=True),
        [],
        throw(ANNA, 1, 4, 6, aside=[1], blind=True),
        SETS_ASIDE_TOO_LATE.format(n=1),
        id="nothing set aside from a blind throw",
    ),
    pytest.param(
        PRESETS["party"],
        [throw(ANNA, 6, 4, 2, stop=True)],
        throw(BERT, 6, 6, 2, sixes=1),
        SETS_ASIDE_TOO_LATE.format(n=1),
        id="no sixes turned after the last allowed throw",
    ),
    pytest.param(
        STD,
        [],
        stop(ANNA),
        "Anna hat keinen offenen Zug, der beendet werden könnte.",
        id="stop without an open turn",
    ),
    pytest.param(
        STD,
        [throw(ANNA, 6, 4, 2)],
        stop(BERT),
        "Bert hat keinen offenen Zug, der beendet werden könnte.",
        id="stop by another player than the open turn's",
    ),
    pytest.param(
        STD,
        [],
        throw(BERT, 6, 4, 2),
        "Bert ist nicht an der Reihe, sondern Anna.",
        id="a throw out of turn",
    ),
    pytest.param(
        STD,
        [throw(ANNA, 1, 4, 6, aside=[1])],
        throw(ANNA, 1, 5, 2),
        "Wurf 2: im Becher sind 2 Würfel, geworfen wurden aber 3 ([1, 5, 2]). Herausgelegte "
        "Würfel werden nicht noch einmal geworfen.",
        id="dice set aside are not thrown again",
    ),
    pytest.param(
        STD,
        [],
        throw(ANNA, 2, 4, 6, aside=[1]),
        "Wurf 1: 1 kann nicht herausgelegt werden, der Wurf zeigt [2, 4, 6].",
        id="only dice of the throw can be set aside",
    ),
    pytest.param(
        STD,
        [],
        throw(ANNA, 1, 1, 1, aside=[1, 1, 1]),
        "Wurf 2: alle Würfel liegen schon heraus, es kann nicht weitergewürfelt werden.",
        id="never every die aside",
    ),
    pytest.param(
        STD,
        [],
        throw(ANNA, 6, 6, 3, sixes=1),
        "Sechsen umdrehen ist nach diesen Hausregeln nicht erlaubt.",
        id="sixes turned only where the house rules allow it",
    ),
    pytest.param(
        STD,
        [],
        throw(ANNA, 5, 4, 2, blind=True),
        "Blind spielen ist nach diesen Hausregeln nicht erlaubt.",
        id="blind only where the house rules allow it",
    ),
    pytest.param(
        PRESETS["wolbeck"].replace(ones_only_aside=True),
        [],
        throw(ANNA, 1, 4, 6, aside=[1, 6]),
        "Wurf 1: nach diesen Hausregeln dürfen nur Einsen herausgelegt werden.",
        id="only ones aside where the house rules say so",
    ),
]


@pytest.mark.parametrize(("r", "before", "refused", "message"), REFUSED)
def test_a_throw_against_the_rules_is_refused_and_changes_nothing(r, before, refused, message):
    game = new_game(r)
    open_turn, _ = play(game, *before)
    was = snapshot(game, open_turn)
    with pytest.raises(SchockenError) as err:
        record_throw(game, open_turn, refused)
    assert err.value.message == message
    assert snapshot(game, open_turn) == was


def test_a_player_with_an_open_turn_cannot_enter_a_whole_turn():
    game = new_game()
    open_turn, _ = play(game, throw(ANNA, 6, 4, 2))
    was = snapshot(game, open_turn)
    with pytest.raises(RuleViolation) as err:
        record_command(game, open_turn, RecordTurn(ANNA, (3, 2, 1), 1, True))
    assert err.value.message == (
        "Anna hat noch einen offenen Zug (Wurf für Wurf): erst mit stop beenden oder "
        "rückgängig machen, dann den ganzen Zug eintragen."
    )
    assert snapshot(game, open_turn) == was


@pytest.mark.parametrize("offender", [ANNA, CLARA])
def test_no_penalty_while_a_turn_is_open(offender):
    game = new_game(rules(penalty=1))
    open_turn, _ = play(game, throw(ANNA, 6, 4, 2))
    was = snapshot(game, open_turn)
    with pytest.raises(RuleViolation) as err:
        record_command(game, open_turn, RecordPenalty(offender, "Würfel vom Tisch"))
    assert err.value.message == (
        "Der Zug von Anna ist noch offen: erst beenden (stop), dann die Strafe eintragen."
    )
    assert snapshot(game, open_turn) == was


def test_a_penalty_after_stop_is_fine():
    game = new_game(rules(penalty=1))
    open_turn, _ = play(game, throw(ANNA, 6, 4, 2), stop(ANNA))
    assert open_turn is None
    _, events = record_command(game, None, RecordPenalty(CLARA, "Würfel vom Tisch"))
    assert [e.kind for e in events] == [EventKind.PENALTY] and game.stacks[CLARA] == 1


def test_the_open_turn_refusals_come_before_the_game_log_event_is_read():
    """A penalty during an open turn is refused for that reason, even one the house rules
    would refuse for another (round_loser mode gives no Strafdeckel)."""
    game = new_game(rules(penalty_mode="round_loser"))
    open_turn, _ = play(game, throw(ANNA, 6, 4, 2))
    event = {"penalty": {"player": BERT, "deckel": 2, "reason": "Würfel vom Tisch"}}
    with pytest.raises(RuleViolation, match="Der Zug von Anna ist noch offen"):
        record_event(game, open_turn, event)
    with pytest.raises(RuleViolation, match="Anna hat noch einen offenen Zug"):
        record_event(game, open_turn, {"player": ANNA, "dice": [7], "throws": 1})


def test_a_refused_throw_of_the_next_player_leaves_the_open_turn_open():
    game = new_game()
    open_turn, _ = play(game, throw(ANNA, 1, 4, 6, aside=[1]), throw(ANNA, 1, 5))
    was = snapshot(game, open_turn)
    with pytest.raises(MalformedInput, match="Wurf 1: 2 kann nicht herausgelegt werden"):
        record_throw(game, open_turn, throw(BERT, 5, 5, 1, aside=[2]))
    assert snapshot(game, open_turn) == was and game.commands == []


def test_a_refused_whole_turn_of_the_next_player_leaves_the_open_turn_open():
    game = new_game()
    open_turn, _ = play(game, throw(ANNA, 6, 4, 2))
    was = snapshot(game, open_turn)
    with pytest.raises(RuleViolation, match="Clara ist nicht an der Reihe, sondern Bert"):
        record_command(game, open_turn, RecordTurn(CLARA, (3, 2, 1), 1, True))
    assert snapshot(game, open_turn) == was


# --------------------------------------------------------------------------- parsing


def test_a_client_throw_is_parsed_into_a_command():
    assert parse_throw({"player": ANNA, "dice": [1, 4, 6], "aside": [1]}) == throw(
        ANNA, 1, 4, 6, aside=[1]
    )
    assert parse_throw({"player": ANNA, "stop": True}) == stop(ANNA)
    assert parse_throw({"player": ANNA, "dice": [5, 2], "blind": True, "stop": False}) == (
        throw(ANNA, 5, 2, blind=True)
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"player": ANNA}, "dice"),
        ({"player": ANNA, "stop": False}, "dice"),
        ({"player": ANNA, "stop": True, "blind": True}, "dice"),
        ({"player": ANNA, "dice": [7, 1, 1]}, "dice"),
        ({"player": ANNA, "dice": []}, "dice"),
        ({"player": ANNA, "dice": [1, 2], "aside": ["1"]}, "aside"),
        ({"player": ANNA, "dice": [6, 6, 1], "sixes": 3}, "sixes"),
        ({"player": ANNA, "dice": [1, 2, 3], "aside": [1], "stop": True}, "stop"),
        ({"player": ANNA, "dice": [1, 2, 3], "blind": "ja"}, "blind"),
        ({"player": ANNA, "dice": [1, 2, 3], "hand": True}, "hand"),
        ({"dice": [1, 2, 3]}, "player"),
    ],
)
def test_a_malformed_throw_names_the_field(body, field):
    with pytest.raises(MalformedInput) as err:
        parse_throw(body)
    assert err.value.field == field
