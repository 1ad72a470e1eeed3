"""The pub TV page ``/tv/<slug>`` through the Flask test client: the board as the server
renders it in every phase of a game, between games, and who may see it.

The live updates in Chromium are ``test_web_tv_browser.py``.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from typing import Any

import pytest
from conftest import STORES, Table, app_on, make_table
from flask import Flask
from test_web_pages import Browser, create, text_of

from api.http.context import services
from api.http.headers import STRICT_CSP
from dashboard.readmodel import refresh

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
RULES = {"preset": "standard", "overrides": {"deckel": 3}}
# 3 Deckel: Dieter takes all of them in Hälfte 1, Anna in Hälfte 2; in the Finale Anna's
# Schock aus gives Dieter every Deckel: Dieter loses the game
HALF1 = [("Anna", "113"), ("Bert", "653"), ("Clara", "542"), ("Dieter", "421")]
HALF2 = [("Dieter", "113"), ("Anna", "421"), ("Bert", "653"), ("Clara", "542")]
FINALE = [("Anna", "111"), ("Dieter", "654")]


@pytest.fixture
def app(tmp_path: Any, request: pytest.FixtureRequest) -> Any:
    store = getattr(request, "param", "memory")
    yield from app_on(store, tmp_path, request, SECRET_KEY="t" * 40)


def play(t: Table, game: int, turns: list[tuple[str, str]]) -> None:
    for player, dice in turns:
        r = t.turn(game, player, [int(d) for d in dice], 1)
        assert r.status_code in (200, 201), r.json


def tv(app: Flask, slug: str, path: str = "") -> Any:
    return app.test_client().get(f"/tv/{slug}{path}")


def rows(r: Any) -> list[dict[str, Any]]:
    """The players on the board, in order: name, Deckel, pictograms, classes, tags."""
    found = []
    for m in re.finditer(
        r'<li class="player([^"]*)" data-player="([^"]+)"(.*?)</li>', r.text, re.S
    ):
        classes, name, inner = m.group(1).split(), html.unescape(m.group(2)), m.group(3)
        deckel = re.search(r'<span class="num">(\d+)</span>', inner)
        tags = re.findall(r'<span class="tag [^"]+">([^<]+)</span>', inner)
        found.append(
            {
                "name": name,
                "deckel": int(deckel.group(1)) if deckel else None,
                "dots": inner.count('<i class="d"></i>'),
                "classes": classes,
                "tags": [html.unescape(t) for t in tags],
            }
        )
    return found


class _Text(HTMLParser):
    """The text inside the element with a given id (nested elements included)."""

    VOID = frozenset({"br", "img", "input", "meta", "link", "hr"})

    def __init__(self, element_id: str) -> None:
        super().__init__()
        self.element_id = element_id
        self.depth = 0
        self.found = False
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.VOID:
            return
        if self.depth:
            self.depth += 1
        elif ("id", self.element_id) in attrs:
            self.depth, self.found = 1, True

    def handle_endtag(self, tag: str) -> None:
        if self.depth and tag not in self.VOID:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.parts.append(data)


def by_id(r: Any, element_id: str) -> str:
    """The visible text of the element with ``id``, whitespace collapsed."""
    parser = _Text(element_id)
    parser.feed(r.text)
    assert parser.found, f"no #{element_id}"
    return " ".join(" ".join(parser.parts).split())


def recent(r: Any) -> list[str]:
    block = re.search(r'<section class="recent".*?</section>', r.text, re.S)
    assert block
    return [html.unescape(m) for m in re.findall(r"<li[^>]*>([^<]+)</li>", block.group(0))]


def screen(r: Any) -> dict[str, str]:
    tag = re.search(r'<div class="screen[^"]*" id="screen"([^>]*)>', r.text)
    assert tag
    return dict(re.findall(r'data-(\w+)="([^"]*)"', tag.group(1)))


# ----------------------------------------------------------------------------- between games


def test_without_a_game_the_tv_waits_for_the_next(app: Flask, table: Table) -> None:
    refresh(app.extensions["schocken"].store.repository())  # the refresher's first round
    r = tv(app, table.slug)
    assert r.status_code == 200
    text = text_of(r)
    assert "Zur Post" in text and "Noch kein Spiel gespielt." in text
    assert "Warte auf das nächste Spiel …" in text
    assert "Verlierer des Jahres" in text and "Noch niemand" in text
    assert rows(r) == []
    assert by_id(r, "tv-phase") == "Pause"
    assert screen(r)["state"] == "none" and screen(r)["game"] == ""


def test_the_page_keeps_the_strict_policy_and_names_its_stream(app: Flask, table: Table) -> None:
    r = tv(app, table.slug)
    assert r.headers["Content-Security-Policy"] == STRICT_CSP
    assert r.headers["Cache-Control"] == "no-store"
    assert "<script>" not in r.text and " style=" not in r.text
    assert re.search(r'<script src="/assets/tv\.js\?v=\w+" defer></script>', r.text)
    assert f'data-events="/api/v1/stammtische/{table.slug}/events"' in r.text
    assert f'data-board="/tv/{table.slug}/tafel"' in r.text
    # without JavaScript the page reloads itself every minute
    assert '<noscript><meta http-equiv="refresh" content="60"></noscript>' in r.text
    for asset in re.findall(r'(?:href|src)="(/assets/[^"]+)"', r.text):
        got = app.test_client().get(asset)
        got.close()
        assert got.status_code == 200, asset


# ----------------------------------------------------------------------------- a running game


def test_a_running_game_shows_the_board_in_seat_order(app: Flask, table: Table) -> None:
    game = table.start(PLAYERS, "Anna")
    play(table, game, [("Anna", "113"), ("Bert", "653")])
    r = tv(app, table.slug)
    board = rows(r)
    assert [b["name"] for b in board] == PLAYERS
    assert [b["deckel"] for b in board] == [0, 0, 0, 0]
    assert '<ol class="players n-4" id="tv-players">' in r.text  # one column
    assert by_id(r, "tv-phase") == "1. Hälfte"
    assert by_id(r, "tv-mitte") == "Mitte 13"
    clara = board[2]
    assert "is-next" in clara["classes"] and clara["tags"] == ["am Zug"]
    assert board[0]["tags"] == ["hat vorgelegt"]  # Anna opened the round
    assert [b for b in board if "is-next" in b["classes"]] == [clara]
    assert by_id(r, "tv-am-zug") == "Clara"
    assert by_id(r, "tv-throws") == "höchstens 1 Wurf"
    assert by_id(r, "tv-opener") == "Anna hat vorgelegt: mit 1 Wurf"
    assert recent(r)[:2] == ["Bert: Zahl 653 (3-5-6, 1 Wurf).", "Anna: Schock 3 (1-1-3, 1 Wurf)."]
    assert by_id(r, "ticker") == "Bert: Zahl 653 (3-5-6, 1 Wurf)."
    assert screen(r)["state"] == "running" and screen(r)["game"] == str(game)


def test_the_opener_and_an_open_turn_show_their_throws(app: Flask, table: Table) -> None:
    game = table.start(PLAYERS, "Bert")
    r = tv(app, table.slug)
    assert by_id(r, "tv-throws") == "legt vor: bis zu 3 Würfe"
    assert by_id(r, "tv-opener") == "Bert beginnt die Runde"
    assert rows(r)[1]["tags"] == ["am Zug", "beginnt"]
    assert "Noch nichts eingetragen." in text_of(r)
    t = table.post(f"/games/{game}/throws", {"player": "Bert", "dice": [6, 5, 2]})
    assert t.status_code == 201, t.json
    r = tv(app, table.slug)
    assert by_id(r, "tv-throws") == "Wurf 1 von 3"
    assert by_id(r, "ticker") == "Bert: Wurf 1 – 2-5-6."


def test_a_lost_round_moves_the_deckel_and_is_the_ticker_line(app: Flask, table: Table) -> None:
    game = table.start(PLAYERS, "Anna")
    play(table, game, [("Anna", "112"), ("Bert", "653"), ("Clara", "542"), ("Dieter", "421")])
    r = tv(app, table.slug)
    dieter = rows(r)[3]
    assert dieter["deckel"] == 2 and dieter["dots"] == 2 and "is-next" in dieter["classes"]
    assert by_id(r, "tv-mitte") == "Mitte 11"
    ticker = by_id(r, "ticker")
    assert ticker.startswith("Dieter bekommt 2 Deckel")  # the outcome, not the turn
    assert 'class="ticker kind-round_lost"' in r.text


def test_the_second_half_names_who_lost_the_first(app: Flask, table: Table) -> None:
    game = table.start(PLAYERS, "Anna", rules=RULES)
    play(table, game, HALF1)
    r = tv(app, table.slug)
    assert by_id(r, "tv-phase") == "2. Hälfte"
    dieter = rows(r)[3]
    assert dieter["tags"] == ["am Zug", "beginnt", "1. Hälfte verloren"]
    assert "Dieter hat alle Deckel und verliert die erste Hälfte." in by_id(r, "ticker")
    assert 'class="ticker kind-half_lost"' in r.text


def test_the_finale_shows_the_two_and_benches_the_rest(app: Flask, table: Table) -> None:
    game = table.start(PLAYERS, "Anna", rules=RULES)
    play(table, game, HALF1 + HALF2)
    r = tv(app, table.slug)
    assert by_id(r, "tv-phase") == "Finale: Anna gegen Dieter"
    board = {b["name"]: b for b in rows(r)}
    for name in ("Bert", "Clara"):
        assert "is-benched" in board[name]["classes"]
        assert board[name]["tags"] == ["nicht im Finale"] and board[name]["deckel"] is None
    assert "2. Hälfte verloren" in board["Anna"]["tags"]
    assert "1. Hälfte verloren" in board["Dieter"]["tags"]
    assert "is-next" in board["Anna"]["classes"]


def test_a_player_without_deckel_in_an_empty_mitte_is_out(app: Flask, table: Table) -> None:
    game = table.start(PLAYERS, "Anna", rules=RULES)
    # Dieter gets 2 Deckel, then Clara the last one: Anna and Bert hold none, they are out
    play(table, game, [("Anna", "112"), ("Bert", "653"), ("Clara", "542"), ("Dieter", "421")])
    play(table, game, [("Dieter", "653"), ("Anna", "542"), ("Bert", "631"), ("Clara", "221")])
    r = tv(app, table.slug)
    board = {b["name"]: b for b in rows(r)}
    assert [n for n, b in board.items() if "raus" in b["tags"]] == ["Anna", "Bert"]
    assert [n for n, b in board.items() if "is-out" in b["classes"]] == ["Anna", "Bert"]
    assert board["Dieter"]["deckel"] == 2 and board["Clara"]["deckel"] == 1
    assert by_id(r, "tv-mitte") == "Mitte 0"


def test_many_players_sit_in_two_columns_and_many_deckel_are_bars(app: Flask, table: Table) -> None:
    names = [*PLAYERS, "Eva", "Franz", "Gisela", "Heinz", "Ilse"]
    table.add_players(names[4:])
    rules = {"preset": "standard", "overrides": {"deckel": 30}}
    game = table.start(names, "Anna", rules=rules)
    play(table, game, [("Anna", "116"), *[(n, "653") for n in names[1:8]], ("Ilse", "421")])
    r = tv(app, table.slug)
    assert '<ol class="players n-9 two-cols" id="tv-players">' in r.text
    ilse = rows(r)[8]
    assert ilse["deckel"] == 6 and ilse["dots"] == 0  # 30 Deckel: a bar, not 30 pictograms
    assert '<span class="bar t2"></span>' in r.text  # 6 of 30: two tenths
    assert r.text.count('<span class="bar t0"></span>') == 8


# ----------------------------------------------------------------------------- a finished game


@pytest.mark.parametrize("app", STORES, indirect=True)
def test_a_finished_game_shows_its_result_and_the_verlierer(app: Flask, table: Table) -> None:
    game = table.start(PLAYERS, "Anna", rules=RULES)
    play(table, game, HALF1 + HALF2 + FINALE)
    r = tv(app, table.slug)  # a request never computes statistics: the board says so
    assert "Die Statistik wird aktualisiert" in by_id(r, "tv-verlierer")
    refresh(app.extensions["schocken"].store.repository())  # the refresher catches up
    r = tv(app, table.slug)
    assert screen(r)["state"] == "finished" and screen(r)["game"] == str(game)
    assert by_id(r, "tv-phase") == "Spiel vorbei"
    result = by_id(r, "tv-result")
    assert "Dieter hat verloren" in result
    assert "Hälften: Dieter und Anna · Finale: Anna gegen Dieter" in result
    year = by_id(r, "tv-verlierer")
    assert year.startswith("Verlierer des Jahres 20") and "Dieter" in year
    assert "1. Dieter 1 von 1 verloren" in year
    assert by_id(r, "ticker") == "Warte auf das nächste Spiel …"
    assert rows(r) == []
    with app.app_context():
        st = services().stammtisch(table.slug)
        assert screen(r)["position"] == str(services().repo.last_event_position(st.id))
    assert int(screen(r)["position"]) > 0


def test_a_new_game_replaces_the_finished_one(app: Flask, table: Table) -> None:
    first = table.start(PLAYERS, "Anna", rules=RULES)
    play(table, first, HALF1 + HALF2 + FINALE)
    second = table.start(PLAYERS, "Dieter")
    r = tv(app, table.slug)
    assert screen(r)["game"] == str(second) and screen(r)["state"] == "running"
    # the fragment tv.js reads: the game asked for, else the newest running one
    r = tv(app, table.slug, f"/tafel?spiel={first}")
    assert r.status_code == 200 and "<html" not in r.text
    assert screen(r)["game"] == str(first) and screen(r)["state"] == "finished"
    assert screen(tv(app, table.slug, "/tafel"))["game"] == str(second)


@pytest.mark.parametrize("app", ["memory", "sqlite"], indirect=True)
def test_spiel_pins_a_game_of_this_stammtisch_and_nothing_else(app: Flask, table: Table) -> None:
    first = table.start(PLAYERS, "Anna")
    second = table.start(PLAYERS, "Bert")
    play(table, second, [("Bert", "113")])
    for path in ("", "/tafel"):
        r = tv(app, table.slug, f"{path}?spiel={first}")
        assert r.status_code == 200 and screen(r)["game"] == str(first)
    assert f'data-pinned="{first}"' in tv(app, table.slug, f"?spiel={first}").text
    assert 'data-pinned=""' in tv(app, table.slug).text
    foreign = make_table(app.test_client(), "Zum Falz")
    foreign.add_players(PLAYERS)
    theirs = foreign.start(PLAYERS, "Anna")
    # a foreign game, none, not ASCII digits ("²" and "٣" are digits to str.isdigit), too big
    for wanted in [str(theirs), "999", "0", "-1", "abc", "", "%C2%B2", "%D9%A3", "9" * 30,
                   str(2**63), "1" * 5000]:  # fmt: skip
        for path in ("", "/tafel"):
            r = tv(app, table.slug, f"{path}?spiel={wanted}")
            assert r.status_code == 404, (path, wanted, r.status_code)
            assert "Nicht gefunden" in text_of(r)
            assert "Bei Zur Post gibt es kein Spiel „" in text_of(r)


def test_without_spiel_the_tv_shows_the_running_game_with_the_latest_entry(
    app: Flask, table: Table
) -> None:
    played = table.start(PLAYERS, "Anna")
    play(table, played, [("Anna", "113")])
    table.start(PLAYERS, "Bert")  # a second table starts: no entry yet, the TV stays
    assert screen(tv(app, table.slug))["game"] == str(played)


def test_the_tv_shows_where_the_dice_are(app: Flask, table: Table) -> None:
    left = table.start(PLAYERS, "Anna")
    play(table, left, [("Anna", "113")])
    played = table.start(PLAYERS, "Bert")
    play(table, played, [("Bert", "113")])
    play(table, left, [("Bert", "653")])  # the older game goes on: it is shown
    assert screen(tv(app, table.slug))["game"] == str(left)
    play(table, played, [("Clara", "653")])
    assert screen(tv(app, table.slug))["game"] == str(played)
    # an imported game is no activity at the table
    old = {
        "played_at": "2025-11-27T20:15:00+01:00",
        "rules": RULES,
        "players": PLAYERS,
        "starter": "Anna",
        "events": [{"player": p, "dice": [int(d) for d in x], "throws": 1} for p, x in HALF1],
    }
    assert table.post("/imports", old).status_code == 201
    assert screen(tv(app, table.slug))["game"] == str(played)


def test_a_game_left_running_long_ago_gives_way(
    app: Flask, table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    left = table.start(PLAYERS, "Anna")
    play(table, left, [("Anna", "113")])
    done = table.start(PLAYERS, "Anna", rules=RULES)
    play(table, done, HALF1 + HALF2 + FINALE)
    assert screen(tv(app, table.slug))["game"] == str(left)  # still running, recently played
    monkeypatch.setattr("api.web.tv.ACTIVITY", 5)  # left's events are no longer among them
    r = tv(app, table.slug)
    assert screen(r)["game"] == str(done) and screen(r)["state"] == "finished"


# ----------------------------------------------------------------------------- who may see it


def test_a_private_stammtisch_needs_the_form_login(app: Flask) -> None:
    client = app.test_client()
    t = make_table(client, "Geheimrunde", private=True)
    r = client.get(f"/tv/{t.slug}")
    assert r.status_code == 302
    assert r.headers["Location"].endswith(f"/?stammtisch={t.slug}")
    assert client.get(f"/tv/{t.slug}/tafel").status_code == 403
    web = Browser(app)
    r = web.post("/anmelden", {"slug": t.slug, "token": t.token})
    assert r.status_code == 302
    page = web.get(f"/tv/{t.slug}")
    assert page.status_code == 200 and "Geheimrunde" in text_of(page)
    assert web.get(f"/tv/{t.slug}/tafel").status_code == 200


def test_an_unknown_stammtisch_is_not_found(app: Flask) -> None:
    r = app.test_client().get("/tv/gibt-es-nicht")
    assert r.status_code == 404 and "Nicht gefunden" in text_of(r)
    assert app.test_client().get("/tv/gibt-es-nicht/tafel").status_code == 404


def test_the_stammtisch_page_links_to_the_tv(app: Flask) -> None:
    web = Browser(app)
    slug, _ = create(web)
    page = web.get(f"/s/{slug}/")
    assert re.search(rf'<a class="button" href="/tv/{slug}" id="tv-link">TV-Ansicht</a>', page.text)
