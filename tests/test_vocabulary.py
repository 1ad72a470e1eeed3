"""One source per vocabulary item: event kinds, half and phase captions, limits, dice notation,
form choices and the engine's exports – every copy is derived from the engine, and drifts fail
here (option values and categories: tests/test_schemas_vocabulary.py and
tests/test_dashboard_vocabulary.py)."""

from __future__ import annotations

import ast
import json
import random
import re
from collections.abc import Iterator
from enum import StrEnum
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import PLAYERS, make_table

import api.rules
from api.app import create_app
from api.rules import (
    DICE_PATTERN,
    HAND_BEATS_VALUES,
    HAND_ONLY_VALUES,
    NAMED_SPECIALS,
    OPTION_HELP,
    OPTION_LIMITS,
    OPTION_NAMES,
    PAYLOADS,
    PRESETS,
    Category,
    EventKind,
    Game,
    Half,
    Phase,
    Ruleset,
    evaluation_table,
    format_dice,
    limits,
    parse_dice,
    parse_event,
    simulate_game,
    throws_word,
    to_log,
)
from api.table import views as protocol
from api.web import forms
from schemas.events import EVENT_KINDS, data_keys, meaning

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [
    p
    for package in ("api", "schemas", "dashboard")
    for p in sorted((ROOT / package).rglob("*.py"))
    if "bench" not in p.parts
]


def _spec() -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    return spec


# --------------------------------------------------------------------------- event kinds
def test_the_documented_event_kinds_are_the_engines():
    kind = _spec()["components"]["schemas"]["DomainEvent"]["properties"]["kind"]
    assert kind["enum"] == [k.value for k in EventKind] == list(EVENT_KINDS)
    for k in EventKind:  # each with its meaning and its data keys, read from the payload class
        line = next(x for x in kind["description"].splitlines() if x.startswith(f"- `{k}`:"))
        assert meaning(PAYLOADS[k]) in " ".join(kind["description"].split())
        assert all(f"`{key}`" in line for key in data_keys(PAYLOADS[k]))
    assert "deckel_moved" not in kind["description"]


def test_every_event_kind_has_one_payload_class():
    assert set(PAYLOADS) == set(EventKind)
    assert all(cls.KIND is kind for kind, cls in PAYLOADS.items())


def _games() -> Iterator[Any]:
    """Simulated four-player games (standard rules), the same ones on every run."""
    for seed in range(50):
        yield simulate_game(PRESETS["standard"], PLAYERS, "Anna", random.Random(seed), detail=True)


def _record(table: Any, log: dict[str, Any], extras: bool) -> list[dict[str, Any]]:
    """Record a game over HTTP; with ``extras`` first a penalty and its undo, a repeated round
    (neither changes the state), and the first turn throw by throw. Returns every event the
    API answered with."""
    game = table.start(PLAYERS, "Anna")
    answers = []
    if extras:
        answers.append(
            table.post(
                f"/games/{game}/penalties", {"player": "Bert", "deckel": 1, "reason": "zu früh"}
            )
        )
        answers.append(table.post(f"/games/{game}/undo", {"by": "Anna", "reason": "vertippt"}))
        for player in PLAYERS:  # the same result with as many throws: the round is repeated
            answers.append(table.turn(game, player, [6, 5, 3], 1))
    for i, turn in enumerate(log["events"]):
        if extras and i == 0:
            for k, t in enumerate(turn["detail"]):
                stop = {"stop": True} if k == len(turn["detail"]) - 1 else {}
                body = {"player": turn["player"], **t, **stop}
                answers.append(table.post(f"/games/{game}/throws", body))
        else:
            answers.append(table.post(f"/games/{game}/turns", turn))
    assert [r.json for r in answers if r.status_code != 201] == []
    return [event for r in answers for event in r.json["events"]]


