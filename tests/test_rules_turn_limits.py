"""Turns (api/rules/RULES.md): the opener's limit, blind turns, turning sixes, and how a refused turn is reported.

A refused event is reported to the player with a stable ``code``, the ``field`` of the event
that is wrong (``detail[1]`` is the second throw of a turn in detail) and a German message that
quotes the offending input (the engine's contract, api/rules/errors.py).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest
from engine_play import rules

from api.rules import PRESETS, MalformedInput, parse_event, throws_word

STD = PRESETS["standard"]  # no sixes turning, no blind, no penalty amount, 3 throws
PARTY = PRESETS["party"]  # sixes turning, otherwise the standard


BLIND = rules(blind=True)
ONES_ONLY = rules(ones_only_aside=True)
ONE_THROW = rules(max_throws=1)
PENALTY_2 = rules(penalty=2)
ROUND_LOSER = rules(penalty_mode="round_loser")


def summary(**fields: Any) -> dict[str, Any]:
    return {"player": "Anna", "dice": [1, 2, 3], "throws": 1, **fields}


def detail(*throws: Any, **fields: Any) -> dict[str, Any]:
    return {"player": "Anna", "detail": list(throws), **fields}


def penalty(**fields: Any) -> dict[str, Any]:
    return {"penalty": {"player": "Anna", "reason": "Würfel verloren", **fields}}


def without(event: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k != key}


NAME_41 = "Bartholomäus-Maximilian von Hohenzollern!"  # 41 characters
AN_ISSUE = "zu frühes Aufdecken " * 10  # 200 characters, the longest reason


def case(rule: str, *values: Any) -> Any:
    """One row of a table, named by the rule it states."""
    return pytest.param(*values, id=rule)


REFUSED_TURN_SUMMARIES = [
    case("an event is an object", [1, 2, 3], STD, "invalid_input", None,
         "Ein Eintrag muss ein Objekt sein."),
    case("a summary knows only its fields", summary(wurf=2, aus="x"), STD, "unknown_field", "aus",
         "Unbekannte Felder in einem Zug: aus, wurf."),
    case("a summary names its player", without(summary(), "player"), STD, "missing_field",
         "player", "Im Zug fehlt „player“."),
    case("a summary has dice", without(summary(), "dice"), STD, "missing_field", "dice",
         "Im Zug fehlt „dice“."),
    case("a summary has throws", without(summary(), "throws"), STD, "missing_field", "throws",
         "Im Zug fehlt „throws“."),
    case("a player has a name", summary(player="  "), STD, "invalid_input", "player",
         "Der Spielername fehlt oder ist leer."),
    case("a name is text", summary(player=7), STD, "invalid_input", "player",
         "Der Spielername fehlt oder ist leer."),
    case("a name has at most 40 characters", summary(player=NAME_41), STD, "invalid_input",
         "player",
         f"Der Spielername „{NAME_41[:40]}…“ ist zu lang (höchstens 40 Zeichen)."),
    case("pips are 1 to 6, not 7", summary(dice=[1, 2, 7]), STD, "invalid_dice", "dice",
         "„dice“ muss eine Liste von Augenzahlen 1 bis 6 sein, nicht [1, 2, 7]."),
    case("pips are 1 to 6, not 0", summary(dice=[0, 2, 3]), STD, "invalid_dice", "dice",
         "„dice“ muss eine Liste von Augenzahlen 1 bis 6 sein, nicht [0, 2, 3]."),
    case("dice are a list", summary(dice="123"), STD, "invalid_dice", "dice",
         "„dice“ muss eine Liste von Augenzahlen 1 bis 6 sein, nicht '123'."),
    case("a summary shows three dice", summary(dice=[1, 2]), STD, "dice_count_wrong", "dice",
         "„dice“ muss genau 3 Würfel enthalten, nicht 2: [1, 2]."),
    case("a summary shows two dice under two_dice", summary(dice=[1, 2, 3]),
         rules(two_dice=True), "dice_count_wrong", "dice",
         "„dice“ muss genau 2 Würfel enthalten, nicht 3: [1, 2, 3]."),
    case("a turn has at least one throw", summary(throws=0), STD, "throws_invalid", "throws",
         "„throws“ muss eine ganze Zahl ab 1 sein, nicht 0."),
    case("throws are a whole number", summary(throws=True), STD, "throws_invalid", "throws",
         "„throws“ muss eine ganze Zahl ab 1 sein, nicht True."),
    case("api/rules/RULES.md §3.1: at most max_throws throws", summary(throws=4, hand=False), STD,
         "throws_over_house_limit", "throws",
         "Nach diesen Hausregeln sind höchstens 3 Würfe erlaubt, nicht 4."),
    case("api/rules/RULES.md §3.1: max_throws 1 allows one throw", summary(throws=2, hand=False), ONE_THROW,
         "throws_over_house_limit", "throws",
         "Nach diesen Hausregeln sind höchstens 1 Wurf erlaubt, nicht 2."),
    case("hand is true or false", summary(hand="ja"), STD, "invalid_input", "hand",
         "„hand“ muss true oder false sein, nicht 'ja'."),
    case("api/rules/RULES.md §3.2: one throw is always from the hand", summary(hand=False), STD,
         "detail_inconsistent", "hand",
         "Ein Ergebnis aus einem einzigen Wurf ist immer aus der Hand (hand darf nicht "
         "false sein)."),
    case("api/rules/RULES.md §3.4: blind only where the house rules allow it", summary(blind=True), STD,
         "house_rule_forbids", "blind", "Blind spielen ist nach diesen Hausregeln nicht erlaubt."),
    case("api/rules/RULES.md §3.4: blind means exactly one throw", summary(throws=2, hand=False, blind=True),
         BLIND, "detail_inconsistent", "blind",
         "Wer blind spielt, hat genau einen Wurf, nicht 2."),
    case("blind is true or false", summary(blind="ja"), BLIND, "invalid_input", "blind",
         "„blind“ muss true oder false sein, nicht 'ja'."),
]  # fmt: skip


REFUSED_TURNS_IN_DETAIL = [
    case("a turn in detail knows only its fields", detail({"dice": [1, 2, 3]}, dice=[1, 2, 3]),
         STD, "unknown_field", "dice", "Unbekannte Felder in einem Zug: dice."),
    case("a turn in detail names its player", {"detail": [{"dice": [1, 2, 3]}]}, STD,
         "missing_field", "player", "Im Zug fehlt „player“."),
    case("a detail is a list of throws", detail() | {"detail": "1-2-3"}, STD, "invalid_input",
         "detail", "„detail“ muss eine nicht leere Liste von Würfen sein."),
    case("a detail has a throw", detail(), STD, "invalid_input", "detail",
         "„detail“ muss eine nicht leere Liste von Würfen sein."),
    case("api/rules/RULES.md §3.1: at most max_throws throws in detail",
         detail({"dice": [2, 3, 4]}, {"dice": [2, 3, 5]}, {"dice": [2, 3, 6]}, {"dice": [2, 3, 6]}),
         STD, "throws_over_house_limit", "detail",
         "Nach diesen Hausregeln sind höchstens 3 Würfe erlaubt, nicht 4."),
    case("a throw is an object", detail({"dice": [1, 2, 3], "aside": [1]}, [2, 3]), STD,
         "invalid_input", "detail[1]", "Wurf 2 muss ein Objekt sein."),
    case("a throw knows only dice, aside and sixes",
         detail({"dice": [1, 2, 3], "aside": [1]}, {"dice": [2, 3], "wurf": 2}), STD,
         "unknown_field", "wurf", "Unbekannte Felder in Wurf 2: wurf."),
    case("a throw has dice", detail({"dice": [1, 2, 3], "aside": [1]}, {"aside": [2]}), STD,
         "missing_field", "detail[1]", "In Wurf 2 fehlen die Würfel („dice“)."),
    case("api/rules/RULES.md §3.1: no throw once every die is aside",
         detail({"dice": [1, 1, 4], "aside": [1, 1, 4]}, {"dice": []}), STD, "dice_count_wrong",
         "detail[1]",
         "Wurf 2: alle Würfel liegen schon heraus, es kann nicht weitergewürfelt werden."),
    case("pips of a throw are 1 to 6, not 0", detail({"dice": [0, 2, 3]}), STD, "invalid_dice",
         "detail[0].dice",
         "„detail[0].dice“ muss eine Liste von Augenzahlen 1 bis 6 sein, nicht [0, 2, 3]."),
    case("pips of a throw are 1 to 6, not 7",
         detail({"dice": [1, 2, 3], "aside": [1]}, {"dice": [7, 2]}), STD, "invalid_dice",
         "detail[1].dice",
         "„detail[1].dice“ muss eine Liste von Augenzahlen 1 bis 6 sein, nicht [7, 2]."),
    case("api/rules/RULES.md §3.1: set-aside dice are never thrown again",
         detail({"dice": [1, 4, 6], "aside": [1]}, {"dice": [1, 2, 3]}), STD,
         "dice_count_wrong", "detail[1]",
         "Wurf 2: im Becher sind 2 Würfel, geworfen wurden aber 3 ([1, 2, 3]). "
         "Herausgelegte Würfel werden nicht noch einmal geworfen."),
    case("api/rules/RULES.md §3.1: the first throw throws every die", detail({"dice": [1, 4]}), STD,
         "dice_count_wrong", "detail[0]",
         "Wurf 1: im Becher sind 3 Würfel, geworfen wurden aber 2 ([1, 4]). "
         "Herausgelegte Würfel werden nicht noch einmal geworfen."),
    case("set-aside pips are 1 to 6", detail({"dice": [1, 2, 3], "aside": [7]}, {"dice": [1]}),
         STD, "invalid_dice", "detail[0].aside",
         "„detail[0].aside“ muss eine Liste von Augenzahlen 1 bis 6 sein, nicht [7]."),
    case("api/rules/RULES.md §3.1: only dice of the throw can be set aside",
         detail({"dice": [1, 4, 6], "aside": [2]}, {"dice": [3, 3]}), STD,
         "detail_inconsistent", "detail[0]",
         "Wurf 1: 2 kann nicht herausgelegt werden, der Wurf zeigt [1, 4, 6]."),
    case("api/rules/RULES.md §3.1: ones_only_aside sets aside only ones",
         detail({"dice": [1, 4, 6]}, {"dice": [1, 4, 6], "aside": [1, 6]}, {"dice": [1]}),
         ONES_ONLY, "house_rule_forbids", "detail[1]",
         "Wurf 2: nach diesen Hausregeln dürfen nur Einsen herausgelegt werden."),
    case("api/rules/RULES.md §3.4: a blind detail has exactly one throw",
         detail({"dice": [1, 2, 3], "aside": [1]}, {"dice": [4, 4]}, blind=True), BLIND,
         "detail_inconsistent", "blind", "Wer blind spielt, hat genau einen Wurf, nicht 2."),
    case("api/rules/RULES.md §3.4: no blind detail where the house rules forbid it",
         detail({"dice": [1, 2, 3]}, blind=True), STD, "house_rule_forbids", "blind",
         "Blind spielen ist nach diesen Hausregeln nicht erlaubt."),
    case("blind of a detail is true or false", detail({"dice": [1, 2, 3]}, blind=1), BLIND,
         "invalid_input", "blind", "„blind“ muss true oder false sein, nicht 1."),
]  # fmt: skip


REFUSED_SIXES_TURNING = [
    case("sixes is 0, 1 or 2, not 3", detail({"dice": [6, 6, 6], "sixes": 3}, {"dice": [1]}),
         PARTY, "invalid_input", "detail[0]", "Wurf 1: „sixes“ muss 0, 1 oder 2 sein, nicht 3."),
    case("sixes is a number, not true",
         detail({"dice": [1, 2, 3]}, {"dice": [6, 6, 1], "sixes": True}, {"dice": [1, 1]}),
         PARTY, "invalid_input", "detail[1]",
         "Wurf 2: „sixes“ muss 0, 1 oder 2 sein, nicht True."),
    case("sixes is a number, not text", detail({"dice": [6, 6, 1], "sixes": "1"}), PARTY,
         "invalid_input", "detail[0]", "Wurf 1: „sixes“ muss 0, 1 oder 2 sein, nicht '1'."),
    case("api/rules/RULES.md §3.3: sixes turning only where the house rules allow it",
         detail({"dice": [1, 2, 3]}, {"dice": [1, 6, 6], "sixes": 1}, {"dice": [1]}), STD,
         "house_rule_forbids", "detail[1]",
         "Sechsen umdrehen ist nach diesen Hausregeln nicht erlaubt."),
    case("api/rules/RULES.md §3.3: one one needs two sixes",
         detail({"dice": [1, 2, 3]}, {"dice": [1, 6, 5], "sixes": 1}, {"dice": [1, 1]}), PARTY,
         "detail_inconsistent", "detail[1]",
         "Wurf 2: um eine Eins zu bekommen, braucht der Wurf 2 Sechsen, er zeigt 1."),
    case("api/rules/RULES.md §3.3: two ones need three sixes",
         detail({"dice": [1, 6, 6], "sixes": 2}, {"dice": [3]}), PARTY, "detail_inconsistent",
         "detail[0]",
         "Wurf 1: um zwei Einsen zu bekommen, braucht der Wurf 3 Sechsen, er zeigt 2."),
    case("api/rules/RULES.md §3.3: turning obliges a further throw",
         detail({"dice": [1, 2, 3]}, {"dice": [1, 6, 6], "aside": [1], "sixes": 1}), PARTY,
         "detail_inconsistent", "detail[1]",
         "Wurf 2: wer Sechsen umdreht, muss danach noch einmal würfeln."),
    case("api/rules/RULES.md §3.3: the six that goes back cannot be set aside",
         detail({"dice": [6, 6, 3], "aside": [6], "sixes": 1}, {"dice": [5]}), PARTY,
         "detail_inconsistent", "detail[0]",
         "Wurf 1: 6 kann nicht herausgelegt werden, der Wurf zeigt [6, 6, 3]."),
]  # fmt: skip


REFUSED_PENALTIES = [
    case("a penalty event holds only the penalty", penalty() | {"grund": "x"}, PENALTY_2,
         "unknown_field", "grund", "Unbekannte Felder in einer Strafe: grund."),
    case("a penalty is an object", {"penalty": "Anna"}, PENALTY_2, "invalid_input", "penalty",
         "„penalty“ muss ein Objekt sein."),
    case("a penalty knows only player, deckel and reason", penalty(wann=1), PENALTY_2,
         "unknown_field", "wann", "Unbekannte Felder in einer Strafe: wann."),
    case("api/rules/RULES.md §7: a penalty names its player", {"penalty": {"reason": "x"}}, PENALTY_2,
         "missing_field", "player", "In der Strafe fehlt der Spieler („player“)."),
    case("api/rules/RULES.md §7: a penalty is recorded with its reason", penalty(reason=" "), PENALTY_2,
         "invalid_input", "reason", "Eine Strafe braucht einen Grund (1–200 Zeichen)."),
    case("a reason has at most 200 characters", penalty(reason=AN_ISSUE + "!"), PENALTY_2,
         "invalid_input", "reason", "Eine Strafe braucht einen Grund (1–200 Zeichen)."),
    case("api/rules/RULES.md §7: under round_loser there are no Strafdeckel", penalty(deckel=1), ROUND_LOSER,
         "house_rule_forbids", "deckel",
         "Nach diesen Hausregeln verliert der Sünder die Runde; Strafdeckel gibt es nicht."),
    case("api/rules/RULES.md §7: without a penalty amount the penalty says how many", penalty(), STD,
         "missing_field", "deckel",
         "Die Hausregeln legen keine Zahl von Strafdeckeln fest: bitte angeben, wie viele."),
    case("a penalty is at least 1 Deckel", penalty(deckel=0), STD, "invalid_input", "deckel",
         "„deckel“ muss eine ganze Zahl von 1 bis 99 sein, nicht 0."),
    case("a penalty is at most 99 Deckel", penalty(deckel=100), STD, "invalid_input", "deckel",
         "„deckel“ muss eine ganze Zahl von 1 bis 99 sein, nicht 100."),
    case("Deckel are a whole number", penalty(deckel=True), STD, "invalid_input", "deckel",
         "„deckel“ muss eine ganze Zahl von 1 bis 99 sein, nicht True."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("event", "ruleset", "code", "field", "message"),
    REFUSED_TURN_SUMMARIES + REFUSED_TURNS_IN_DETAIL + REFUSED_SIXES_TURNING + REFUSED_PENALTIES,
)
def test_a_refused_event_names_its_code_field_and_german_message(
    event, ruleset, code, field, message
):
    """Each refusal of schemas/GAMELOG.md / api/rules/RULES.md §3 and 7 tells the player what is wrong
    where: the stable code, the event's field and the German message quoting the input."""
    with pytest.raises(MalformedInput) as caught:
        parse_event(event, ruleset)
    err = caught.value
    assert (err.code, err.field, err.message) == (code, field, message)


