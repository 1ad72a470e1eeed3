"""Every rejection (schemas/GAMELOG.md, issue section 3): the error kind, and a rejected command
leaves the game exactly as it was."""

from __future__ import annotations

import pytest
from engine_play import ANNA, BERT, CLARA, DIETER, FOUR, phase2_three, play, rules, t

from api.rules import (
    Game,
    InvalidRules,
    MalformedInput,
    RuleViolation,
    SchockenError,
    parse_event,
    replay_log,
    ruleset_from_config,
    to_log,
)


def assert_rejected(game: Game, event, kind: type[SchockenError]) -> SchockenError:
    """The event is rejected with ``kind`` and the game is unchanged."""
    before = (game.outcome(), to_log(game), game.next_player, game.copy().state())
    with pytest.raises(kind) as err:
        game.apply(parse_event(event, game.rules))
    assert (game.outcome(), to_log(game), game.next_player, game.copy().state()) == before
    return err.value


# --------------------------------------------------------------------------- rule violations


def test_a_turn_by_the_wrong_player_is_rejected():
    game = play(rules(), FOUR, ANNA, [])
    err = assert_rejected(game, t(BERT, "1-1-1"), RuleViolation)
    assert BERT in err.message and ANNA in err.message
    game = play(rules(), FOUR, ANNA, [t(ANNA, "2-3-5")])
    assert_rejected(game, t(CLARA, "1-1-1"), RuleViolation)
    assert_rejected(game, t(ANNA, "1-1-1"), RuleViolation)  # nobody throws twice


def test_more_throws_than_the_rounds_limit_are_rejected():
    game = play(rules(), FOUR, ANNA, [t(ANNA, "2-3-5", 2)])
    assert_rejected(game, t(BERT, "1-1-1", 3, hand=True), RuleViolation)
    detail = {
        "player": BERT,
        "detail": [
            {"dice": [1, 2, 3], "aside": [1]},
            {"dice": [1, 5], "aside": [1]},
            {"dice": [2]},
        ],
    }
    assert_rejected(game, detail, RuleViolation)


def test_more_throws_than_the_house_rules_allow_are_rejected_for_the_starter():
    game = play(rules(max_throws=2), FOUR, ANNA, [])
    with pytest.raises(MalformedInput):
        game.apply(parse_event(t(ANNA, "2-3-5", 3), game.rules))
    assert game.next_player == ANNA and game.turns == []


def test_a_turn_after_the_game_ended_is_rejected():
    r = rules(deckel=2)
    game = play(
        r,
        [ANNA, BERT],
        ANNA,
        [t(ANNA, "1-1-1"), t(BERT, "2-3-5"), t(BERT, "2-3-5"), t(ANNA, "1-1-1")],
    )
    assert game.loser == BERT and game.blattschuss
    err = assert_rejected(game, t(BERT, "1-1-1"), RuleViolation)
    assert BERT in err.message


def test_an_eliminated_player_throwing_is_rejected():
    game = phase2_three(penalty=1)
    assert_rejected(game, t(ANNA, "1-1-1"), RuleViolation)
    game.apply(parse_event(t(BERT, "2-3-5"), game.rules))
    assert_rejected(game, t(ANNA, "1-1-1"), RuleViolation)


def test_a_penalty_for_an_eliminated_or_unknown_player_is_rejected():
    game = phase2_three(penalty=1)
    assert_rejected(
        game, {"penalty": {"player": ANNA, "reason": "x"}}, RuleViolation
    )  # out of this half: the state
    assert_rejected(game, {"penalty": {"player": "Egon", "reason": "x"}}, MalformedInput)


def test_an_unknown_player_is_rejected():
    game = play(rules(), FOUR, ANNA, [])
    err = assert_rejected(game, t("Egon", "1-1-1"), MalformedInput)
    assert "Egon" in err.message


def test_a_penalty_without_an_amount_under_rules_without_one_is_rejected():
    game = play(rules(), FOUR, ANNA, [])
    assert_rejected(game, {"penalty": {"player": ANNA, "reason": "zu früh"}}, MalformedInput)


def test_blind_where_not_allowed_is_rejected():
    game = play(rules(), FOUR, ANNA, [])
    assert_rejected(game, {**t(ANNA, "1-1-1"), "blind": True}, MalformedInput)


