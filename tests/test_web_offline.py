"""Offline-first entry, server side: the service worker's headers and the endpoint the
browser's queue sends to (``api/web/offline.py``): once per Idempotency-Key, only on the
version the entry was made for, German answers the page shows as a choice."""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import app_on
from flask import Flask
from test_web_pages import Browser, add_players, create, game_state, seq_of, start, turn

from api.http.headers import STRICT_CSP


@pytest.fixture
def app(storage: str, request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Flask]:
    yield from app_on(storage, tmp_path, request, SECRET_KEY="t" * 40)


@pytest.fixture
def web(app: Flask) -> Browser:
    return Browser(app)


@pytest.fixture
def table(web: Browser) -> tuple[str, str]:
    """A logged-in Stammtisch with four players and a running game (Anna opens)."""
    slug, _token = create(web)
    add_players(web, slug)
    return slug, start(web, slug)


def send(web: Browser, game: str, key: str | None, **fields: str) -> Any:
    body = {"csrf_token": web.csrf, "kind": "turn", **fields}
    headers = {"Idempotency-Key": key} if key else {}
    return web.client.post(game + "/eintrag", data=body, headers=headers)


def test_the_service_worker_is_served_from_the_root_for_the_whole_form(web: Browser) -> None:
    r = web.get("/sw.js")
    assert r.status_code == 200
    assert r.mimetype == "text/javascript"
    assert r.headers["Service-Worker-Allowed"] == "/"
    assert r.headers["Cache-Control"] == "no-cache"
    assert r.headers["Content-Security-Policy"] == STRICT_CSP
    assert 'addEventListener("fetch"' in r.text


def test_every_page_loads_the_queue_script_without_inline_code(web: Browser) -> None:
    r = web.get("/")
    assert '<script src="/assets/offline.js?v=' in r.text
    assert "<script>" not in r.text


