"""Inputs that used to crash the server (issue 13, item 4): text with a lone surrogate escape and
dates at the edge of the representable range are 422 with a German message and change nothing,
on SQLite (the HTTP suites' store, tests/conftest.py)."""

from __future__ import annotations

import pytest
from conftest import PLAYERS

from api.rules import MalformedInput, parse_played_at

LONE = '{"name": "A\\ud800B"}'


def _snapshot(table):
    return (
        table.get("/players", headers=table.auth).json,
        table.get("/games", headers=table.auth).json,
    )


def test_a_lone_surrogate_in_a_name_is_422_and_adds_nobody(table):
    before = _snapshot(table)
    r = table.client.post(
        table.base + "/players",
        data=LONE,
        headers={**table.auth, "Content-Type": "application/json"},
    )
    assert r.status_code == 422, r.data
    assert "„name“" in r.json["message"] and "neu eingeben" in r.json["message"]
    assert r.json["errors"]["json"]["name"]
    assert _snapshot(table) == before


def test_a_lone_surrogate_when_creating_a_stammtisch_is_422(app, client):
    r = client.post("/api/v1/stammtische", data=LONE, headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.data
    repo = app.extensions["schocken"].store.repository()
    try:
        assert repo.stammtisch_ids() == []
    finally:
        repo.close()


def test_a_lone_surrogate_in_a_penalty_reason_is_422_and_records_nothing(table):
    game = table.post("/games", {"players": PLAYERS, "starter": "Anna"}).json
    body = '{"penalty": {"player": "Anna", "deckel": 1, "reason": "zu sp\\udfffät"}}'
    r = table.client.post(
        f"{table.base}/games/{game['id']}/penalties",
        data=body,
        headers={**table.auth, "Content-Type": "application/json"},
    )
    assert r.status_code == 422, r.data
    assert "penalty.reason" in r.json["message"]
    assert table.get(f"/games/{game['id']}", headers=table.auth).json["seq"] == game["seq"]


def test_a_surrogate_pair_is_an_ordinary_character(table):
    r = table.client.post(
        table.base + "/players",
        data='{"name": "Anna \\ud83c\\udfb2"}',
        headers={**table.auth, "Content-Type": "application/json"},
    )
    assert r.status_code == 201, r.json
    assert r.json["name"] == "Anna \N{GAME DIE}"


@pytest.mark.parametrize("played_at", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00"])
def test_a_start_at_the_edge_of_the_date_range_is_422(table, played_at):
    r = table.post("/games", {"players": PLAYERS, "starter": "Anna", "played_at": played_at})
    assert r.status_code == 422, r.json
    assert "außerhalb der Jahre 1 bis 9999" in str(r.json["errors"])
    assert table.get("/games", headers=table.auth).json["total"] == 0


@pytest.mark.parametrize("played_at", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00"])
def test_an_import_at_the_edge_of_the_date_range_is_422(table, played_at):
    log = {"played_at": played_at, "players": ["Anna", "Bert"], "starter": "Anna", "events": []}
    r = table.post("/imports", log)
    assert r.status_code in (409, 422), r.json
    assert "außerhalb der Jahre 1 bis 9999" in str(r.json)
    assert table.get("/games", headers=table.auth).json["total"] == 0


def test_the_last_representable_moments_are_accepted_by_the_engine():
    assert parse_played_at("9999-12-31T23:59:59+00:00") == "9999-12-31T23:59:59+00:00"
    assert parse_played_at("0001-01-01T00:00:00-01:00") == "0001-01-01T00:00:00-01:00"
    with pytest.raises(MalformedInput, match="außerhalb"):
        parse_played_at("9999-12-31T23:59:59-00:01")
