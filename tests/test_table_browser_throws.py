"""Throws of the card "Wurf für Wurf" through the phone's queue: the phone's engine
(``api/table/browser.py``) against the server's queue endpoint (``api/web/offline.py``).

A throw waits on the phone like a turn; the engine feeds it exactly as the server does, so
the open turn (dice set aside, throws used) and the turn a throw finishes ("Stehen lassen",
the limit) are the server's: the same acceptance or the same German refusal, the same
sentences and the same screen. After another phone wrote, a throw that no longer fits is
refused with the engine's reason, and the later throws of its turn with it.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from flask import Flask
from test_table_browser import (  # noqa: F401 - app: the fixture
    SCREEN,
    app,
    call,
    page_state,
    random_overrides,
    send,
)
from test_web_pages import Browser, add_players, create, start

from api.rules import PRESETS, turn_state
from api.table import browser
from api.table.entry import dice_in_cup

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]


def card_fields(player: str, dice: list[int], aside: list[bool], decision: str) -> dict[str, str]:
    """The throw card's fields as the phone's form sends them."""
    fields = {"player": player, "decision": decision}
    for i, (pip, out) in enumerate(zip(dice, aside, strict=True), start=1):
        fields[f"w{i}"] = str(pip)
        if out:
            fields[f"x{i}"] = "1"
    return fields


#: Anna's first throw 1-4-6, the 1 set aside, "Rauslegen, nochmal"
ANNA_1_ASIDE = card_fields("Anna", [1, 4, 6], [True, False, False], "again")


def loaded(app: Flask, **house_rules: str) -> tuple[Browser, str]:  # noqa: F811
    """A new game of four (Anna opens) on the server, loaded into the phone's engine."""
    web = Browser(app)
    slug, _ = create(web, **house_rules)
    add_players(web, slug)
    game = start(web, slug)
    web.get(game)
    state, _ = page_state(web, game)
    call("load", state=state, waiting=[])
    return web, game


def random_throw(rng: random.Random) -> dict[str, str]:
    """A throw of the next player on the phone's prediction, its decision chosen at random
    (now and then one the rules forbid, or for a player whose turn it is not)."""
    table = browser._current().predict()
    state = turn_state(table.game, table.open_turn)
    assert state is not None
    player = state.player if rng.random() > 0.05 else rng.choice(PLAYERS)
    in_cup = dice_in_cup(table.game, table.open_turn, player)
    dice = [rng.randint(1, 6) for _ in range(in_cup)]
    decision = rng.choice(["stop", "again", "again", "again", "sixes1", "sixes2"])
    aside = [rng.random() < 0.4 for _ in dice]
    return card_fields(player, dice, aside, decision)


def play_throws(web: Browser, slug: str, rng: random.Random, entries: int) -> tuple[int, int]:
    """``entries`` throws of a new game entered on the phone and sent through the queue side
    by side; (throws taken, turns finished by them)."""
    game = start(web, slug)
    web.get(game)
    state, _ = page_state(web, game)
    call("load", state=state, waiting=[])
    taken = finished = 0
    for n in range(entries):
        if browser._current().predict().game.loser is not None:
            break
        fields = random_throw(rng)
        phone = call("enter", kind="throw", fields=fields)
        server = send(web, game, f"{slug}-{n}", state["seq"], "throw", fields)
        if not phone["ok"]:
            assert server.status_code == 422, (fields, phone, server.json)
            assert server.mimetype == "application/problem+json"
            assert server.json["detail"] == phone["message"], fields
            assert phone["field"] == "throw"
            continue
        assert server.status_code == 200, (fields, server.json)
        assert server.json["messages"] == phone["announcements"]
        assert phone["entry"]["label"].startswith(f"{fields['player']}:"), phone["entry"]
        taken += 1
        finished += any(kind == "turn_recorded" for kind, _ in phone["announcements"])
        call("confirm", seq=server.json["seq"])
        state["seq"] = server.json["seq"]
        shown = call("render", announcements=[])
        assert shown["html"].strip() == page_state(web, game)[1], f"throw {n}: {fields}"
    return taken, finished


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_phone_applies_queued_throws_as_the_server_records_them(
    app: Flask,  # noqa: F811
    preset: str,
) -> None:
    web = Browser(app)
    rng = random.Random("throws-" + preset)
    slug, _ = create(web, preset=preset, **random_overrides(rng))
    add_players(web, slug)
    taken, finished = play_throws(web, slug, rng, 120)
    assert taken >= 30 and finished >= 10, (taken, finished)  # the test went somewhere


def test_a_waiting_throw_shows_the_open_turn_and_stehen_lassen_finishes_it(
    app: Flask,  # noqa: F811
) -> None:
    web, game = loaded(app)
    throws = [
        card_fields("Anna", [1, 4, 1], [True, False, True], "again"),
        card_fields("Anna", [5], [False], "stop"),
    ]
    first = call("enter", kind="throw", fields=throws[0])
    assert first["ok"] is True and first["seq"] == 1
    assert first["entry"] == {
        "kind": "throw",
        "body": {"player": "Anna", "dice": [1, 4, 1], "aside": [1, 1], "sixes": 0},
        "label": "Anna: Wurf 1 – 1-1-4, legt 1-1 heraus",
        "seq": 0,
    }
    assert "rausgelegt: <span" in first["html"] and "1-1</span>" in first["html"]
    assert "<strong>Wurf 2</strong>" in first["html"] and "im Becher: 1 Würfel" in first["html"]
    second = call("enter", kind="throw", fields=throws[1])
    assert second["ok"] is True and second["next_player"] == "Bert"
    assert second["entry"]["label"] == "Anna: Schock 5 (1-1-5, 2 Würfe)"
    assert [w["seq"] for w in second["waiting"]] == [0, 1]
    assert "<strong>Wurf 1</strong> von höchstens 2 Würfe" in second["html"]  # Bert's turn
    assert 'Am Zug: <span id="am-zug">Bert</span>' in second["html"]
    # the server takes them in order, each once, and shows the same
    for n, (w, fields) in enumerate(zip(second["waiting"], throws, strict=True)):
        r = send(web, game, f"t-{n}", w["seq"], "throw", fields)
        assert r.status_code == 200, r.json
        call("confirm", seq=r.json["seq"])
    entries = page_state(web, game)[0]["entries"]
    assert [(e[1], e[2]) for e in entries] == [
        ("throw", first["entry"]["body"]),
        ("throw", second["entry"]["body"]),
    ]
    assert call("render")["html"].strip() == page_state(web, game)[1]