ACCEPTED_BOUNDARIES = [
    case("a name of 40 characters", summary(player=NAME_41[:40]), STD, "player", NAME_41[:40]),
    case("an explicit sixes 0 turns nothing", detail({"dice": [6, 6, 1], "sixes": 0}), PARTY,
         "dice", (6, 6, 1)),
    case("blind false is a normal turn", summary(throws=2, hand=False, blind=False), STD,
         "blind", False),
    case("blind null is a normal turn", summary(throws=2, hand=False, blind=None), STD,
         "blind", False),
    case("hand null means from the hand after one throw", summary(hand=None), STD, "hand", True),
    case("a reason of 200 characters", penalty(reason=AN_ISSUE, deckel=1), STD, "reason",
         AN_ISSUE),
    case("a penalty of 1 Deckel", penalty(deckel=1), STD, "deckel", 1),
    case("a penalty of 99 Deckel", penalty(deckel=99), STD, "deckel", 99),
    case("schemas/GAMELOG.md: deckel missing means the ruleset's amount", penalty(), PENALTY_2, "deckel",
         None),
    case("api/rules/RULES.md §7: round_loser takes a penalty without Deckel", penalty(), ROUND_LOSER,
         "deckel", None),
]  # fmt: skip


@pytest.mark.parametrize(("event", "ruleset", "attribute", "value"), ACCEPTED_BOUNDARIES)
def test_the_limits_of_an_event_are_accepted(event, ruleset, attribute, value):
    """The last value a rule allows is taken as it is (names ≤ 40, reasons ≤ 200 characters,
    1–99 Strafdeckel, sixes 0, blind and hand false or null)."""
    assert getattr(parse_event(event, ruleset), attribute) == value


