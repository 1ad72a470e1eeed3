"""POST /api/v1/rules/odds (api/rules/RULES.md §12): the odds of every decision after a throw,
for third-party apps; no token, limited per client address; a position that cannot be is a
422 problem with a German ``detail``, and nothing is computed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

from api.app import create_app
from api.resources.rules import ODDS_EXAMPLE

URL = "/api/v1/rules/odds"
EXAMPLE = ODDS_EXAMPLE  # the issue's example, as openapi.yaml documents it


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app({"STORAGE": "memory", "TESTING": True, "WRITE_RATE_BURST": 1_000_000})


@pytest.fixture
def client(app: Flask) -> Any:
    return app.test_client()


def test_the_issue_example_answers_every_decision_with_its_exact_chances(client: Any) -> None:
    r = client.post(URL, json=EXAMPLE)
    assert r.status_code == 200, r.json
    assert r.json["best"] == 1
    stop, again = r.json["decisions"]
    assert stop == {"stop": True, "aside": [], "sixes": 0, "p_beat": 0.0, "p_tie": 0.0}
    assert again["stop"] is False and again["aside"] == [] and again["sixes"] == 0
    assert abs(again["p_beat"] - 1 / 3) < 1e-9 and again["p_tie"] == 0.0


def test_the_rules_and_the_aside_default_to_standard_and_nothing(client: Any) -> None:
    body = {"dice": [1, 1, 4], "throws": 1, "limit": 3, "target": {"dice": [1, 1, 6], "throws": 1}}
    r = client.post(URL, json=body)
    assert r.status_code == 200, r.json
    listed = [(d["stop"], d["aside"]) for d in r.json["decisions"]]
    assert listed == [
        (True, []),
        (False, []),
        (False, [1]),
        (False, [4]),
        (False, [1, 1]),
        (False, [1, 4]),
    ]
    # 1-1 aside, two throws for the third 1: 11/36 (Schock 6 in one throw ties nothing)
    assert abs(r.json["decisions"][4]["p_beat"] - 11 / 36) < 1e-9
    assert r.json["best"] == 4


def test_turned_sixes_are_decisions_under_sixes_turning(client: Any) -> None:
    body = {**EXAMPLE, "aside": [], "dice": [6, 6, 3], "throws": 1, "rules": {"preset": "bvb"}}
    r = client.post(URL, json=body)
    assert r.status_code == 200, r.json
    assert {(d["sixes"], tuple(d["aside"])) for d in r.json["decisions"] if d["sixes"]} == {
        (1, ()),
        (1, (3,)),
    }


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"dice": [7]}, "Muss mindestens 1 und höchstens 6 sein."),
        ({"dice": [0]}, "Muss mindestens 1 und höchstens 6 sein."),
        ({"dice": [4, 5]}, "„dice“: mit 2 herausgelegten Würfeln sind 1 im Becher"),
        ({"aside": [1, 1, 1], "dice": [4]}, "Länge"),
        ({"throws": 4}, "„throws“ muss zwischen 1 und dem Wurflimit 3 liegen, nicht 4."),
        ({"throws": 1}, "„aside“: im ersten Wurf eines Zuges liegt noch nichts heraus."),
        ({"limit": 5}, "höchstens 3 Würfe erlaubt, nicht 5"),
        ({"target": {"dice": [1, 5], "throws": 2}}, "ein Ergebnis hat 3 Würfel, nicht 2"),
        ({"target": {"dice": [1, 1, 5], "throws": 3}, "limit": 2}, "„target.throws“"),
        ({"rules": {"preset": "standard", "overrides": {"zauber": 1}}}, "Unbekanntes Feld."),
        (
            {"rules": {"overrides": {"ones_only_aside": True}}, "aside": [1, 4], "dice": [1]},
            "nur Einsen herausgelegt",
        ),
        ({"wurf": 1}, "Unbekanntes Feld."),
    ],
)
def test_a_position_that_cannot_be_is_a_422_problem_in_german(
    client: Any, change: dict[str, Any], says: str
) -> None:
    r = client.post(URL, json={**EXAMPLE, **change})
    assert r.status_code == 422, r.json
    assert r.content_type == "application/problem+json"
    assert "decisions" not in r.json
    assert says in r.json["detail"] + json.dumps(r.json.get("errors", {}), ensure_ascii=False)


def test_odds_need_no_token_and_are_limited_per_address() -> None:
    client = create_app(
        {"STORAGE": "memory", "TESTING": True, "WRITE_RATE_PER_MINUTE": 60, "WRITE_RATE_BURST": 2}
    ).test_client()
    answers = [client.post(URL, json=EXAMPLE) for _ in range(3)]
    assert [a.status_code for a in answers[:2]] == [200, 200]
    assert answers[2].status_code == 429 and int(answers[2].headers["Retry-After"]) >= 1