def test_an_entry_is_recorded_once_per_key_even_when_sent_again(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    seq = seq_of(web.get(game))
    first = send(web, game, "k-1", seq=seq, player="Anna", wurf="113", throws="1")
    assert first.status_code == 200, first.text
    assert first.json == {
        "seq": int(seq) + 1,
        "entry": "Zug von Anna (1-1-3)",
        "messages": [["turn_recorded", "Anna: Schock 3 (1-1-3, 1 Wurf)."]],
    }
    again = send(web, game, "k-1", seq=seq, player="Anna", wurf="113", throws="1")  # lost answer
    assert again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first.json
    state = game_state(app, slug, game)
    assert state["seq"] == int(seq) + 1
    assert state["next_player"] == "Bert"


def test_the_form_shares_the_apis_stored_answers_and_reads_those_stored_before(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    """One mechanism (api/http/idempotency.py): the form's keys are stored per Stammtisch as
    the API's, apart from them (an API key of the same text is another key), and an answer
    stored by the form's own code of before (the same row, its body as sent) still answers."""
    import hashlib

    from api.http.context import services

    slug, game = table
    seq = seq_of(web.get(game))
    first = send(web, game, "k-7", seq=seq, player="Anna", wurf="113", throws="1")
    assert first.status_code == 200, first.text
    with app.app_context():
        repo = services().repo
        st = repo.get_stammtisch(slug)
        key = hashlib.sha256(b"form\0k-7").hexdigest()
        stored = repo.get_response(st.id, key)
        assert stored is not None and stored.body == first.data  # kept as sent
        assert repo.get_response(st.id, hashlib.sha256(b"k-7").hexdigest()) is None
    again = send(web, game, "k-7", seq=seq, player="Anna", wurf="113", throws="1")
    assert (again.headers["Idempotent-Replayed"], again.json) == ("true", first.json)


def test_an_entry_keeps_its_player_the_server_never_books_it_to_whoever_is_next(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    seq = seq_of(web.get(game))
    nameless = send(web, game, "n", seq=seq, wurf="113", throws="1")
    assert nameless.status_code == 422
    assert nameless.json["message"] == "Der Eintrag kam ohne Spieler an; bitte neu eingeben."
    wrong = send(web, game, "w", seq=seq, player="Bert", wurf="113", throws="1")  # Anna opens
    assert wrong.status_code == 422
    assert "Anna" in wrong.json["message"] and "Bert" in wrong.json["message"]
    assert game_state(app, slug, game)["seq"] == int(seq)


def test_an_entry_for_an_older_version_is_a_conflict_in_german(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    seq = seq_of(web.get(game))
    assert send(web, game, "a", seq=seq, player="Anna", wurf="113", throws="1").status_code == 200
    late = send(web, game, "b", seq=seq, player="Anna", wurf="653", throws="1")  # old version
    assert late.status_code == 409
    assert late.json["conflict"] is True
    assert late.json["seq"] == int(seq) + 1
    assert late.json["last"] == "Zug von Anna (1-1-3)"
    assert "Auf einem anderen Handy wurde inzwischen eingetragen" in late.json["message"]
    # the new state, for the phone's engine to re-apply its waiting entries on
    assert late.json["state"]["seq"] == int(seq) + 1
    assert late.json["state"]["entries"] == [
        [int(seq) + 1, "turn", {"player": "Anna", "dice": [3, 1, 1], "throws": 1}]
    ]
    assert game_state(app, slug, game)["seq"] == int(seq) + 1


def test_an_entry_for_a_game_decided_meanwhile_says_so_and_records_nothing(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, _ = table
    game = start(web, slug, ["Anna", "Bert"], "Anna")
    seq = seq_of(web.get(game))  # the phone's version, before the other phone finishes
    # the other phone: Bert loses both halves to a Schock aus each (Blattschuss)
    for player, dice in (("Anna", "111"), ("Bert", "653"), ("Bert", "653"), ("Anna", "111")):
        turn(web, game, player, dice, "1")
    assert game_state(app, slug, game)["phase"] == "finished"
    late = send(web, game, "x", seq=seq, player="Anna", wurf="113", throws="1")
    assert late.status_code == 409
    assert late.json["closed"] is True
    assert late.json["message"] == "Das Spiel ist schon entschieden: Bert hat verloren."
    assert late.json["state"]["seq"] == int(seq) + 4
    assert game_state(app, slug, game)["seq"] == int(seq) + 4


def test_an_entry_for_an_abandoned_game_says_so_and_records_nothing(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    seq = seq_of(web.get(game))
    web.post(game + "/abbrechen")
    late = send(web, game, "x", seq=seq, player="Anna", wurf="113", throws="1")
    assert late.status_code == 409
    assert late.json["closed"] is True
    assert late.json["message"] == "Das Spiel wurde abgebrochen: es nimmt keine Einträge mehr."
    assert game_state(app, slug, game)["seq"] == int(seq)


def test_a_rejected_or_keyless_entry_records_nothing(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    seq = seq_of(web.get(game))
    bad = send(web, game, "c", seq=seq, player="Anna", wurf="117", throws="1")
    assert bad.status_code == 422
    assert "„117“ sind keine Würfel" in json.dumps(bad.json, ensure_ascii=False)
    keyless = send(web, game, None, seq=seq, player="Anna", wurf="113", throws="1")
    assert keyless.status_code == 400
    forged = web.client.post(
        game + "/eintrag",
        data={"seq": seq, "wurf": "113", "throws": "1"},
        headers={"Idempotency-Key": "d"},
    )
    assert forged.status_code == 303  # no CSRF token: the form's refusal
    penalty = send(web, game, "e", seq=seq, kind="penalty", player="Bert", reason="", deckel="1")
    assert penalty.status_code == 422
    assert game_state(app, slug, game)["seq"] == int(seq)


def test_a_queued_penalty_is_recorded(web: Browser, app: Flask, table: tuple[str, str]) -> None:
    slug, game = table
    seq = seq_of(web.get(game))
    r = send(web, game, "p", seq=seq, kind="penalty", player="Bert", reason="zu früh", deckel="1")
    assert r.status_code == 200, r.text
    assert r.json["entry"] == "Strafe für Bert (zu früh)"
    assert game_state(app, slug, game)["stacks"]["Bert"] == 1


def test_the_manifest_makes_an_installable_app_with_png_icons(web: Browser) -> None:
    page = web.get("/")
    href = re.search(r'<link rel="manifest" href="([^"]+)"', page.text).group(1)
    with web.client.get(href) as r:
        assert r.mimetype == "application/manifest+json"
        manifest = json.loads(r.data)
    assert manifest["start_url"] == "/"
    assert manifest["display"] == "standalone"
    assert manifest["theme_color"] == "#8b1e1e"
    assert manifest["background_color"]
    sizes = {}
    for icon in manifest["icons"]:
        if icon["type"] != "image/png":
            continue
        with web.client.get("/assets/" + icon["src"]) as r:
            data = r.data
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        width, height = struct.unpack(">II", data[16:24])  # IHDR
        assert icon["sizes"] == f"{width}x{height}"
        sizes[icon["sizes"]] = icon["purpose"]
    assert {"192x192", "512x512"} <= set(sizes)


def throw_fields(seq: str, dice: str, aside: str = "", decision: str = "again") -> dict[str, str]:
    """Anna's throw of the card "Wurf für Wurf" as the queue sends it (``aside``: the ticked
    dice by position, e.g. "13")."""
    fields = {"seq": seq, "kind": "throw", "player": "Anna", "decision": decision}
    fields.update({f"w{i}": pip for i, pip in enumerate(dice, start=1)})
    fields.update({f"x{i}": "1" for i in aside})
    return fields


def test_a_queued_throw_is_recorded_once_per_key_and_stehen_lassen_ends_the_turn(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    seq = int(seq_of(web.get(game)))
    first = send(web, game, "t-1", **throw_fields(str(seq), "141", "13"))
    assert first.status_code == 200, first.text
    assert first.json == {
        "seq": seq + 1,
        "entry": "Wurf von Anna (1-1-4)",
        "messages": [["throw_recorded", "Anna: Wurf 1 – 1-1-4, legt 1-1 heraus."]],
    }
    again = send(web, game, "t-1", **throw_fields(str(seq), "141", "13"))  # its answer lost
    assert (again.headers["Idempotent-Replayed"], again.json) == ("true", first.json)
    other = send(web, game, "t-1", **throw_fields(str(seq), "141", "1"))  # the key, reused
    assert other.status_code == 422 and other.mimetype == "application/problem+json"
    assert other.json["detail"] == "Dieser Eintrag wurde schon anders gesendet."
    state = game_state(app, slug, game)
    assert (state["seq"], state["next_player"]) == (seq + 1, "Anna")  # her turn is open
    stop = send(web, game, "t-2", **throw_fields(str(seq + 1), "5", decision="stop"))
    assert stop.status_code == 200, stop.text
    assert stop.json["messages"] == [
        ["throw_recorded", "Anna: Wurf 2 – 5."],
        ["turn_recorded", "Anna: Schock 5 (1-1-5, 2 Würfe)."],
    ]
    state = game_state(app, slug, game)
    assert (state["seq"], state["next_player"], state["limit"]) == (seq + 2, "Bert", 2)
    log = web.get(game).text
    assert log.count("Anna: Wurf 1 – 1-1-4, legt 1-1 heraus.") == 1


def test_a_queued_throw_for_an_older_version_is_refused_and_writes_nothing(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    seq = seq_of(web.get(game))
    assert send(web, game, "a", **throw_fields(seq, "141", "13")).status_code == 200
    late = send(web, game, "b", **throw_fields(seq, "652", "1"))  # made for the old version
    assert (late.status_code, late.mimetype) == (409, "application/problem+json")
    answer = {name: late.json[name] for name in ("conflict", "code", "last", "seq")}
    assert answer == {
        "conflict": True,
        "code": "concurrent_change",
        "last": "Wurf von Anna (1-1-4)",
        "seq": int(seq) + 1,
    }
    assert game_state(app, slug, game)["seq"] == int(seq) + 1
    assert late.json["detail"].startswith("Auf einem anderen Handy wurde inzwischen eingetragen")


def test_a_bad_queued_throw_is_refused_in_german_and_writes_nothing(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    seq = seq_of(web.get(game))
    for fields, detail in (
        (throw_fields(seq, "14"), "Bitte alle 3 Würfel des Wurfs wählen (es fehlt Würfel 3)."),
        ({**throw_fields(seq, "141"), "player": "Bert"}, "Bert ist nicht an der Reihe"),
        ({**throw_fields(seq, "141"), "decision": ""}, "Bitte wählen: stehen lassen"),
    ):
        bad = send(web, game, "bad", **fields)
        assert bad.status_code == 422, bad.text
        assert bad.mimetype == "application/problem+json"
        assert bad.json["rejected"] is True and bad.json["detail"].startswith(detail)
        assert bad.json["detail"] == bad.json["message"]
    assert game_state(app, slug, game)["seq"] == int(seq)
