"""The HTTP schemas take option values, presets and limits from the engine: no copy may drift."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import pytest
from marshmallow import fields, validate

from api.rules import (
    MAX_EVENTS,
    MAX_NAME,
    MAX_PLAYERS,
    MAX_REASON,
    MIN_PLAYERS,
    OPTION_HELP,
    OPTION_LIMITS,
    OPTION_NAMES,
    PRESETS,
    Half,
    Ruleset,
    limits,
)
from schemas.game_state import HALF
from schemas.games import (
    MAX_IMPORT_EVENTS,
    GameLogSchema,
    GameStartSchema,
    PenaltyRequestSchema,
    ThrowDetailSchema,
    TurnRequestSchema,
)
from schemas.rules import EvaluateRequestSchema, OptionSchema, OverridesSchema, RulesConfigSchema


def _one(field: fields.Field, kind: type[validate.Validator]) -> Any:
    (found,) = [v for v in field.validators if isinstance(v, kind)]
    return found


def _range(field: fields.Field) -> tuple[int | None, int | None]:
    found = _one(field, validate.Range)
    return found.min, found.max


def _choices(field: fields.Field) -> tuple[str, ...]:
    if isinstance(field, fields.List):
        field = field.inner
    (one_of,) = [v for v in field.validators if isinstance(v, validate.OneOf)]
    return tuple(one_of.choices)


def test_every_option_of_the_engine_is_a_field_of_the_overrides():
    assert list(OverridesSchema().fields) == list(OPTION_NAMES)


@pytest.mark.parametrize(
    "name", [n for n in OPTION_NAMES if isinstance(getattr(Ruleset(), n), StrEnum)]
)
def test_an_options_values_are_the_engines(name):
    option = type(getattr(Ruleset(), name))
    assert _choices(OverridesSchema().fields[name]) == tuple(v.value for v in option)


@pytest.mark.parametrize("name", ["hand_only", "hand_beats_assembled"])
def test_every_value_of_a_subset_option_is_one_the_engine_accepts(name):
    values = _choices(OverridesSchema().fields[name])
    rules = Ruleset().replace(**{name: list(values)})
    assert rules.options()[name] == list(values)


def test_presets_and_limits_are_the_engines():
    assert _choices(RulesConfigSchema().fields["preset"]) == tuple(PRESETS)
    for schema in (GameStartSchema(), GameLogSchema()):
        players = schema.fields["players"]
        (length,) = [v for v in players.validators if isinstance(v, validate.Length)]
        assert (length.min, length.max) == (MIN_PLAYERS, MAX_PLAYERS)
        (name_length,) = [v for v in players.inner.validators if isinstance(v, validate.Length)]
        assert name_length.max == MAX_NAME


@pytest.mark.parametrize("name", list(OPTION_LIMITS))
def test_the_ranges_of_the_whole_number_options_are_the_engines(name):
    limit = OPTION_LIMITS[name]
    assert _range(OverridesSchema().fields[name]) == (limit.low, limit.high)


def test_the_ranges_of_a_turn_and_a_penalty_are_the_engines():
    turn = TurnRequestSchema().fields
    assert _range(turn["throws"]) == (limits.THROWS.low, limits.THROWS.high)
    assert _one(turn["detail"], validate.Length).max == limits.THROWS.high
    penalty = PenaltyRequestSchema().fields
    assert _range(penalty["deckel"]) == (limits.PENALTY.low, limits.PENALTY.high)
    assert _one(penalty["reason"], validate.Length).max == MAX_REASON
    assert MAX_IMPORT_EVENTS == MAX_EVENTS
    for dice in (ThrowDetailSchema().fields["dice"], EvaluateRequestSchema().fields["dice"]):
        assert isinstance(dice, fields.List)
        assert _range(dice.inner) == (limits.PIPS.low, limits.PIPS.high)


def test_documented_examples_and_half_labels_are_the_engines():
    assert OptionSchema().fields["description"].metadata["example"] == OPTION_HELP["deckel"]
    assert HALF["example"] == Half.HALF1.label
    for half in Half:
        assert repr(half.label).replace("'", "") in HALF["description"].replace("'", "")
