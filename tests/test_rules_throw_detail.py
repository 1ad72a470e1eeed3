"""Throw by throw in detail (api/rules/RULES.md §3, schemas/GAMELOG.md ``detail``): what a client's single
throw may be, what each refusal says (its kind, ``code``, ``field`` and German message), what a
recorded throw reports, and the dice notation and number ranges the engine reads throws with.

Each table row names its rule; the refusals are given word for word (a player reads them).
"""

from __future__ import annotations

import pytest

from api.rules import (
    PRESETS,
    EventKind,
    Game,
    Limit,
    MalformedInput,
    OpenTurn,
    RecordPenalty,
    RecordThrow,
    RecordTurn,
    SchockenError,
    Throw,
    ThrowRecorded,
    limits,
    parse_dice,
    parse_throw,
    record_command,
    record_event,
    record_throw,
)

ANNA, BERT, CLARA = "Anna", "Bert", "Clara"
STD, PARTY = PRESETS["standard"], PRESETS["party"]


def new_game(r=STD) -> Game:
    return Game.start(r, [ANNA, BERT, CLARA], ANNA)


def throw(player: str, *dice: int, aside=(), sixes=0, blind=False, stop=False) -> RecordThrow:
    return RecordThrow(player, dice, tuple(aside), sixes, blind, stop)


def stop(player: str) -> RecordThrow:
    return RecordThrow(player, None, stop=True)


def play(game: Game, *throws: RecordThrow) -> OpenTurn | None:
    open_turn = None
    for t in throws:
        open_turn, _ = record_throw(game, open_turn, t)
    return open_turn


def snapshot(game: Game, open_turn: OpenTurn | None):
    return game.outcome(), list(game.commands), game.next_player, open_turn


def refusal(err: SchockenError) -> tuple[str, str, str | None, str]:
    return type(err).__name__, err.code, err.field, err.message


# --------------------------------------------------------------------------- refused throws

TOO_LATE = (
    "Nach dem letzten erlaubten Wurf (Wurf {n}) darf nichts mehr herausgelegt oder umgedreht "
    "werden."
)
MUST_THROW_AGAIN = "Wurf 1: wer Sechsen umdreht, muss danach noch einmal würfeln."
OPENER_TWO_THROWS = (throw(ANNA, 6, 4, 2), throw(ANNA, 6, 5, 2, stop=True))

