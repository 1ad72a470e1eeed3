# ruff: noqa: F811  (the fixtures imported from the other test module)
"""Calling a game off ("Spiel abbrechen"): kept and shown as "abgebrochen", no more entries,
out of the statistics (also after a rebuild); the API reads it as ``abandoned``."""

from __future__ import annotations

import pytest
from flask import Flask
from test_web_game_end import GAME  # a whole game: Clara loses the Finale
from test_web_pages import (  # noqa: F401  (fixtures)
    Browser,
    app,
    errors_of,
    game_state,
    seq_of,
    table,
    text_of,
    turn,
    web,
)

from api.http.context import services


def facts(app: Flask, game_id: int) -> dict[str, int]:
    with app.app_context():
        rows = services().repo.read_facts(game_id)
    return {table: len(r) for table, r in rows.items() if table != "game_facts"}


def game_id_of(game: str) -> int:
    return int(game.rsplit("/", 1)[1])


def test_a_game_called_off_is_kept_takes_nothing_and_leaves_the_statistics(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    for player, dice in GAME[:5]:
        turn(web, game, player, dice, "1")
    assert facts(app, game_id_of(game))["turn_facts"] == 5
    r = web.follow(web.post(game + "/abbrechen", {}))
    assert "Spiel abgebrochen: es zählt nicht in der Statistik." in text_of(r)
    assert 'id="eingabe"' not in r.text and 'id="undo"' not in r.text
    assert "abgebrochen" in r.text and "Dieses Spiel wurde abgebrochen" in text_of(r)
    assert all(n == 0 for n in facts(app, game_id_of(game)).values())
    history = text_of(web.get(f"/s/{slug}/spiele"))
    assert "abgebrochen" in history
    assert "Weiterspielen" not in text_of(web.get(f"/s/{slug}/"))  # not among the running

    # no more entries, from the form or the API
    before = game_state(app, slug, game)
    data = {"seq": before["seq"], "player": "Dieter", "throws": "1", "wurf": "421"}
    r = web.post(game + "/zug", data)
    assert r.status_code == 409 and "wurde abgebrochen" in " ".join(errors_of(r, "form"))
    r = web.post(game + "/rueckgaengig", {"seq": before["seq"]})
    assert r.status_code == 409
    assert game_state(app, slug, game)["seq"] == before["seq"]
    r = web.post(game + "/abbrechen", {})
    assert r.status_code == 409 and "wurde abgebrochen" in " ".join(errors_of(r, "abandon"))

    # a rebuild of every game's facts leaves it out
    with app.app_context():
        services().rebuild()
    assert all(n == 0 for n in facts(app, game_id_of(game)).values())


def test_the_api_reads_a_game_called_off_as_abandoned(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    web.post(game + "/abbrechen", {})
    client = app.test_client()
    r = client.get(f"/api/v1/stammtische/{slug}/games/{game_id_of(game)}")
    assert r.json["status"] == "abandoned" and r.json["number"] == 1
    listed = client.get(f"/api/v1/stammtische/{slug}/games?status=running").json
    assert listed["total"] == 0


def test_a_decided_game_cannot_be_called_off(web: Browser, table: tuple[str, str]) -> None:
    slug, game = table
    for player, dice in GAME:
        turn(web, game, player, dice, "1")
    r = web.post(game + "/abbrechen", {})
    assert r.status_code == 409
    assert "schon entschieden" in text_of(r)
    assert game_state(web.app, slug, game)["phase"] == "finished"


@pytest.mark.parametrize("seq", ["0"])
def test_the_form_offers_calling_off_a_running_game_only(
    web: Browser, table: tuple[str, str], seq: str
) -> None:
    slug, game = table
    page = web.get(game)
    assert 'id="abbrechen"' in page.text and seq_of(page) == seq