def test_sixes_turning_where_not_allowed_is_rejected():
    game = play(rules(), FOUR, ANNA, [])
    event = {
        "player": ANNA,
        "detail": [{"dice": [6, 6, 1], "aside": [1], "sixes": 1}, {"dice": [3]}],
    }
    assert_rejected(game, event, MalformedInput)


# --------------------------------------------------------------------------- malformed input

MALFORMED = [
    "not an object",
    ["Anna", [1, 1, 1], 1],
    {"player": ANNA, "throws": 1},
    {"dice": [1, 1, 1], "throws": 1},
    {"player": ANNA, "dice": [1, 1, 1]},
    {"player": "", "dice": [1, 1, 1], "throws": 1},
    {"player": 7, "dice": [1, 1, 1], "throws": 1},
    {"player": "A" * 41, "dice": [1, 1, 1], "throws": 1},
    {"player": ANNA, "dice": [1, 1], "throws": 1},
    {"player": ANNA, "dice": [1, 1, 1, 1], "throws": 1},
    {"player": ANNA, "dice": [0, 1, 1], "throws": 1},
    {"player": ANNA, "dice": [1, 1, 7], "throws": 1},
    {"player": ANNA, "dice": [1, 1, "1"], "throws": 1},
    {"player": ANNA, "dice": [1, 1, True], "throws": 1},
    {"player": ANNA, "dice": "1-1-1", "throws": 1},
    {"player": ANNA, "dice": [1, 1, 1], "throws": 0},
    {"player": ANNA, "dice": [1, 1, 1], "throws": "1"},
    {"player": ANNA, "dice": [1, 1, 1], "throws": 1.0},
    {"player": ANNA, "dice": [1, 1, 1], "throws": 1, "hand": "yes"},
    {"player": ANNA, "dice": [1, 1, 1], "throws": 1, "hand": False},
    {"player": ANNA, "dice": [1, 1, 1], "throws": 1, "blind": "no"},
    {"player": ANNA, "dice": [1, 1, 1], "throws": 1, "colour": "red"},
    {"player": ANNA, "detail": []},
    {"player": ANNA, "detail": [[1, 2, 3]]},
    {"player": ANNA, "detail": [{"dice": [1, 2, 3], "sixes": 5}]},
    {"penalty": "Anna"},
    {"penalty": {"player": ANNA, "deckel": 1}},
    {"penalty": {"player": ANNA, "deckel": 1, "reason": ""}},
    {"penalty": {"player": ANNA, "deckel": 0, "reason": "x"}},
    {"penalty": {"player": ANNA, "deckel": "2", "reason": "x"}},
    {"penalty": {"deckel": 1, "reason": "x"}},
    {"penalty": {"player": ANNA, "deckel": 1, "reason": "x", "extra": 1}},
]


@pytest.mark.parametrize("event", MALFORMED, ids=[str(i) for i in range(len(MALFORMED))])
def test_malformed_events_are_rejected_as_malformed_input(event):
    game = play(rules(), FOUR, ANNA, [])
    before = game.outcome()
    with pytest.raises(MalformedInput):
        game.apply(parse_event(event, game.rules))
    assert game.outcome() == before


@pytest.mark.parametrize(
    ("players", "starter"),
    [
        ([ANNA], ANNA),
        ([], ANNA),
        ("Anna,Bert", ANNA),
        ([ANNA, ANNA, BERT], ANNA),
        ([ANNA, BERT], CLARA),
        ([ANNA, ""], ANNA),
        ([f"P{i}" for i in range(21)], "P0"),
    ],
)
def test_a_game_needs_2_to_20_distinct_players_and_a_starter_among_them(players, starter):
    with pytest.raises(MalformedInput):
        Game.start(rules(), players, starter)


def test_invalid_rules_is_a_kind_of_malformed_input():
    with pytest.raises(MalformedInput):
        ruleset_from_config({"preset": "standard", "overrides": {"ties": "coinflip"}})
    assert issubclass(InvalidRules, MalformedInput)


# --------------------------------------------------------------------------- game logs


def log(*events, **overrides):
    return {
        "rules": {"preset": "standard", "overrides": overrides},
        "players": FOUR,
        "starter": ANNA,
        "events": list(events),
    }


def test_a_log_error_names_the_index_of_the_event():
    with pytest.raises(RuleViolation) as err:
        replay_log(log(t(ANNA, "2-3-5"), t(BERT, "1-1-1"), t(DIETER, "1-1-1")))
    assert err.value.message.startswith("event 2: ")
    with pytest.raises(MalformedInput) as err:
        replay_log(log(t(ANNA, "2-3-5"), {"player": BERT, "dice": [9, 9, 9], "throws": 1}))
    assert err.value.message.startswith("event 1: ")