def test_every_event_kind_is_sent_by_the_api_with_its_documented_data():
    app = create_app({"STORAGE": "memory", "TESTING": True, "EVENT_STREAM_SECONDS": 0})
    try:
        table = make_table(app.test_client())
        table.add_players(PLAYERS)
        seen: list[dict[str, Any]] = []
        endings: set[bool] = set()
        for game in _games():
            if game.blattschuss in endings:
                continue
            endings.add(game.blattschuss)
            seen += _record(table, to_log(game), extras=not seen)
            if len(endings) == 2:  # a game with a Blattschuss, one with a Finale
                break
        called_off = table.start(PLAYERS, "Anna")  # game_abandoned: a game called off
        assert table.post(f"/games/{called_off}/abandon").status_code == 200
        # and the live events (game_started and game_abandoned are sent by the stream only)
        stream = table.client.get(f"/api/v1/stammtische/{table.slug}/events?last_event_id=0")
        lines = stream.get_data(as_text=True).splitlines()
        seen += [json.loads(line[6:]) for line in lines if line.startswith("data: ")]
    finally:
        app.extensions["schocken"].store.close()
    assert {e["kind"] for e in seen} == set(EVENT_KINDS)
    for event in seen:
        keys = data_keys(PAYLOADS[EventKind(event["kind"])])
        assert set(event["data"]) <= set(keys), event
        assert {k for k, always in keys.items() if always} <= set(event["data"]), event


# --------------------------------------------------------------------------- halves, phases
def test_half_and_phase_captions_are_the_engines():  # the dashboard's: test_dashboard_vocabulary
    assert [h.caption for h in Half] == ["1. Hälfte", "2. Hälfte", "Finale"]
    assert Phase.FINISHED.caption == "Spiel vorbei"
    assert protocol.PHASE_LABEL == {p.value: p.caption for p in Phase}
    assert all(Phase(h.value).caption == h.caption for h in Half)


def test_the_protocols_sections_are_the_engines_half_captions():
    game = next(g for g in _games() if not g.blattschuss)
    log = to_log(game)
    replay = Game.start(game.rules, list(game.players), log["starter"])
    entries = [
        (seq, replay.apply(parse_event(e, game.rules))) for seq, e in enumerate(log["events"], 1)
    ]
    assert [s.title for s in protocol.protocol(entries)] == [h.caption for h in Half]


# --------------------------------------------------------------------------- limits
def test_every_whole_number_option_has_one_range_the_engine_enforces():
    numbers = {n for n in OPTION_NAMES if type(getattr(PRESETS["wikipedia"], n)) is int}
    assert set(OPTION_LIMITS) == numbers == {"deckel", "max_throws", "penalty"}
    for name, limit in OPTION_LIMITS.items():
        assert Ruleset().replace(**{name: limit.low}).options()[name] == limit.low
        assert Ruleset().replace(**{name: limit.high}).options()[name] == limit.high
        for wrong in (limit.low - 1, limit.high + 1):
            with pytest.raises(api.rules.InvalidRules, match=f"von {limit.low} bis {limit.high}"):
                Ruleset().replace(**{name: wrong})
    assert str(limits.DECKEL) in OPTION_HELP["deckel"]
    assert str(limits.THROWS) in OPTION_HELP["max_throws"]


def test_the_forms_offer_the_engines_ranges():
    assert [v for v, _ in forms.OPTION_CHOICES["max_throws"]] == list(limits.THROWS)
    assert all(n in limits.PENALTY for n, _ in forms.OPTION_CHOICES["penalty"] if n is not None)
    errors = forms.FormErrors()
    forms.parse_overrides({"opt_deckel": "viele"}, errors)
    assert errors.get("opt_deckel") == [
        f"Bitte eine ganze Zahl von {limits.DECKEL.low} bis {limits.DECKEL.high} eintragen."
    ]


# --------------------------------------------------------------------------- form choices
def test_every_option_of_the_form_offers_only_values_the_engine_accepts():
    assert list(forms.OPTION_TITLES) == list(OPTION_NAMES)
    assert set(forms.OPTION_CHOICES) == set(OPTION_NAMES) - {"deckel"}
    for name, choices in forms.OPTION_CHOICES.items():
        for value, _label in choices:
            assert Ruleset().replace(**{name: value}).options()[name] == value, (name, value)


