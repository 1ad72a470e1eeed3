"""The HTTP schemas take option values, presets and limits from the engine: no copy may drift."""

from __future__ import annotations

from enum import StrEnum

import pytest
from marshmallow import fields, validate

from api.rules import MAX_PLAYERS, MIN_PLAYERS, OPTION_NAMES, PRESETS, Ruleset
from api.rules.turns import MAX_NAME
from schemas.games import GameLogSchema, GameStartSchema
from schemas.rules import OverridesSchema, RulesConfigSchema


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
