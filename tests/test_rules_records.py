"""The engine's typed results: frozen values and enums, their JSON shapes made at the edge."""

from __future__ import annotations

import dataclasses
import doctest
import importlib
import json
import pkgutil
import random

import pytest

import api.rules
from api.rules import (
    PRESETS,
    Blattschuss,
    Category,
    DomainEvent,
    EventKind,
    FinaleStarted,
    Game,
    GameAbandoned,
    GameLost,
    GameStarted,
    Half,
    HalfLost,
    Outcome,
    PenaltyGiven,
    Phase,
    PlayerOut,
    RoundLost,
    RoundRecord,
    RoundRepeated,
    ThrowRecorded,
    TurnRecorded,
    Undone,
    parse_event,
    replay_log,
    ruleset_from_config,
)
from api.rules.events import PAYLOADS
from api.rules.simulate import play_turn

ANNA, BERT, CLARA = "Anna", "Bert", "Clara"


def test_a_half_has_one_definition_for_its_outcome_label_and_its_storage_label():
    assert [(h.label, h.value) for h in Half] == [(1, "half1"), (2, "half2"), ("finale", "finale")]
    assert [Half.from_label(h.label) for h in Half] == list(Half)
    assert [h.caption for h in Half] == ["1. Hälfte", "2. Hälfte", "Finale"]
    assert [p.half for p in Phase] == [Half.HALF1, Half.HALF2, Half.FINALE, None]


def test_every_event_kind_has_exactly_one_payload_class_that_names_it():
    assert set(PAYLOADS) == set(EventKind)
    assert all(cls.KIND is kind for kind, cls in PAYLOADS.items())
    event = DomainEvent("Bert ist raus.", PlayerOut(BERT))
    assert event.kind is EventKind.PLAYER_OUT
    assert event.to_json() == {
        "kind": "player_out",
        "message": "Bert ist raus.",
        "data": {"player": BERT},
    }


def random_game(rules, seed: int) -> tuple[Game, list[DomainEvent]]:
    """A random game played to its end; every event it caused."""
    rng = random.Random(seed)
    game = Game.start(rules, [ANNA, BERT, CLARA], ANNA)
    events: list[DomainEvent] = []
    while not game.finished:
        to_beat = min((t.ev.key for t in game.round_turns), default=None)
        player = game.next_player
        assert player is not None
        turn = play_turn(player, game.limit or rules.max_throws, to_beat, rules, rng.random)
        events += game.apply(turn)
    return game, events


@pytest.mark.parametrize("seed", range(6))
def test_every_event_carries_the_payload_of_its_kind_and_serialises_as_json(seed):
    rules = ruleset_from_config({"preset": "standard", "overrides": {"deckel": 4}})
    game, events = random_game(rules, seed)
    assert events[-1].kind is EventKind.GAME_LOST
    for event in events:
        assert type(event.data) is PAYLOADS[event.kind]
        shape = event.to_json()
        assert set(shape) == {"kind", "message", "data"} and shape["kind"] == event.kind.value
        json.dumps(shape)


def test_the_outcome_is_a_frozen_value_whose_json_has_the_keys_of_the_gamelog():
    rules = ruleset_from_config({"preset": "standard", "overrides": {"deckel": 4}})
    game, _ = random_game(rules, 1)
    outcome = game.outcome()
    assert isinstance(outcome, Outcome) and outcome == game.outcome()
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.loser = BERT  # type: ignore[misc]
    shape = outcome.to_json()
    assert set(shape) == {
        "rounds",
        "half_losers",
        "finale",
        "blattschuss",
        "loser",
        "state",
        "penalties",
        "current_round",
    }
    assert set(shape["state"]) == {"phase", "mitte", "stacks", "active", "next_player", "limit"}
    assert shape["state"]["phase"] == "finished" and shape["loser"] == game.loser
    assert json.loads(json.dumps(shape)) == shape  # plain JSON: lists, not tuples
    halves = {r["half"] for r in shape["rounds"]}
    assert halves <= {1, 2, "finale"} and 1 in halves