REFUSED_THROWS = [
    pytest.param(
        STD, [throw(ANNA, 1, 4, 6, aside=[1])], throw(ANNA, 3, 5, blind=True),
        ("RuleViolation", "turn_open", "blind", "Blind kann nur vor dem ersten Wurf angesagt werden."),
        id="3.4 blind is announced before the first throw, not during the turn",
    ),
    pytest.param(
        STD, [], throw(ANNA, 5, 4, 2, blind=True),
        ("MalformedInput", "house_rule_forbids", "blind",
         "Blind spielen ist nach diesen Hausregeln nicht erlaubt."),
        id="3.4 blind only where the house rules allow it: never right in this game",
    ),
    pytest.param(
        STD, [], stop(ANNA),
        ("RuleViolation", "no_open_turn", "stop",
         "Anna hat keinen offenen Zug, der beendet werden könnte."),
        id="stop ends an open turn: without one there is nothing to stop",
    ),
    pytest.param(
        STD, [throw(ANNA, 6, 4, 2, stop=True)], throw(BERT, 1, 4, 6, aside=[1]),
        ("RuleViolation", "throw_limit_exceeded", "aside", TOO_LATE.format(n=1)),
        id="3.1 nothing set aside on the round's last allowed throw (1)",
    ),
    pytest.param(
        PARTY, [*OPENER_TWO_THROWS, throw(BERT, 6, 4, 2)], throw(BERT, 6, 6, 3, sixes=1),
        ("RuleViolation", "throw_limit_exceeded", "aside", TOO_LATE.format(n=2)),
        id="3.3 no sixes turned on the round's last allowed throw (2)",
    ),
    pytest.param(
        PARTY, [throw(ANNA, 6, 4, 2), throw(ANNA, 6, 5, 2)], throw(ANNA, 6, 6, 3, sixes=1),
        ("RuleViolation", "throw_limit_exceeded", "aside", TOO_LATE.format(n=3)),
        id="3.3 no sixes turned on the opener's third and last throw",
    ),
    pytest.param(
        STD, [throw(ANNA, 1, 4, 6, aside=[1])], throw(ANNA, 1, 5, 2),
        ("RuleViolation", "cup_mismatch", "dice",
         "Wurf 2: im Becher sind 2 Würfel, geworfen wurden aber 3 ([1, 5, 2]). Herausgelegte "
         "Würfel werden nicht noch einmal geworfen."),
        id="3.1 dice set aside stay out: the throw does not fit the cup",
    ),
    pytest.param(
        PARTY, [throw(ANNA, 6, 6, 3, sixes=1)], stop(ANNA),
        ("RuleViolation", "turn_open", "player", MUST_THROW_AGAIN),
        id="3.3 who turned sixes throws again: no stop right after turning",
    ),
    pytest.param(
        PARTY, [throw(ANNA, 6, 6, 3, sixes=1)], throw(BERT, 6, 4, 2),
        ("RuleViolation", "turn_open", "player", MUST_THROW_AGAIN),
        id="3.3 who turned sixes throws again: the next player cannot take the cup yet",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("r", "before", "refused", "expected"), REFUSED_THROWS)
def test_a_refused_throw_says_kind_code_field_and_message(r, before, refused, expected):
    """Each refusal of a throw (api/rules/RULES.md §3) with its code, field and German message; a refused
    throw changes nothing."""
    game = new_game(r)
    open_turn = play(game, *before)
    was = snapshot(game, open_turn)
    with pytest.raises(SchockenError) as err:
        record_throw(game, open_turn, refused)
    assert refusal(err.value) == expected
    assert snapshot(game, open_turn) == was


PENALTY_WHILE_OPEN = (
    "RuleViolation", "turn_open", None,
    "Der Zug von Anna ist noch offen: erst beenden (stop), dann die Strafe eintragen.",
)  # fmt: skip
OWN_TURN_WHILE_OPEN = (
    "RuleViolation", "turn_open", "player",
    "Anna hat noch einen offenen Zug (Wurf für Wurf): erst mit stop beenden oder rückgängig "
    "machen, dann den ganzen Zug eintragen.",
)  # fmt: skip
SIXES_THEN_WHOLE_TURN = ("RuleViolation", "turn_open", "player", MUST_THROW_AGAIN)
PENALTY_EVENT = {"penalty": {"player": BERT, "deckel": 1, "reason": "Würfel vom Tisch"}}

REFUSED_WHILE_OPEN = [
    pytest.param(STD, RecordPenalty(BERT, "Würfel vom Tisch", 1), PENALTY_WHILE_OPEN,
                 id="no penalty while a turn is open (command)"),
    pytest.param(STD, PENALTY_EVENT, PENALTY_WHILE_OPEN,
                 id="no penalty while a turn is open (game-log event)"),
    pytest.param(STD, RecordTurn(ANNA, (3, 2, 1), 1, True), OWN_TURN_WHILE_OPEN,
                 id="no whole turn by the player whose turn is open (command)"),
    pytest.param(STD, {"player": ANNA, "dice": [3, 2, 1], "throws": 1}, OWN_TURN_WHILE_OPEN,
                 id="no whole turn by the player whose turn is open (game-log event)"),
    pytest.param(PARTY, RecordTurn(BERT, (3, 2, 1), 1, True), SIXES_THEN_WHOLE_TURN,
                 id="3.3 after turning sixes the open turn cannot end (command)"),
    pytest.param(PARTY, {"player": BERT, "dice": [3, 2, 1], "throws": 1}, SIXES_THEN_WHOLE_TURN,
                 id="3.3 after turning sixes the open turn cannot end (game-log event)"),
]  # fmt: skip


@pytest.mark.parametrize(("r", "entry", "expected"), REFUSED_WHILE_OPEN)
def test_what_an_open_turn_refuses_says_code_field_and_message(r, entry, expected):
    """While a turn is open (Wurf für Wurf), a penalty and its own player's whole turn are
    refused (409 ``turn_open``), and so is anything that would end a turn that cannot end yet."""
    game = new_game(r.replace(penalty=1))
    first = throw(ANNA, 6, 6, 3, sixes=1) if r is PARTY else throw(ANNA, 6, 4, 2)
    open_turn = play(game, first)
    was = snapshot(game, open_turn)
    record = record_event if isinstance(entry, dict) else record_command
    with pytest.raises(SchockenError) as err:
        record(game, open_turn, entry)
    assert refusal(err.value) == expected
    assert snapshot(game, open_turn) == was


# --------------------------------------------------------------------------- recorded throws


@pytest.mark.parametrize(
    ("recorded", "message"),
    [
        (throw(ANNA, 6, 6, 3, sixes=1), "Anna: Wurf 1 – 3-6-6, dreht Sechsen um."),
        (throw(ANNA, 6, 6, 1, aside=[1], sixes=1),
         "Anna: Wurf 1 – 1-6-6, legt 1 heraus, dreht Sechsen um."),
        (throw(ANNA, 6, 6, 6, sixes=2), "Anna: Wurf 1 – 6-6-6, dreht Sechsen um."),
    ],
)  # fmt: skip
def test_a_throw_that_turns_sixes_says_so_and_reports_how_many(recorded, message):
    """api/rules/RULES.md §3.3: turning sixes is part of the throw's event: its message and its data."""
    _, events = record_throw(new_game(PARTY), None, recorded)
    assert [e.message for e in events] == [message]
    data = ThrowRecorded(ANNA, 1, recorded.dice, recorded.aside, recorded.sixes)
    assert events[0].data == data
    assert events[0].to_json()["data"]["sixes"] == recorded.sixes


def test_a_game_log_event_without_an_open_turn_is_recorded_as_it_is():
    """schemas/GAMELOG.md: a turn summary, a turn in detail and a penalty go to the game unchanged."""
    game = new_game(STD.replace(penalty=1))
    detail = {"player": ANNA, "detail": [{"dice": [1, 4, 6], "aside": [1]}, {"dice": [1, 5]}]}
    open_turn, events = record_event(game, None, detail)
    assert open_turn is None and [e.kind for e in events] == [EventKind.TURN_RECORDED]
    assert game.commands[-1].throws == 2 and sorted(game.commands[-1].dice) == [1, 1, 5]
    open_turn, events = record_event(game, None, {"player": BERT, "dice": [6, 4, 2], "throws": 1})
    assert open_turn is None and game.commands[-1] == RecordTurn(BERT, (6, 4, 2), 1, True)
    open_turn, events = record_event(game, None, PENALTY_EVENT)
    assert [e.kind for e in events] == [EventKind.PENALTY] and game.stacks[BERT] == 1


def test_the_next_players_game_log_event_ends_the_open_turn_first():
    """The next player's whole turn means the open turn's player has stopped: their turn is
    recorded first (with the throws so far), then the event."""
    game = new_game()
    open_turn = play(game, throw(ANNA, 1, 4, 6, aside=[1]), throw(ANNA, 1, 5))
    summary = {"player": BERT, "dice": [3, 2, 1], "throws": 2, "hand": False}
    open_turn, events = record_event(game, open_turn, summary)
    assert open_turn is None
    assert [(e.kind, e.data.player) for e in events] == [
        (EventKind.TURN_RECORDED, ANNA),
        (EventKind.TURN_RECORDED, BERT),
    ]
    assert [c.player for c in game.commands] == [ANNA, BERT] and game.limit == 2
    assert game.next_player == CLARA


def test_an_open_turn_is_written_as_its_player_its_throws_in_detail_and_blind():
    """The API's ``open_turn``: who is throwing, the throws so far as in a turn in detail
    (schemas/GAMELOG.md) and whether blind was announced."""
    open_turn = play(new_game(PARTY), throw(ANNA, 6, 6, 1, aside=[1], sixes=1))
    assert open_turn is not None
    assert open_turn.to_json() == {
        "player": ANNA,
        "throws": [{"dice": [6, 6, 1], "aside": [1], "sixes": 1}],
        "blind": False,
    }
    blind = OpenTurn(BERT, (Throw((5, 4, 2)),), blind=True)
    assert blind.to_json() == {"player": BERT, "throws": [{"dice": [5, 4, 2]}], "blind": True}


# --------------------------------------------------------------------------- a client's throw


@pytest.mark.parametrize(
    ("body", "parsed"),
    [
        pytest.param({"player": ANNA, "dice": [5]}, throw(ANNA, 5),
                     id="3.1 one die left in the cup: a throw of one die"),
        pytest.param({"player": ANNA, "dice": [6, 6, 2], "sixes": 1}, throw(ANNA, 6, 6, 2, sixes=1),
                     id="3.3 two sixes, one turned"),
        pytest.param({"player": ANNA, "dice": [6, 6, 6], "sixes": 2}, throw(ANNA, 6, 6, 6, sixes=2),
                     id="3.3 three sixes, two turned"),
        pytest.param({"player": ANNA, "dice": [6, 4, 1], "stop": True}, throw(ANNA, 6, 4, 1, stop=True),
                     id="stop together with the throw"),
        pytest.param({"player": ANNA, "dice": None, "stop": True}, stop(ANNA),
                     id="stop alone, dice null"),
        pytest.param({"player": ANNA, "dice": [2, 3], "aside": None, "sixes": None},
                     throw(ANNA, 2, 3), id="null aside and sixes: nothing set aside or turned"),
    ],
)  # fmt: skip
def test_a_client_throw_is_read_as_sent(body, parsed):
    """A single throw as a client sends it (1 to 3 dice, sixes 0 to 2, stop with or without
    dice) is read unchanged."""
    assert parse_throw(body) == parsed


def bad_pips(field: str, least: int, value: object) -> str:
    return f"„{field}“ muss eine Liste von {least} bis 3 Augenzahlen 1 bis 6 sein, nicht {value!r}."


NOT_AN_OBJECT = ("invalid_input", None, "Ein Wurf muss ein Objekt sein.")
NO_DICE = ("missing_field", "dice", "Würfel fehlen: ohne Würfel ist nur „stop“ erlaubt.")
MALFORMED_THROWS = [
    pytest.param([ANNA, [1, 2, 3]], NOT_AN_OBJECT, id="a throw is an object, not a list"),
    pytest.param("Anna 1-2-3", NOT_AN_OBJECT, id="a throw is an object, not a text"),
    pytest.param(None, NOT_AN_OBJECT, id="a throw is an object, not null"),
    pytest.param({"player": ANNA, "dice": [1, 2, 3], "hand": True, "colour": "rot"},
                 ("unknown_field", "colour", "Unbekannte Felder in einem Wurf: colour, hand."),
                 id="unknown fields are named, the first one as the field"),
    pytest.param({"dice": [1, 2, 3]}, ("missing_field", "player", "Im Wurf fehlt „player“."),
                 id="a throw names its player"),
    pytest.param({"player": ANNA}, NO_DICE, id="without dice only stop"),
    pytest.param({"player": ANNA, "stop": False}, NO_DICE, id="without dice, stop false"),
    pytest.param({"player": ANNA, "stop": True, "blind": False}, NO_DICE,
                 id="without dice nothing but stop"),
    pytest.param({"player": ANNA, "dice": [0, 1, 1]},
                 ("invalid_dice", "dice", bad_pips("dice", 1, [0, 1, 1])), id="pips 0 is no die"),
    pytest.param({"player": ANNA, "dice": [1, 1, 7]},
                 ("invalid_dice", "dice", bad_pips("dice", 1, [1, 1, 7])), id="pips 7 is no die"),
    pytest.param({"player": ANNA, "dice": [1, 1, 1, 1]},
                 ("invalid_dice", "dice", bad_pips("dice", 1, [1, 1, 1, 1])),
                 id="at most three dice in the cup"),
    pytest.param({"player": ANNA, "dice": []},
                 ("invalid_dice", "dice", bad_pips("dice", 1, [])), id="a throw throws a die"),
    pytest.param({"player": ANNA, "dice": "1-2-3"},
                 ("invalid_dice", "dice", bad_pips("dice", 1, "1-2-3")), id="dice are a list"),
    pytest.param({"player": ANNA, "dice": [1, 2], "aside": [0]},
                 ("invalid_dice", "aside", bad_pips("aside", 0, [0])), id="pips 0 set aside"),
    pytest.param({"player": ANNA, "dice": [1, 2], "aside": [1, 1, 1, 1]},
                 ("invalid_dice", "aside", bad_pips("aside", 0, [1, 1, 1, 1])),
                 id="at most three dice set aside"),
    pytest.param({"player": ANNA, "dice": [6, 6, 1], "sixes": 3},
                 ("invalid_input", "sixes", "„sixes“ muss 0, 1 oder 2 sein, nicht 3."),
                 id="3.3 at most two sixes turned"),
    pytest.param({"player": ANNA, "dice": [6, 6, 1], "sixes": True},
                 ("invalid_input", "sixes", "„sixes“ muss 0, 1 oder 2 sein, nicht True."),
                 id="3.3 sixes is a number, not a flag"),
    pytest.param({"player": ANNA, "dice": [1, 2, 3], "aside": [1], "stop": True},
                 ("invalid_input", "stop", "Wer aufhört, legt nichts heraus und dreht nichts um."),
                 id="3.1 who stops sets nothing aside"),
    pytest.param({"player": ANNA, "dice": [6, 6, 3], "sixes": 1, "stop": True},
                 ("invalid_input", "stop", "Wer aufhört, legt nichts heraus und dreht nichts um."),
                 id="3.3 who stops turns no sixes"),
    pytest.param({"player": ANNA, "dice": [1, 2, 3], "blind": "ja"},
                 ("invalid_input", "blind", "„blind“ muss true oder false sein, nicht 'ja'."),
                 id="blind is true or false"),
    pytest.param({"player": ANNA, "dice": [1, 2, 3], "stop": 1},
                 ("invalid_input", "stop", "„stop“ muss true oder false sein, nicht 1."),
                 id="stop is true or false"),
]  # fmt: skip


@pytest.mark.parametrize(("body", "expected"), MALFORMED_THROWS)
def test_a_malformed_client_throw_says_code_field_and_message(body, expected):
    """A throw that cannot be understood is refused as malformed input (422) with its code,
    the field at fault and a German message quoting it."""
    with pytest.raises(MalformedInput) as err:
        parse_throw(body)
    assert (err.value.code, err.value.field, err.value.message) == expected


# --------------------------------------------------------------------------- notation, ranges


@pytest.mark.parametrize(
    ("text", "dice"),
    [
        ("1-1-4", (4, 1, 1)),
        ("114", (4, 1, 1)),
        ("1 1 4", (4, 1, 1)),
        (" 6 - 5 - 3 ", (6, 5, 3)),
        ("4-6", (6, 4)),
        ("46", (6, 4)),
    ],
)
def test_the_dice_notation_reads_two_or_three_dice_with_or_without_dashes_and_spaces(text, dice):
    """A result written ``1-1-4``, ``114`` or ``1 1 4`` (api/rules/RULES.md §3.5: two dice in the Dortmund
    variant) is read as its pips, highest first."""
    assert parse_dice(text) == dice


@pytest.mark.parametrize(
    "text", ["", "1", "1-1-1-1", "1114", "117", "0-1-1", "1a4", "a", "1-1-x", "١١٤", "1.1.4"]
)
def test_a_text_that_is_not_two_or_three_pips_1_to_6_is_no_dice(text):
    """Only two or three pips 1 to 6 (ASCII digits) are dice: anything else is refused with
    ``invalid_dice`` and a message quoting the text and showing the notation."""
    with pytest.raises(MalformedInput) as err:
        parse_dice(text)
    message = f"„{text}“ sind keine Würfel (erwartet z. B. 1-1-4 oder 114)."
    assert (err.value.code, err.value.field, err.value.message) == ("invalid_dice", None, message)


@pytest.mark.parametrize(
    ("limit", "numbers"),
    [
        (limits.PIPS, [1, 2, 3, 4, 5, 6]),
        (limits.THROWS, [1, 2, 3, 4, 5]),
        (Limit(3, 3), [3]),
        (Limit(4, 3), []),
    ],
)
def test_a_range_lists_every_whole_number_from_low_to_high(limit, numbers):
    """A range of the engine (the pips of a die, the throws of a turn) is inclusive: listing
    it gives every whole number from its low to its high end, as forms offer them."""
    assert list(limit) == numbers
    assert all(n in limit for n in numbers) and limit.low - 1 not in limit
