"""Offline-first entry in real Chromium: the network cut mid-game (``context.set_offline``).

``schocken serve --workers 2`` on a temporary SQLite file; the Stammtisch, its players and
the game are made through the REST API, the phone logs in on the form. Offline, ten turns
are entered, listed as waiting ("offline – 10 Züge warten"), a reload shows the stored page
and the queue again; online again, every turn arrives exactly once (the game's log) and the
board equals the engine's replay. Another phone writing meanwhile ends in a German choice,
never in a double entry.

Without Chromium the tests are skipped, unless ``CI`` is set: then they fail.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_api_serve import Server, request
from test_web_browser import (
    Phone,
    board,
    browser_type_launch_args,  # noqa: F401 - Debian's Chromium
)

from api.rules import Game, parse_event, ruleset_from_config

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
RULES = {"preset": "standard", "overrides": {"deckel": 13}}
DICE = ["113", "653", "542", "421", "221", "654", "631", "542", "332", "611", "521", "444"]


ENV = {"SCHOCKEN_SECRET_KEY": "offline-test-" + "x" * 32}


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Server]:
    """``schocken serve`` that can be killed and started again on the same port and file."""
    served = Server(tmp_path / "data" / "offline.sqlite3", workers=2, env=ENV)
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture
def base(serve: Server) -> str:
    return serve.base


class Table:
    """A Stammtisch, its players and one running game, through the REST API."""

    def __init__(self, base: str) -> None:
        self.base = base
        status, body, _ = request(base, "POST", "/api/v1/stammtische", {"name": "Kellerkneipe"})
        assert status == 201, body
        self.slug, self.token = body["slug"], body["token"]
        for name in PLAYERS:
            self.call("POST", "/players", {"name": name})
        game = {"players": PLAYERS, "starter": "Anna", "rules": RULES}
        self.game = int(self.call("POST", "/games", game)["id"])
        self.url = f"/s/{self.slug}/spiel/{self.game}"

    def call(self, method: str, path: str, body: Any = None) -> Any:
        url = f"/api/v1/stammtische/{self.slug}{path}"
        status, answer, _ = request(self.base, method, url, body, self.token)
        assert status in (200, 201), answer
        return answer

    def turns(self) -> list[dict[str, Any]]:
        """The game's log as the server stored it: its turns in order."""
        log = self.call("GET", f"/games/{self.game}/log")
        return [e for e in log["events"] if "dice" in e]

    def turn(self, player: str, dice: str) -> None:
        body = {"player": player, "dice": [int(d) for d in dice], "throws": 1}
        self.call("POST", f"/games/{self.game}/turns", body)


def replay(turns: list[dict[str, Any]]) -> Game:
    rules = ruleset_from_config(RULES)
    game = Game.start(rules, PLAYERS, "Anna")
    for t in turns:
        game.apply(parse_event(t, rules))
    return game


@pytest.fixture
def phone(browser: Any, base: str) -> Iterator[tuple[Phone, Table]]:
    table = Table(base)
    p = Phone(browser, base, 390, True)
    page = p.page
    page.goto("/")
    page.fill("#login-slug", table.slug)
    page.fill("#login-token", table.token)
    page.get_by_role("button", name="Öffnen").click()
    page.goto(table.url)
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    page.reload()  # now through the service worker, which keeps the page
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    yield p, table
    p.close()
    assert p.outside == [], f"requests left 127.0.0.1: {p.outside}"
    assert p.console_errors == [], f"console errors (CSP?): {p.console_errors}"


def test_chromium_finds_the_form_installable(phone: tuple[Phone, Table]) -> None:
    p, _table = phone
    cdp = p.context.new_cdp_session(p.page)
    answer = cdp.send("Page.getInstallabilityErrors")
    errors = [e["errorId"] for e in answer["installabilityErrors"]]
    assert [e for e in errors if e != "in-incognito"] == []  # a test context is incognito
    manifest = cdp.send("Page.getAppManifest")
    assert manifest["errors"] == []


