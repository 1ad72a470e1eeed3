"""The phone's offline engine (``api/table/browser.py``) against the server, entry by entry.

The phone runs the same engine and draws the same screen partial as the server, so after every
entry of a random game (every preset and random house rules, turns and penalties, also refused
ones) the phone's prediction must equal what the server then shows: the same acceptance or the
same German refusal, the same sentences, and the same screen HTML. Waiting entries keep their
player: after another phone wrote, each is re-applied for its own player or refused with the
engine's reason, never booked to the next player.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from test_web_pages import Browser, add_players, create, start

from api.app import create_app
from api.rules import PRESETS
from api.rules.simulate import play_turn
from api.table import browser
from api.web.forms import OPTION_CHOICES, encode

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
SCREEN = re.compile(r'<div id="screen".*?<!-- /screen -->', re.S)


@pytest.fixture
def app(tmp_path: Any) -> Iterator[Flask]:
    application = create_app({"STORAGE": "memory", "SECRET_KEY": "t" * 40})
    yield application
    application.extensions["schocken"].store.close()


def page_state(web: Browser, game: str) -> tuple[dict[str, Any], str]:
    """The state the page embeds for the phone's engine, and the page's screen HTML."""
    r = web.get(game)
    found = re.search(r'<script type="application/json" id="spielstand">(.*?)</script>', r.text)
    assert found, r.text
    return json.loads(found.group(1)), SCREEN.search(r.text).group(0)


def call(name: str, **arg: Any) -> dict[str, Any]:
    return json.loads(getattr(browser, name)(json.dumps(arg)))


def turn_fields(body: dict[str, Any]) -> dict[str, str]:
    throws = "blind" if body.get("blind") else str(body["throws"])
    if body.get("hand") and body["throws"] > 1:
        throws += "h"
    return {"player": body["player"], "wurf": "".join(map(str, body["dice"])), "throws": throws}


def send(web: Browser, game: str, key: str, seq: int, kind: str, fields: dict[str, str]) -> Any:
    body = {"csrf_token": web.csrf, "kind": kind, "seq": str(seq), **fields}
    return web.client.post(game + "/eintrag", data=body, headers={"Idempotency-Key": key})


def random_overrides(rng: random.Random) -> dict[str, str]:
    """A few house-rule fields of the Stammtisch form, chosen at random."""
    keys = rng.sample(sorted(OPTION_CHOICES), 4)
    return {f"opt_{k}": encode(rng.choice(OPTION_CHOICES[k])[0]) for k in keys}


def play(web: Browser, slug: str, rng: random.Random, entries: int) -> int:
    """Play ``entries`` entries of a new game on the phone's engine and the server side by
    side; return how many the engine refused (and the server with it)."""
    game = start(web, slug)
    web.get(game)  # the start's announcement, shown once
    state, html = page_state(web, game)
    loaded = call("load", state=state, waiting=[])
    assert loaded["html"].strip() == html
    rules_game = browser._current().base.game
    refused = 0
    for n in range(entries):
        predicted = browser._current().predict().game
        if predicted.loser is not None:
            break
        player = predicted.state().next_player
        assert player is not None
        if rng.random() < 0.08:  # a penalty, or a turn of the wrong player
            kind = "penalty"
            fields = {"player": rng.choice(PLAYERS), "reason": "zu früh", "deckel": "1"}
        else:
            kind = "turn"
            limit = predicted.state().limit or rules_game.rules.max_throws
            body = play_turn(player, limit, None, rules_game.rules, rng.random).to_json()
            if rng.random() < 0.05:
                body["player"] = rng.choice(PLAYERS)
            fields = turn_fields(body)
        phone = call("enter", kind=kind, fields=fields)
        server = send(web, game, f"{slug}-{n}", state["seq"], kind, fields)
        if not phone["ok"]:
            refused += 1
            assert server.status_code == 422, (phone, server.json)
            assert server.json["message"] == phone["message"]
            continue
        assert server.status_code == 200, (fields, server.json)
        # a waiting entry always names its own player
        label = phone["entry"]["label"]
        assert label.startswith(f"{fields['player']}:" if kind == "turn" else "Strafe für "), label
        assert fields["player"] in label
        assert server.json["messages"] == phone["announcements"]
        call("confirm", seq=server.json["seq"])
        state["seq"] = server.json["seq"]
        shown = call("render", announcements=[])
        assert shown["html"].strip() == page_state(web, game)[1], f"entry {n}: {fields}"
    return refused


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_phone_predicts_every_entry_as_the_server_records_it(app: Flask, preset: str) -> None:
    web = Browser(app)
    rng = random.Random(preset)
    slug, _ = create(web, preset=preset, **random_overrides(rng))
    add_players(web, slug)
    play(web, slug, rng, 80)


def test_after_a_conflict_each_waiting_entry_is_applied_for_its_own_player(app: Flask) -> None:
    """The repro of the defect: phone A waits with Bert's and Clara's turns, phone B records
    Bert's turn meanwhile; A applies its entries again: Bert's is refused with the engine's
    reason (he has thrown), Clara's stays Clara's — nothing slips one seat."""
    web = Browser(app)
    slug, _ = create(web)
    add_players(web, slug)
    game = start(web, slug)
    web.get(game)
    r = send(web, game, "a-anna", 0, "turn", {"player": "Anna", "wurf": "542", "throws": "1"})
    assert r.status_code == 200
    state, _ = page_state(web, game)
    call("load", state=state, waiting=[])
    bert = call("enter", kind="turn", fields={"player": "Bert", "wurf": "631", "throws": "1"})
    clara = call("enter", kind="turn", fields={"player": "Clara", "wurf": "221", "throws": "1"})
    assert [bert["entry"]["seq"], clara["entry"]["seq"]] == [1, 2]
    assert clara["next_player"] == "Dieter"
    # phone B, online: Bert's own turn
    r = send(web, game, "b-bert", 1, "turn", {"player": "Bert", "wurf": "665", "throws": "1"})
    assert r.status_code == 200
    late = send(web, game, "a-bert", 1, "turn", {"player": "Bert", "wurf": "631", "throws": "1"})
    assert late.status_code == 409 and late.json["conflict"] is True
    again = call("rebase", state=late.json["state"])
    assert [w["seq"] for w in again["waiting"]] == [None, 2]
    assert again["waiting"][0]["refused"] == "Bert ist nicht an der Reihe, sondern Clara."
    assert again["waiting"][1]["label"].startswith("Clara:")
    assert again["next_player"] == "Dieter"
    call("drop", index=0)
    r = send(web, game, "a-clara", 2, "turn", {"player": "Clara", "wurf": "221", "throws": "1"})
    assert r.status_code == 200, r.json
    turns = [(e[2]["player"], sorted(e[2]["dice"])) for e in page_state(web, game)[0]["entries"]]
    assert turns == [("Anna", [2, 4, 5]), ("Bert", [5, 6, 6]), ("Clara", [1, 2, 2])]


def test_a_waiting_entry_the_engine_refuses_is_not_taken_and_changes_nothing(
    app: Flask,
) -> None:
    web = Browser(app)
    slug, _ = create(web)
    add_players(web, slug)
    game = start(web, slug)
    web.get(game)
    state, html = page_state(web, game)
    call("load", state=state, waiting=[])
    opener = call("enter", kind="turn", fields={"player": "Anna", "wurf": "542", "throws": "1"})
    assert (
        "legt vor" not in opener["html"]
        and 'höchstens <strong id="limit">1 Wurf' in (opener["html"])
    )  # the opener's limit of the waiting turn counts at once
    refused = call("enter", kind="turn", fields={"player": "Bert", "wurf": "631", "throws": "2"})
    assert refused == {
        "ok": False,
        "field": "throws",
        "message": refused["message"],
    }
    assert "1 Wurf" in refused["message"]
    shown = call("render", announcements=[])
    assert [w["label"] for w in shown["waiting"]] == ["Anna: Zahl 542 (2-4-5, 1 Wurf)"]
    missing = call("enter", kind="turn", fields={"player": "Bert", "wurf": "63", "throws": "1"})
    assert missing["ok"] is False and missing["field"] == "dice"


def test_the_phones_chancen_are_the_servers_and_only_when_shown(app: Flask) -> None:
    """The throw card's odds computed on the phone (``browser.chancen``, what the dice taps
    show) are the lines the server shows for "Chancen zeigen" (tests/test_web_chancen.py)."""
    from test_web_pages import turn

    from api.http.context import services

    web = Browser(app)
    slug, _ = create(web, opt_deckel="3")
    add_players(web, slug)
    game = start(web, slug)
    turn(web, game, "Anna", "115", "2")
    state, _ = page_state(web, game)
    call("load", state=state, waiting=[])
    assert call("chancen", dice=[1, 4, 1]) == {"lines": [], "note": None}  # off
    with app.app_context():
        svc = services()
        svc.update_stammtisch(svc.stammtisch(slug), {"odds_shown": "form"})
    state, screen_html = page_state(web, game)
    call("load", state=state, waiting=[])
    assert call("chancen", dice=[1, 4, 1])["lines"] == [
        "Beide Einsen rauslegen, noch einmal: 33 % – schlechter als Anna wird man nicht",
        "Eine Eins rauslegen, noch einmal: 8 %",
        "Alle drei noch einmal: 2 %",
    ]
    phone = SCREEN.search(call("render")["html"]).group(0)
    assert phone == screen_html and "Chancen zeigen" in phone  # the same card, its odds button