@pytest.mark.parametrize(
    "name", [n for n in OPTION_NAMES if isinstance(getattr(Ruleset(), n), StrEnum)]
)
def test_the_form_offers_every_value_of_an_option_in_the_engines_order(name):
    option = type(getattr(Ruleset(), name))
    assert [v for v, _ in forms.OPTION_CHOICES[name]] == [m.value for m in option]


def test_list_options_offer_every_combination_the_engine_knows():
    for name, values in (
        ("hand_only", HAND_ONLY_VALUES),
        ("hand_beats_assembled", HAND_BEATS_VALUES),
    ):
        offered = [tuple(v) for v, _ in forms.OPTION_CHOICES[name]]
        assert {v for chosen in offered for v in chosen} == set(values)
        assert len(offered) == 2 ** len(values)
    hand_only = dict((tuple(v), label) for v, label in forms.OPTION_CHOICES["hand_only"])
    assert hand_only[("strasse",)] == Category.STRASSE.caption
    named = [v[0] for v, _ in forms.OPTION_CHOICES["specials"] if len(v) == 1]
    assert named == list(NAMED_SPECIALS)
    for value, label in forms.OPTION_CHOICES["specials"]:
        if len(value) == 1:  # "Neuner (2-2-1)": the engine's name and pips
            special = NAMED_SPECIALS[value[0]]
            match = re.fullmatch(r"(\w+) \(([1-6-]+)\)", label)
            assert match, label
            assert (match[1], parse_dice(match[2])) == (special.name, special.pips)


# --------------------------------------------------------------------------- dice notation
def test_the_notation_pattern_matches_every_result_the_engine_writes():
    notations = {
        ev.notation for rules in PRESETS.values() for ev in evaluation_table(rules).values()
    }
    notations |= {ev.notation for ev in evaluation_table(Ruleset().replace(two_dice=True)).values()}
    assert all(re.fullmatch(DICE_PATTERN, n) for n in notations)
    assert not any(re.fullmatch(DICE_PATTERN, n) for n in ("114", "1-1-7", "0-1-1", "1-1-1-1"))


def test_the_documented_notation_fields_are_the_engines():
    schemas = _spec()["components"]["schemas"]
    for schema, prop in (("Evaluation", "dice"), ("TurnFact", "dice")):
        field = schemas[schema]["properties"][prop]
        assert (field["pattern"], field["example"]) == (DICE_PATTERN, format_dice((4, 1, 1)))


def _calls(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "join" and isinstance(node.func.value, ast.Constant):
                if node.func.value.value == "-":
                    yield ast.unparse(node)


def test_dice_are_written_only_by_the_engines_notation():
    found = {
        str(p.relative_to(ROOT)): list(_calls(ast.parse(p.read_text(encoding="utf-8"))))
        for p in SOURCES
    }
    assert {p: c for p, c in found.items() if c} == {
        "api/rules/dice.py": ["'-'.join((str(p) for p in sorted(dice)))"]
    }


def test_a_number_of_throws_is_written_one_way():
    assert [throws_word(n) for n in (1, 2)] == ["1 Wurf", "2 Würfe"]
    sources = [p for p in SOURCES if "rules" not in p.parts]
    copy = re.compile(r'"1 Wurf"|\{[^}]+\} Würfe"')
    assert not [p for p in sources if copy.search(p.read_text(encoding="utf-8"))]


# --------------------------------------------------------------------------- exports
def _engine_imports(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            module = ("." * node.level) + node.module
            if re.fullmatch(r"(api\.|\.+)rules\.\w+", module):
                yield module


def test_outside_the_engine_everything_comes_from_api_rules_itself():
    outside = [p for p in SOURCES if "rules" not in p.parts]
    assert {
        str(p.relative_to(ROOT)): list(_engine_imports(p))
        for p in outside
        if list(_engine_imports(p))
    } == {}