def tap_turn(p: Phone, dice: str) -> None:
    page = p.page
    for row, pip in enumerate(dice, start=1):
        page.locator(f".die-row:nth-of-type({row}) label.die", has_text=pip).click()
    page.locator("button.throw", has_text=re.compile("^1 Wurf$")).click()


def online_turn(p: Phone, dice: str) -> None:
    with p.page.expect_navigation():
        tap_turn(p, dice)
    p.page.wait_for_load_state("load")


def status_becomes(p: Phone, text: str) -> None:
    shown = "document.getElementById('offline-status').textContent"
    p.page.wait_for_function(f"() => {shown} === {json.dumps(text)}")


def waiting(p: Phone) -> list[str]:
    return p.page.locator("#offline-list li").all_inner_texts()


def test_ten_turns_entered_offline_arrive_once_and_the_board_matches_the_engine(
    phone: tuple[Phone, Table],
) -> None:
    p, table = phone
    page = p.page
    online_turn(p, DICE[0])
    online_turn(p, DICE[1])
    assert len(table.turns()) == 2

    p.context.set_offline(True)
    for dice in DICE[2:12]:
        tap_turn(p, dice)
    page.wait_for_function("() => document.querySelectorAll('#offline-list li').length === 10")
    status_becomes(p, "offline – 10 Züge warten")
    first = waiting(p)[:2]
    assert first == ["Clara: 5-4-2, Würfe: 1 – wartet", "Dieter: 4-2-1, Würfe: 1 – wartet"]
    assert page.locator("#eingabe button.throw").first.is_visible()  # the input stays usable
    assert len(table.turns()) == 2  # nothing reached the server

    page.reload()  # offline: the stored page, the queue from IndexedDB
    page.wait_for_function("() => document.querySelectorAll('#offline-list li').length === 10")
    status_becomes(p, "offline – 10 Züge warten")
    assert page.locator("#board .stack").count() == 4

    p.context.set_offline(False)
    with page.expect_navigation(timeout=20000):  # all sent: the page shows the server's board
        page.evaluate("window.dispatchEvent(new Event('online'))")  # as the phone's radio says
    page.wait_for_load_state("load")
    assert waiting(p) == []
    turns = table.turns()
    tapped = [sorted(int(pip) for pip in dice) for dice in DICE[:12]]
    assert [sorted(t["dice"]) for t in turns] == tapped  # in order
    assert len(turns) == 12  # each exactly once
    state = replay(turns).state().to_json()
    assert board(p) == {"mitte": state["mitte"], "stacks": state["stacks"]}
    assert page.locator("#am-zug").inner_text() == state["next_player"]


def test_another_phone_writing_meanwhile_ends_in_a_german_choice_not_a_double_entry(
    phone: tuple[Phone, Table],
) -> None:
    p, table = phone
    page = p.page
    online_turn(p, DICE[0])
    p.context.set_offline(True)
    tap_turn(p, DICE[1])
    tap_turn(p, DICE[2])
    page.wait_for_function("() => document.querySelectorAll('#offline-list li').length === 2")
    status_becomes(p, "offline – 2 Züge warten")
    table.turn("Bert", "665")  # the second phone, still online

    p.context.set_offline(False)
    page.evaluate("window.dispatchEvent(new Event('online'))")
    choice = page.locator("#offline-choice")
    choice.wait_for()
    text = choice.inner_text()
    assert "Auf einem anderen Handy wurde inzwischen eingetragen (Zug von Bert (5-6-6))" in text
    assert "Verwerfen und neu eingeben" in text
    assert len(table.turns()) == 2  # Anna's and the other phone's: nothing twice

    with page.expect_navigation():
        page.get_by_role("button", name="Verwerfen und neu eingeben").click()
    page.wait_for_load_state("load")
    assert waiting(p) == []
    assert page.locator("#am-zug").inner_text() == "Clara"
    assert len(table.turns()) == 2


