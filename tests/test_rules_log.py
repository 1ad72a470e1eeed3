"""Game logs (schemas/GAMELOG.md): reading, writing and replaying a log, its records and its events, exactly as third-party apps depend on them."""

from __future__ import annotations

import json
import os
import time

import pytest

from api.rules import (
    MAX_EVENTS,
    OUT_OF_RANGE,
    MalformedInput,
    RuleViolation,
    parse_event,
    parse_header,
    parse_played_at,
    replay_commands,
    replay_log,
    replay_text,
    to_log,
)

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
HEADER = {"rules": {"preset": "standard"}, "players": PLAYERS, "starter": "Anna"}
EVENTS = [
    {"player": "Anna", "dice": [1, 1, 4], "throws": 3, "hand": False},
    {"player": "Bert", "detail": [{"dice": [3, 4, 2], "aside": [3, 4]}, {"dice": [5]}]},
    {"player": "Clara", "dice": [5, 5, 5], "throws": 1},
    {"player": "Dieter", "dice": [6, 3, 2], "throws": 3, "hand": False},
    {"penalty": {"player": "Bert", "deckel": 1, "reason": "zu frühes Aufdecken"}},
]
LOG = {**HEADER, "played_at": "2026-11-27T20:15:00+01:00", "events": EVENTS}
TOO_LATE = "9999-12-31T23:59:59-12:00"  # in UTC: the year 10000
TOO_EARLY = "0001-01-01T00:00:00+14:00"  # in UTC: the year 0


def log_with(**fields):
    return {**HEADER, **fields}


def without(key):
    return {k: v for k, v in HEADER.items() if k != key}


LOG_REFUSALS = [
    ("a log is a JSON object", ["Anna"], "invalid_input", None,
     "Ein Spielprotokoll muss ein JSON-Objekt sein."),
    ("unknown fields are named, sorted", log_with(zeit=1, anmerkung="x"), "unknown_field", None,
     "Unbekannte Felder im Spielprotokoll: anmerkung, zeit."),
    ("players is required", without("players"), "missing_field", "players",
     "Im Spielprotokoll fehlt „players“."),
    ("starter is required", without("starter"), "missing_field", "starter",
     "Im Spielprotokoll fehlt „starter“."),
    ("events is a list", log_with(events={"player": "Anna"}), "invalid_input", "events",
     "„events“ muss eine Liste sein."),
    ("at most 5,000 events", log_with(events=[{}] * (MAX_EVENTS + 1)), "invalid_input", "events",
     "Zu viele Einträge: höchstens 5000, nicht 5001."),
    ("played_at is a string", log_with(played_at=20261127), "invalid_input", "played_at",
     "„played_at“ muss ein Datum nach ISO 8601 sein."),
    ("played_at is ISO 8601", log_with(played_at="gestern"), "invalid_input", "played_at",
     "„played_at“: 'gestern' ist kein Datum nach ISO 8601 (z. B. 2026-11-27T20:15:00+01:00)."),
    ("played_at has an offset", log_with(played_at="2026-11-27T20:15:00"), "invalid_input",
     "played_at", "„played_at“: '2026-11-27T20:15:00' braucht eine Zeitzone (z. B. +01:00)."),
    ("played_at after the year 9999 in UTC", log_with(played_at=TOO_LATE), "invalid_input",
     "played_at", f"„played_at“: '{TOO_LATE}' liegt außerhalb der Jahre 1 bis 9999 (in UTC gerechnet)."),
    ("played_at before the year 1 in UTC", log_with(played_at=TOO_EARLY), "invalid_input",
     "played_at", f"„played_at“: '{TOO_EARLY}' {OUT_OF_RANGE}"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "doc", "code", "field", "message"), LOG_REFUSALS, ids=[c[0] for c in LOG_REFUSALS]
)
def test_a_malformed_game_log_is_refused_with_its_code_field_and_german_message(
    rule, doc, code, field, message
):
    """schemas/GAMELOG.md: malformed input is an error that names what is wrong; `schocken replay`
    prints the same German sentence as ``{"error": …}``."""
    with pytest.raises(MalformedInput) as refused:
        parse_header(doc)
    assert (refused.value.code, refused.value.field, refused.value.message) == (
        code,
        field,
        message,
    )
    with pytest.raises(MalformedInput) as replayed:
        replay_log(doc)
    assert replayed.value.message == message