@pytest.mark.parametrize(
    "doc",
    [
        [],
        {"players": FOUR},
        {"starter": ANNA},
        {"players": FOUR, "starter": ANNA, "events": {}},
        {"players": FOUR, "starter": ANNA, "comment": "x"},
        {"players": FOUR, "starter": ANNA, "played_at": "yesterday"},
        {"players": FOUR, "starter": ANNA, "played_at": "2026-11-27T20:15:00"},
        {"players": FOUR, "starter": ANNA, "rules": {"preset": "kneipe"}},
    ],
)
def test_malformed_game_logs_are_rejected(doc):
    with pytest.raises(MalformedInput):
        replay_log(doc)


def test_an_unknown_option_in_a_log_is_invalid_rules_naming_it():
    with pytest.raises(InvalidRules, match="bier"):
        replay_log(log(bier=True))


@pytest.mark.parametrize("value", [0, "", []])
def test_a_summary_with_a_non_boolean_blind_is_malformed(value):
    event = {"player": ANNA, "dice": [1, 2, 3], "throws": 1, "blind": value}
    with pytest.raises(MalformedInput):
        parse_event(event, rules(blind=True))


@pytest.mark.parametrize("value", [0, "", "no", 1])
def test_a_detailed_turn_with_a_non_boolean_blind_is_malformed(value):
    event = {"player": ANNA, "detail": [{"dice": [1, 2, 3]}], "blind": value}
    with pytest.raises(MalformedInput):
        parse_event(event, rules(blind=True))


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        pytest.param(
            [t(ANNA, "2-3-5"), {"player": BERT, "dice": [9, 9, 9], "throws": 1}],
            (MalformedInput, "invalid_dice", "dice", 1,
             "„dice“ muss eine Liste von Augenzahlen 1 bis 6 sein, nicht [9, 9, 9]."),
            id="malformed event 1: pips 9",
        ),
        pytest.param(
            [t(ANNA, "2-3-5"), t(BERT, "1-1-1"), t(DIETER, "1-1-1")],
            (RuleViolation, "turn_not_yours", "player", 2,
             "Dieter ist nicht an der Reihe, sondern Clara."),
            id="rule violation at event 2: out of turn",
        ),
    ],
)  # fmt: skip
def test_a_log_error_keeps_the_kind_code_and_field_of_the_events_error(events, expected):
    """A refused event of a game log is refused as it would be on its own (same kind, code and
    field), its message prefixed with the event's index; the error on its own is its cause."""
    kind, code, field, index, message = expected
    with pytest.raises(kind) as err:
        replay_log(log(*events))
    assert (type(err.value), err.value.code, err.value.field) == (kind, code, field)
    assert err.value.message == f"event {index}: {message}"
    cause = err.value.__cause__
    assert isinstance(cause, kind) and (cause.code, cause.field, cause.message) == (
        code,
        field,
        message,
    )


@pytest.mark.parametrize(
    ("kind", "default_code"),
    [
        (SchockenError, "invalid_input"),
        (MalformedInput, "invalid_input"),
        (InvalidRules, "invalid_rules"),
        (RuleViolation, "rule_violation"),
    ],
)
def test_every_error_has_a_code_its_kinds_default_unless_it_names_one(kind, default_code):
    """Each error has a ``code`` (errors.py, catalogued in api/domain/problems.py): the one it
    was raised with, else its kind's default; ``field`` is the input at fault, if any."""
    plain = kind("Falsch.")
    assert (plain.code, plain.field, plain.message, str(plain)) == (
        default_code,
        None,
        "Falsch.",
        "Falsch.",
    )
    named = kind("Falsch.", field="dice", code="invalid_dice")
    assert (named.code, named.field) == ("invalid_dice", "dice")


@pytest.mark.parametrize("kind", [SchockenError, MalformedInput, InvalidRules, RuleViolation])
def test_an_error_at_an_event_of_a_log_is_the_same_error_with_the_events_index(kind):
    """``at_event``: the same kind, code and field, the message prefixed with the event's
    index; the error itself is its cause."""
    original = kind("Falsch.", field="dice", code="invalid_dice")
    at = original.at_event(4)
    assert (type(at), at.code, at.field, at.message) == (
        kind,
        "invalid_dice",
        "dice",
        "event 4: Falsch.",
    )
    assert at.__cause__ is original