def test_a_throw_that_no_longer_fits_is_refused_with_the_later_throws_of_its_turn(
    app: Flask,  # noqa: F811
) -> None:
    """Phone A waits with two throws of Anna's turn and Bert's turn; phone B records Anna's
    whole turn meanwhile. On the new state Anna's throws are refused (the second because of
    the first), Bert's turn stays Bert's; dropping the first throw drops the second."""
    web, game = loaded(app)
    call("enter", kind="throw", fields=ANNA_1_ASIDE)
    call("enter", kind="throw", fields=card_fields("Anna", [1, 5], [False, False], "stop"))
    bert = call("enter", kind="turn", fields={"player": "Bert", "wurf": "631", "throws": "1"})
    assert [w["seq"] for w in bert["waiting"]] == [0, 1, 2]
    r = send(web, game, "b-anna", 0, "turn", {"player": "Anna", "wurf": "542", "throws": "1"})
    assert r.status_code == 200
    late = send(web, game, "a-1", 0, "throw", ANNA_1_ASIDE)
    assert late.status_code == 409 and late.json["conflict"] is True
    assert late.mimetype == "application/problem+json"
    again = call("rebase", state=late.json["state"])
    assert [w["seq"] for w in again["waiting"]] == [None, None, 1]
    assert again["waiting"][0]["refused"] == "Anna ist nicht an der Reihe, sondern Bert."
    assert again["waiting"][1]["refused"] == browser.EARLIER_THROW
    assert again["waiting"][2]["label"].startswith("Bert:")
    dropped = call("drop", index=0)
    assert dropped["dropped"] == [0, 1]
    assert [w["label"] for w in dropped["waiting"]] == ["Bert: Zahl 631 (1-3-6, 1 Wurf)"]
    r = send(web, game, "a-bert", 1, "turn", {"player": "Bert", "wurf": "631", "throws": "1"})
    assert r.status_code == 200, r.json
    turns = [(e[1], e[2]["player"]) for e in page_state(web, game)[0]["entries"]]
    assert turns == [("turn", "Anna"), ("turn", "Bert")]


def test_undo_of_a_waiting_throw_takes_back_only_that_throw(app: Flask) -> None:  # noqa: F811
    web, game = loaded(app)
    call("enter", kind="throw", fields=ANNA_1_ASIDE)
    call("enter", kind="throw", fields=card_fields("Anna", [1, 5], [True, False], "again"))
    last = call("drop", index=1)
    assert last["dropped"] == [1]
    assert "<strong>Wurf 2</strong>" in last["html"] and "im Becher: 2 Würfel" in last["html"]


def test_the_phone_reads_the_cards_mistakes_as_the_server(app: Flask) -> None:  # noqa: F811
    web, game = loaded(app)
    for fields in (
        {"player": "Anna", "w1": "1", "w3": "4", "decision": "stop"},  # a die missing
        {"player": "Anna", "w1": "1", "w2": "2", "w3": "4", "decision": "odds"},
        card_fields("Anna", [1, 1, 1], [True] * 3, "again"),  # all aside: that is stop
    ):
        phone = call("enter", kind="throw", fields=fields)
        server = send(web, game, "m", 0, "throw", fields)
        assert phone["ok"] is False and server.status_code == 422
        assert server.json["detail"] == phone["message"]
    assert call("render")["waiting"] == []
    assert page_state(web, game)[0]["seq"] == 0
    note: Any = call("chancen", dice=[1, 4])
    assert note == {"lines": [], "note": None}  # the Stammtisch does not show them


@pytest.mark.parametrize("dice", ["141", "14"])
def test_chancen_zeigen_on_the_phone_draws_the_servers_card(
    app: Flask,  # noqa: F811
    dice: str,
) -> None:
    """ "Chancen zeigen" offline (``browser.show_odds``) gives the screen the server's button
    gives: the dice kept in the card, the odds or, with a die missing, what to do first."""
    from api.http.context import services

    web, game = loaded(app, opt_deckel="3")
    with app.app_context():
        svc = services()
        svc.update_stammtisch(svc.stammtisch(game.split("/")[2]), {"odds_shown": "form"})
    r = send(web, game, "anna", 0, "turn", {"player": "Anna", "wurf": "115", "throws": "2"})
    assert r.status_code == 200
    state, _ = page_state(web, game)
    call("load", state=state, waiting=[])
    fields = {"player": "Bert", "decision": "odds"}
    fields.update({f"w{i}": pip for i, pip in enumerate(dice, start=1)})
    phone = call("show_odds", fields=fields)
    server = web.post(game + "/wurf", {**fields, "seq": "1"})  # the page it redirects to
    assert phone["html"].strip() == SCREEN.search(server.text).group(0)
    expected = "Beide Einsen rauslegen" if len(dice) == 3 else "Erst alle Würfel des Wurfs"
    assert expected in phone["html"]
    assert page_state(web, game)[0]["seq"] == 1  # nothing written