def test_a_log_of_exactly_5000_events_is_read_and_one_more_is_refused():
    """The limit of a game log: 5,000 events are accepted (and handed on as they are)."""
    header, events = parse_header(log_with(events=[{}] * MAX_EVENTS))
    assert MAX_EVENTS == 5000 and len(events) == 5000
    assert header.players == tuple(PLAYERS) and header.starter == "Anna"
    with pytest.raises(MalformedInput, match="nicht 5001"):
        parse_header(log_with(events=[{}] * (MAX_EVENTS + 1)))


def test_a_log_without_events_is_a_game_that_has_not_begun():
    """schemas/GAMELOG.md: a log describes a game so far; without events nobody has thrown yet."""
    game = replay_log(HEADER)
    assert list(game.commands) == []
    assert game.next_player == "Anna" and game.state().mitte == 13
    assert to_log(game)["events"] == [] and "played_at" not in to_log(game)


@pytest.mark.parametrize(
    "played_at",
    [None, "0001-01-01T00:00:00+00:00", "9999-12-31T23:59:59+00:00", "2026-11-27T20:15:00+01:00",
     "9999-12-31T23:59:59+14:00", "0001-01-01T00:59:00-00:59"],
)  # fmt: skip
def test_played_at_within_the_years_1_to_9999_in_utc_is_kept_as_given(played_at):
    """schemas/GAMELOG.md: ``played_at`` is optional, ISO 8601 with an offset; it is kept as written."""
    assert parse_played_at(played_at) == played_at
    header, _ = parse_header(log_with(played_at=played_at))
    assert header.played_at == played_at
    assert to_log(replay_log(log_with(played_at=played_at))).get("played_at") == played_at


@pytest.mark.parametrize("zone", ["JST-9", "EST5"])  # POSIX zones: Tokyo, New York
def test_the_range_of_played_at_is_reckoned_in_utc_whatever_the_local_time_zone(zone):
    """The years 1 to 9999 count in UTC ("in UTC gerechnet"), not in the machine's local time:
    the same log is accepted on a server in Tokyo and one in New York."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    try:
        edges = ["9999-12-31T20:00:00+00:00", "0001-01-01T01:00:00+00:00"]
        assert [parse_played_at(value) for value in edges] == edges
        with pytest.raises(MalformedInput):
            parse_played_at(TOO_LATE)
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        time.tzset()


def test_replaying_parsed_commands_gives_the_game_of_the_log():
    """The service layer replays parsed commands (undo, rebuild): the same game as the log."""
    header, events = parse_header(LOG)
    commands = [parse_event(e, header.rules) for e in events]
    game = replay_commands(header, commands)
    assert game.outcome() == replay_log(LOG).outcome()
    assert to_log(game) == to_log(replay_log(LOG))
    assert game.played_at == LOG["played_at"]


def test_a_replayed_command_against_the_rules_is_refused_with_the_index_of_its_event():
    """schemas/GAMELOG.md: anything out of order is rejected with the index of the event."""
    header, events = parse_header(LOG)
    commands = [parse_event(e, header.rules) for e in [*events[:2], events[3]]]
    with pytest.raises(RuleViolation) as refused:
        replay_commands(header, commands)
    assert refused.value.message == "event 2: Dieter ist nicht an der Reihe, sondern Clara."
    assert (refused.value.code, refused.value.field) == ("turn_not_yours", "player")


BLIND = {"preset": "standard", "overrides": {"blind": True}}


def test_an_exported_blind_turn_stays_blind():
    """api/rules/RULES.md §3.4: a blind turn counts double; the exported log must keep ``"blind": true``
    for a summary and for a turn in detail, or its replay would count single."""
    log = {
        "rules": BLIND,
        "players": ["Anna", "Bert"],
        "starter": "Anna",
        "events": [
            {"player": "Anna", "dice": [1, 1, 4], "throws": 1, "blind": True},
            {"player": "Bert", "detail": [{"dice": [6, 5, 3]}], "blind": True},
        ],
    }
    exported = to_log(replay_log(log))
    assert exported["events"] == [
        {"player": "Anna", "dice": [1, 1, 4], "throws": 1, "hand": True, "blind": True},
        {"player": "Bert", "detail": [{"dice": [6, 5, 3]}], "blind": True},
    ]
    assert replay_log(exported).outcome() == replay_log(log).outcome()


def test_replay_text_answers_the_outcome_or_the_german_error():
    """schemas/GAMELOG.md: `schocken replay` prints the outcome, or ``{"error": "event 7: …"}``."""
    assert replay_text(json.dumps(LOG)) == replay_log(LOG).outcome().to_json()
    assert replay_text(json.dumps(log_with(events={}))) == {
        "error": "„events“ muss eine Liste sein."
    }
    assert replay_text("{nope")["error"].startswith("Kein gültiges JSON: ")