def test_a_repeated_round_has_no_result_keys_and_a_resolved_round_has_them():
    repeated = RoundRecord(Half.HALF1, ANNA, 2, None, None, 0, None)
    lost = RoundRecord(Half.FINALE, ANNA, 3, ANNA, BERT, 4, "mitte", "Schock 4", "Zahl 632", 4)
    assert repeated.repeated and not lost.repeated
    assert repeated.to_json() == {
        "half": 1,
        "starter": ANNA,
        "limit": 2,
        "best": None,
        "worst": None,
        "deckel": 0,
        "from": None,
        "repeated": True,
    }
    assert lost.to_json() == {
        "half": "finale",
        "starter": ANNA,
        "limit": 3,
        "best": ANNA,
        "worst": BERT,
        "deckel": 4,
        "from": "mitte",
        "repeated": False,
        "best_result": "Schock 4",
        "worst_result": "Zahl 632",
        "value": 4,
    }


def test_turn_facts_are_typed_and_built_once_per_turn():
    game = Game.start(PRESETS["standard"], [ANNA, BERT], ANNA)
    game.apply(play_turn(ANNA, 3, None, game.rules, random.Random(3).random))
    first = game.turns
    assert first[0].half is Half.HALF1 and first[0].player == ANNA
    assert game.turns[0] is first[0]  # not rebuilt
    assert isinstance(first[0].category, Category)
    assert first[0].to_json()["half"] == 1
    assert first[0].to_json()["category"] == first[0].category.value


ENGINE_MODULES = sorted(
    f"api.rules.{m.name}" for m in pkgutil.iter_modules(api.rules.__path__, prefix="")
)


@pytest.mark.parametrize("name", ["api.rules", *ENGINE_MODULES])
def test_the_engine_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0


