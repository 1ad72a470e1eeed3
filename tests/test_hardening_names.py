"""Names and reasons (issue 13, item 8): names are stored in NFC, compared after normalization,
case-folding and look-alike letters, refused when invisible, reordering or mixing Latin with
Cyrillic or Greek; reasons refuse control characters. Through the API and the form, on every
store; the text rules themselves are in tests/test_rules_text.py."""

from __future__ import annotations

import re

import pytest
from conftest import PLAYERS
from test_web_pages import (  # noqa: F401  (the form's fixtures)
    Browser,
    add_players,
    create,
    errors_of,
    player_ids,
    start,
    text_of,
)

NFD_JUERGEN = "Ju\u0308rgen"
NFC_JUERGEN = "J\u00fcrgen"


def names(table):
    return [p["name"] for p in table.get("/players", headers=table.auth).json]


# ---------------------------------------------------------------------------------- the API


def test_the_same_name_in_nfc_and_nfd_is_one_player(table):
    assert table.post("/players", {"name": NFD_JUERGEN}).status_code == 201
    r = table.post("/players", {"name": NFC_JUERGEN})
    assert r.status_code == 409 and "gibt es an diesem Stammtisch schon" in r.json["message"]
    assert names(table).count(NFC_JUERGEN) == 1 and NFD_JUERGEN not in names(table)


@pytest.mark.parametrize("name", ["ANNA", " anna ", "\u0410\u043d\u043d\u0430"[:1] + "NNA"])
def test_a_name_equal_by_case_or_look_alike_is_taken(table, name):
    r = table.post("/players", {"name": name})
    assert r.status_code in (409, 422), r.json
    assert names(table) == PLAYERS


@pytest.mark.parametrize("name", ["\u200b", "Bert\u200b", "\u202eartlaK", "\u0410nna"])
def test_invisible_bidi_and_mixed_script_names_are_422(table, name):
    r = table.post("/players", {"name": name})
    assert r.status_code == 422 and r.json["errors"]["json"]["name"], r.json
    assert names(table) == PLAYERS


def test_renaming_follows_the_same_rules_and_keeps_old_names_alone(table):
    bert = table.get("/players", headers=table.auth).json[1]
    r = table.patch(f"/players/{bert['id']}", {"name": "anna"})
    assert r.status_code == 409
    r = table.patch(f"/players/{bert['id']}", {"name": "B\u0435rt"})  # Cyrillic е
    assert r.status_code == 422
    r = table.patch(f"/players/{bert['id']}", {"name": "BERT"})  # his own name, other case
    assert r.status_code == 200 and r.json["name"] == "BERT"


def test_a_turn_may_name_the_player_in_nfd(table):
    table.add_players([NFD_JUERGEN])
    game = table.start(players=["Anna", NFC_JUERGEN], starter="Anna")
    assert table.turn(game, "Anna", [1, 1, 4], 3).status_code == 201
    r = table.turn(game, NFD_JUERGEN, [6, 6, 6], 1)
    assert r.status_code == 201, r.json


def test_a_game_with_a_player_twice_is_422(table):
    r = table.post("/games", {"players": ["Anna", "Bert", "Anna"], "starter": "Anna"})
    assert r.status_code == 422 and "doppelt" in str(r.json["errors"]), r.json


def test_stammtisch_names_follow_the_name_rules(client):
    r = client.post("/api/v1/stammtische", json={"name": "Zur \u202ePost"})
    assert r.status_code == 422 and "Schreibrichtung" in r.json["message"]
    r = client.post("/api/v1/stammtische", json={"name": "Zur  Po\u0308st "})
    assert r.status_code == 201 and r.json["name"] == "Zur Pöst"


@pytest.mark.parametrize("reason", ["zu\nfrüh", "a\x00b", "\x1b[2J"])
def test_penalty_and_undo_reasons_with_control_characters_are_422(table, reason):
    game = table.start()
    r = table.post(f"/games/{game}/penalties", {"player": "Bert", "deckel": 1, "reason": reason})
    assert r.status_code == 422 and r.json["errors"]["json"]["reason"], r.json
    assert table.turn(game, "Anna", [1, 1, 4], 3).status_code == 201
    r = table.post(f"/games/{game}/undo", {"reason": reason})
    assert r.status_code == 422, r.json
    assert table.game(game)["seq"] == 1  # neither the penalty nor the undo was recorded


def test_an_import_with_a_control_character_reason_or_a_look_alike_player_is_refused(table):
    log = {
        "rules": {"preset": "standard"},
        "players": ["Anna", "Bert"],
        "starter": "Anna",
        "events": [{"penalty": {"player": "Bert", "deckel": 1, "reason": "a\nb"}}],
    }
    r = table.post("/imports", log)
    assert r.status_code == 422 and "Zeilenumbrüche" in r.json["message"], r.json
    r = table.post("/imports", {**log, "players": ["Anna", "BERT"], "starter": "Anna",
                                "events": []})  # fmt: skip
    assert r.status_code == 409 and "„Bert“" in r.json["message"], r.json
    assert table.get("/games", headers=table.auth).json["total"] == 0
    assert names(table) == PLAYERS


# --------------------------------------------------------------------------------- the form


@pytest.fixture
def web(app):
    return Browser(app)


def test_the_form_refuses_an_invisible_name_and_a_duplicate_in_nfd(web: Browser, app):
    slug, _ = create(web)
    add_players(web, slug, [NFC_JUERGEN])
    r = web.post(f"/s/{slug}/spieler", {"name": "\u200b"})
    assert r.status_code == 422 and "unsichtbar" in " ".join(errors_of(r, "name"))
    r = web.post(f"/s/{slug}/spieler", {"name": NFD_JUERGEN})
    assert r.status_code == 422 and "schon" in " ".join(errors_of(r, "name"))
    assert list(player_ids(app, slug)) == [NFC_JUERGEN]


def test_the_form_refuses_a_penalty_reason_with_a_control_character(web: Browser, app):
    slug, _ = create(web, preset="nrw")  # house rules with penalties
    add_players(web, slug)
    game = start(web, slug)
    seq = re.search(r'name="seq" value="(\d+)"', web.get(game).text).group(1)
    r = web.post(
        f"{game}/strafe", {"seq": seq, "player": "Bert", "reason": "a\x1bb", "deckel": "1"}
    )
    assert r.status_code == 422 and "Steuerzeichen" in " ".join(errors_of(r, "reason"))
    assert "Strafe für Bert" not in text_of(web.get(game))