def test_sending_anyway_appends_the_waiting_turns_after_the_other_phones(
    phone: tuple[Phone, Table],
) -> None:
    p, table = phone
    page = p.page
    online_turn(p, DICE[0])
    p.context.set_offline(True)
    tap_turn(p, DICE[2])
    table.turn("Bert", "665")
    p.context.set_offline(False)
    page.evaluate("window.dispatchEvent(new Event('online'))")
    page.locator("#offline-choice").wait_for()
    with page.expect_navigation():
        page.get_by_role("button", name="Trotzdem nach dem neuen Stand eintragen").click()
    page.wait_for_load_state("load")
    turns = table.turns()
    assert [(t["player"], sorted(t["dice"])) for t in turns] == [
        ("Anna", [1, 1, 3]),
        ("Bert", [5, 6, 6]),
        ("Clara", [2, 4, 5]),
    ]


def test_a_form_posted_while_the_server_is_unreachable_shows_the_stored_page_queues_nothing(
    phone: tuple[Phone, Table], serve: Server
) -> None:
    """The phone thinks it is online (navigator.onLine), but the server is gone: the service
    worker answers the posted form with the stored game page and queues nothing unchecked."""
    p, table = phone
    page = p.page
    page.evaluate("localStorage.setItem('schocken.queue', 'never')")  # the form's own POST
    online_turn(p, DICE[0])
    serve.kill()
    online_turn(p, DICE[1])  # the POST fails in the service worker: the stored page again
    assert page.url == table.base + table.url
    assert page.locator("#board").count() == 1
    assert waiting(p) == []
    serve.start()
    page.reload()
    assert waiting(p) == []
    assert [sorted(t["dice"]) for t in table.turns()] == [[1, 1, 3]]


def test_on_a_slow_link_the_input_is_free_at_once_and_the_board_follows(
    browser: Any, base: str
) -> None:
    """Chromium's "Fast 3G" (the page took over 400 ms): a tapped turn goes through the
    queue, the input is free again before the server answered, then the server's board."""
    table = Table(base)
    context = browser.new_context(
        viewport={"width": 390, "height": 664}, locale="de-DE", base_url=base,
        service_workers="block",  # CDP's emulation does not slow a worker's own requests
    )  # fmt: skip
    context.set_default_timeout(20000)
    page = context.new_page()
    page.goto("/")
    page.fill("#login-slug", table.slug)
    page.fill("#login-token", table.token)
    page.get_by_role("button", name="Öffnen").click()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    fast_3g = {"offline": False, "latency": 562.5,
               "downloadThroughput": 1.6e6 / 8, "uploadThroughput": 750e3 / 8}  # fmt: skip
    cdp.send("Network.emulateNetworkConditions", fast_3g)
    page.goto(table.url)
    for row, pip in enumerate(DICE[0], start=1):
        page.locator(f".die-row:nth-of-type({row}) label.die", has_text=pip).click()
    with page.expect_navigation():  # the reload with the server's board
        page.locator("button.throw", has_text=re.compile("^1 Wurf$")).click()
        page.wait_for_function("() => document.querySelectorAll('#offline-list li').length")
        assert not page.locator("#eingabe input[type=radio]:checked").count()  # free again
    page.wait_for_load_state("load")
    assert page.locator("#am-zug").inner_text() == "Bert"
    assert [t["player"] for t in table.turns()] == ["Anna"]
    context.close()


def test_logging_out_forgets_the_stored_pages(phone: tuple[Phone, Table]) -> None:
    p, table = phone
    page = p.page
    page.goto(f"/s/{table.slug}/")
    page.get_by_role("button", name="Abmelden").click()
    page.wait_for_load_state("load")
    p.context.set_offline(True)
    page.goto(table.url)  # without signal: no stored copy of the game any more
    assert page.locator("h1").inner_text() == "Offline"
    assert page.locator("#board").count() == 0