# The API's event payloads (openapi.yaml, DomainEvent.kind: "Data: …"), one case per kind.
PAYLOAD_SHAPES = [
    (GameStarted(7, (ANNA, BERT), BERT, "import"),
     {"game_id": 7, "players": [ANNA, BERT], "starter": BERT, "source": "import"}),
    (GameAbandoned(7, 3), {"game_id": 7, "number": 3}),
    (TurnRecorded(ANNA, "Schock 4", "1-1-4"), {"player": ANNA, "name": "Schock 4", "dice": "1-1-4"}),
    (ThrowRecorded(ANNA, 1, (6, 6, 3)), {"player": ANNA, "throw": 1, "dice": [6, 6, 3]}),
    (ThrowRecorded(ANNA, 2, (6, 6, 3), (6, 6), 1),
     {"player": ANNA, "throw": 2, "dice": [6, 6, 3], "aside": [6, 6], "sixes": 1}),
    (RoundLost(BERT, 4, "mitte", ANNA, "Schock 4"),
     {"player": BERT, "deckel": 4, "from": "mitte", "best": ANNA, "best_result": "Schock 4"}),
    (RoundRepeated(CLARA), {"starter": CLARA}),
    (PlayerOut(CLARA), {"player": CLARA}),
    (PenaltyGiven(BERT, 1, "zu früh", "mitte"),
     {"player": BERT, "deckel": 1, "from": "mitte", "reason": "zu früh"}),
    (PenaltyGiven(BERT, 0, "zu früh"), {"player": BERT, "deckel": 0, "reason": "zu früh"}),
    (HalfLost(BERT, Half.HALF2, {ANNA: 0, BERT: 13}),
     {"player": BERT, "half": 2, "stacks": {ANNA: 0, BERT: 13}}),
    (FinaleStarted((ANNA, BERT), BERT), {"players": [ANNA, BERT], "starter": BERT}),
    (Blattschuss(BERT), {"player": BERT}),
    (GameLost(BERT, {ANNA: 0, BERT: 13}), {"player": BERT, "stacks": {ANNA: 0, BERT: 13}}),
    (Undone(12, "turn", {"player": ANNA}), {"seq": 12, "kind": "turn", "entry": {"player": ANNA}}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("payload", "data"),
    PAYLOAD_SHAPES,
    ids=[f"{p.KIND.value}-{i}" for i, (p, _) in enumerate(PAYLOAD_SHAPES)],
)
def test_every_event_kind_sends_exactly_the_data_keys_the_api_documents(payload, data):
    """The API's contract for an event's ``data`` (openapi.yaml, "Data: …" for each kind):
    these keys, spelt so, and optional keys (``aside``, ``sixes``, ``from`` of a penalty under
    ``penalty_mode = round_loser``) only when they carry something."""
    event = DomainEvent("…", payload)
    assert event.to_json() == {"kind": payload.KIND.value, "message": "…", "data": data}
    assert json.loads(json.dumps(event.to_json())) == event.to_json()


def finale_game() -> tuple[Game, list[dict[str, object]]]:
    """Two players, 2 Deckel: Bert loses the first half, Anna the second, Bert the Finale."""
    game = Game.start(ruleset_from_config({"preset": "standard", "overrides": {"deckel": 2}}),
                      [ANNA, BERT], ANNA)  # fmt: skip
    schock4 = {"dice": [1, 1, 4], "throws": 1}
    zahl = {"dice": [6, 3, 2], "throws": 1}
    turns = [
        (ANNA, schock4),
        (BERT, zahl),
        (BERT, schock4),
        (ANNA, zahl),
        (ANNA, schock4),
        (BERT, zahl),
    ]
    events = []
    for player, turn in turns:
        events += [
            e.to_json()["data"]
            for e in game.apply(parse_event({"player": player, **turn}, game.rules))
        ]
    return game, events


def test_a_game_decided_in_the_finale_reports_its_halves_finale_and_loser():
    """api/rules/RULES.md §6: the two half losers play the Finale; its loser loses the game. The events
    and the outcome (schemas/GAMELOG.md "The outcome") name them."""
    game, events = finale_game()
    lost = {"player": BERT, "deckel": 2, "from": "mitte", "best": ANNA, "best_result": "Schock 4"}
    assert events[2:4] == [lost, {"player": BERT, "half": 1, "stacks": {ANNA: 0, BERT: 2}}]
    assert events[6:9] == [
        {**lost, "player": ANNA, "best": BERT},
        {"player": ANNA, "half": 2, "stacks": {ANNA: 2, BERT: 0}},
        {"players": [ANNA, BERT], "starter": ANNA},
    ]
    assert events[-1] == {"player": BERT, "stacks": {ANNA: 0, BERT: 2}}
    shape = game.outcome().to_json()
    assert (shape["half_losers"], shape["finale"], shape["loser"]) == (
        [BERT, ANNA],
        [ANNA, BERT],
        BERT,
    )
    assert shape["blattschuss"] is False and shape["state"]["phase"] == "finished"


def test_penalties_and_the_turns_of_the_round_in_progress_have_their_json_keys():
    """The outcome lists every penalty (half, round, player, deckel, from, reason) and the turns
    of the round in progress (what the statistics count of a turn)."""
    log = {"rules": {"preset": "standard"}, "players": [ANNA, BERT, CLARA], "starter": ANNA,
           "events": [{"penalty": {"player": BERT, "deckel": 2, "reason": "zu früh"}},
                      {"player": ANNA, "dice": [2, 2, 2], "throws": 2, "hand": True}]}  # fmt: skip
    shape = replay_log(log).outcome().to_json()
    assert shape["penalties"] == [
        {"half": 1, "round": 0, "player": BERT, "deckel": 2, "from": "mitte", "reason": "zu früh"}
    ]
    [fact] = shape["current_round"]
    assert fact == {
        "half": 1, "round": 0, "order": 0, "player": ANNA, "dice": "2-2-2", "throws": 2,
        "hand": True, "blind": False, "category": "general", "name": "General", "deckel": 3,
        "key": fact["key"],
    }  # fmt: skip
    assert isinstance(fact["key"], int)


def test_a_label_that_names_no_half_is_refused_quoting_it():
    """A half is labelled 1, 2 or "finale" (schemas/GAMELOG.md); anything else names no half."""
    with pytest.raises(ValueError, match="^no half labelled 3$"):
        Half.from_label(3)
    with pytest.raises(ValueError, match="^no half labelled 'half1'$"):
        Half.from_label("half1")