EXPORTED_EVENTS = [
    case("a summary", {"player": "Anna", "dice": [1, 1, 4], "throws": 3, "hand": False}, STD),
    case("api/rules/RULES.md §3.4: a blind summary stays blind",
         {"player": "Anna", "dice": [2, 2, 5], "throws": 1, "hand": True, "blind": True}, BLIND),
    case("api/rules/RULES.md §3.4: a blind detail stays blind",
         {"player": "Anna", "detail": [{"dice": [2, 2, 5]}], "blind": True}, BLIND),
    case("api/rules/RULES.md §3.3: a detail keeps aside and sixes",
         {"player": "Anna", "detail": [{"dice": [1, 6, 6], "aside": [1], "sixes": 1},
                                       {"dice": [3]}]}, PARTY),
    case("a penalty with its Deckel", penalty(deckel=3), STD),
    case("a penalty of the ruleset's amount", penalty(), PENALTY_2),
]  # fmt: skip


@pytest.mark.parametrize(("event", "ruleset"), EXPORTED_EVENTS)
def test_an_exported_event_is_the_event_that_was_recorded(event, ruleset):
    """schemas/GAMELOG.md: a recorded turn or penalty is written back as the same game-log event, so an
    exported log replays to the same game (``"blind": true`` included)."""
    assert parse_event(event, ruleset).to_json() == event


@pytest.mark.parametrize(("event", "ruleset"), EXPORTED_EVENTS)
def test_an_event_may_be_any_mapping(event, ruleset):
    """schemas/GAMELOG.md: an event is a JSON object; any read-only mapping of it is read the same way."""
    assert parse_event(MappingProxyType(event), ruleset) == parse_event(event, ruleset)


@pytest.mark.parametrize(
    ("n", "words"), [(1, "1 Wurf"), (2, "2 Würfe"), (3, "3 Würfe"), (5, "5 Würfe")]
)
def test_throws_word_counts_throws_in_german(n, words):
    """The limit of a round in words: one Wurf, several Würfe."""
    assert throws_word(n) == words
