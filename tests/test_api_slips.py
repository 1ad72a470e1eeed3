"""Issue 14's small slips of the contract: a new game's answer carries its ETag (so the first
turn can send If-Match at once), and the read-only ``POST /rules/evaluate`` takes no
Idempotency-Key (nothing is stored, nothing replayed)."""

from __future__ import annotations

from pathlib import Path

import yaml
from conftest import PLAYERS

from api.rules import PRESETS
from api.rules.simulate import simulate_logs

ROOT = Path(__file__).resolve().parents[1]


def test_a_started_game_carries_its_etag_and_the_first_turn_can_send_it(table):
    r = table.post("/games", {"players": PLAYERS, "starter": "Anna"})
    assert r.status_code == 201
    assert r.headers["ETag"] == f'"{r.json["seq"]}"' == '"0"'
    turn = {"player": "Anna", "dice": [1, 1, 4], "throws": 2}
    url = f"{table.base}/games/{r.json['id']}/turns"
    ok = table.client.post(url, json=turn, headers={**table.auth, "If-Match": r.headers["ETag"]})
    assert ok.status_code == 201 and ok.headers["ETag"] == '"1"'
    stale = table.client.post(
        url, json={**turn, "player": "Bert"}, headers={**table.auth, "If-Match": '"0"'}
    )
    assert stale.status_code == 412


def test_an_imported_game_carries_its_etag(table):
    log = next(iter(simulate_logs(PRESETS["standard"], 1, players=PLAYERS, seed=2)))
    r = table.post("/imports", log)
    assert r.status_code == 201
    assert r.headers["ETag"] == f'"{r.json["seq"]}"' and r.json["seq"] > 0


def test_evaluate_is_a_computation_without_idempotency_key(client):
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    evaluate = spec["paths"]["/api/v1/rules/evaluate"]["post"]
    names = [p["name"] for p in evaluate.get("parameters", [])]
    assert "Idempotency-Key" not in names
    start = spec["paths"]["/api/v1/stammtische/{slug}/games"]["post"]
    assert "Idempotency-Key" in [p["name"] for p in start["parameters"]]
    assert "ETag" in start["responses"]["201"]["headers"]
    # the same key with another body is no reuse: nothing was stored for it
    url, key = "/api/v1/rules/evaluate", {"Idempotency-Key": "k-1"}
    first = client.post(url, json={"dice": [1, 1, 4]}, headers=key)
    second = client.post(url, json={"dice": [2, 2, 2]}, headers=key)
    assert first.status_code == second.status_code == 200
    assert (first.json["name"], second.json["name"]) == ("Schock 4", "General")
    assert "Idempotent-Replayed" not in second.headers


def test_an_override_equal_to_the_preset_is_left_out_as_documented(table):
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text(encoding="utf-8"))
    text = spec["components"]["schemas"]["RulesConfig"]["properties"]["overrides"]["description"]
    assert "differences only" in text
    r = table.patch(
        "", {"rules": {"preset": "standard", "overrides": {"deckel": 13, "jule": "sieben"}}}
    )
    assert r.status_code == 200
    assert r.json["rules"] == {"preset": "standard", "overrides": {"jule": "sieben"}}
    game = table.game(table.start())
    assert game["rules"]["overrides"] == {"jule": "sieben"} and game["options"]["deckel"] == 13
