# ruff: noqa: F811  (the fixtures imported from the other test module)
"""The end of a game in the pub form: undoing the deciding entry is asked first, "Nochmal mit
denselben" lets the loser open; and the icon that ``/docs`` asks the browser for."""

from __future__ import annotations

import re

from flask import Flask
from test_web_pages import (  # noqa: F401  (fixtures)
    Browser,
    app,
    game_state,
    player_ids,
    seq_of,
    table,
    text_of,
    turn,
    web,
)

GAME = [("Anna", "113"), ("Bert", "653"), ("Clara", "542"), ("Dieter", "421")]
GAME += [("Dieter", "113"), ("Anna", "653"), ("Bert", "542"), ("Clara", "421")]
GAME += [("Clara", "653"), ("Dieter", "111")]  # the Finale: Clara loses


def finish(web: Browser, game: str) -> None:
    for player, dice in GAME:
        turn(web, game, player, dice, "1")


def test_undoing_the_deciding_turn_is_asked_first(web: Browser, table: tuple[str, str]) -> None:
    slug, game = table
    finish(web, game)
    decided = game_state(web.app, slug, game)
    assert decided["phase"] == "finished"
    page = web.get(game)
    r = web.post(game + "/rueckgaengig", {"seq": seq_of(page)})
    assert web.posted.status_code == 303
    assert web.posted.headers["Location"] == game + "?rueckgaengig=1#undo"
    assert game_state(web.app, slug, game) == decided  # nothing undone yet
    assert "Das Spiel ist entschieden." in text_of(r)
    assert 'name="bestaetigt" value="1"' in r.text
    assert "Nein, so lassen" in text_of(r)

    r = web.follow(web.post(game + "/rueckgaengig", {"seq": seq_of(r), "bestaetigt": "1"}))
    assert game_state(web.app, slug, game)["phase"] == "finale"
    assert "Rückgängig gemacht: Zug von Dieter (1-1-1)." in text_of(r)
    # a running game's undo is not asked
    r = web.post(game + "/rueckgaengig", {"seq": seq_of(r)})
    assert r.status_code == 302 and r.headers["Location"] == game
    state = game_state(web.app, slug, game)  # both Finale turns undone: Clara opens again
    assert (state["seq"], state["next_player"], state["limit"]) == (len(GAME) + 2, "Clara", None)


def test_again_with_the_same_players_lets_the_loser_open(
    web: Browser, table: tuple[str, str]
) -> None:
    slug, game = table
    finish(web, game)
    game_id = game.rsplit("/", 1)[1]
    page = web.get(f"/s/{slug}/neu?wie={game_id}")
    checked = re.findall(r'value="(\d+)" checked', page.text)
    assert checked == [str(player_ids(web.app, slug)["Clara"])]
    # a running game has no loser yet: the first seat opens
    page = web.get(f"/s/{slug}/neu?sitze={player_ids(web.app, slug)['Bert']}")
    assert re.findall(r'value="(\d+)" checked', page.text) == [
        str(player_ids(web.app, slug)["Bert"])
    ]


def test_the_favicon_every_page_asks_for_is_there(app: Flask) -> None:
    client = app.test_client()
    assert client.get("/docs").status_code == 200
    r = client.get("/favicon.ico")
    assert r.status_code == 200 and r.mimetype == "image/svg+xml"
    assert b"<svg" in r.data[:200]
    r.close()
