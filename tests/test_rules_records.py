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
    Category,
    DomainEvent,
    EventKind,
    Game,
    Half,
    Outcome,
    Phase,
    PlayerOut,
    RoundRecord,
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
    with pytest.raises(ValueError):
        Half.from_label(3)


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
