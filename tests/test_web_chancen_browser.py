""" "Chancen" and Wurf für Wurf on a phone in real Chromium (issue 27): the throw card at phone
size with the odds shown, a throw recorded through it, and offline two throws through the
phone's queue (its engine shows the open and the finished turn; online again they arrive once).

``schocken serve --workers 2`` on a temporary SQLite file; the Stammtisch, its players and the
game are made through the REST API. The screenshot of the card with its odds goes to
``artifacts/chancen-390.png``, the offline turn to ``artifacts/wurf-offline-390.png``.
Without Chromium the tests are skipped, unless ``CI`` is set.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import test_web_offline_browser as offline
from playwright.sync_api import expect
from test_api_serve import Server, served
from test_web_browser import (
    browser_type_launch_args,  # noqa: F401 - Debian's Chromium
    closed,
)

from api.table.screen import DICE_FIRST

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

ENV = {"SCHOCKEN_SECRET_KEY": "chancen-test-" + "x" * 32}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    db = tmp_path_factory.mktemp("chancen") / "data" / "chancen.sqlite3"
    yield from served(db, 2, ENV, background=False)


def table_with_odds(base: str) -> offline.Table:
    """A game in which Anna opened with Schock 5 in two throws; the odds shown everywhere."""
    t = offline.Table(base)
    status, body, _ = offline.request(
        base, "PATCH", f"/api/v1/stammtische/{t.slug}", {"odds_shown": "form_and_tv"}, t.token
    )
    assert status == 200, body
    t.call("POST", f"/games/{t.game}/turns", {"player": "Anna", "dice": [1, 1, 5], "throws": 2})
    return t


def test_the_throw_card_shows_the_chancen_on_a_phone_and_records_a_throw(
    browser: Any, server: Server
) -> None:
    t, p = throw_card(browser, server)
    try:
        page = p.page
        for row, pip in enumerate("141", start=1):
            page.locator(".throw-row").nth(row - 1).locator("label.die", has_text=pip).click()
        lines = page.locator("#chancen li")
        # with JavaScript the phone's engine shows them as the dice are tapped, nothing sent
        expect(lines.first).to_have_text(
            "Beide Einsen rauslegen, noch einmal: 33 % – schlechter als Anna wird man nicht",
            timeout=90_000,  # the engine's first load on a busy machine
        )
        assert page.evaluate("location.pathname") == t.url
        page.locator(".throw-row").nth(1).locator("label.die", has_text="5").click()
        # 1-5-1 is Schock 5 in one throw: better than Anna's in two, standing is sure
        expect(lines.first).to_have_text(
            "Stehen lassen: 100 % – schlechter als Anna wird man nicht"
        )
        page.locator(".throw-row").nth(1).locator("label.die", has_text="4").click()
        expect(lines.nth(1)).to_have_text("Eine Eins rauslegen, noch einmal: 8 %")
        page.get_by_role("button", name="Chancen zeigen").click()  # the server says the same
        expect(lines.first).to_have_text(
            "Beide Einsen rauslegen, noch einmal: 33 % – schlechter als Anna wird man nicht"
        )
        assert lines.count() == 3
        page.locator("#chancen").scroll_into_view_if_needed()
        p.check_layout("chancen")
        page.screenshot(path=str(artifact()), full_page=True)
        for row in (1, 3):
            page.locator(f"input[name=x{row}]").check()
        page.get_by_role("button", name="Rauslegen, nochmal").click()
        expect(page.locator("#offener-zug")).to_contain_text("rausgelegt: 1-1")
    finally:
        closed(p)


def throw_card(browser: Any, server: Server) -> tuple[offline.Table, Any]:
    """The game page of :func:`table_with_odds` on a phone (online, the plain form; the
    engine's files kept by the service worker, as on a phone that saw the page before), the
    throw card open: (table, phone)."""
    server.revive()
    t = table_with_odds(server.base)
    p = offline.logged_in(browser, server.base, t)
    p.page.locator("#wurf-fuer-wurf > summary").click()
    return t, p


def artifact(name: str = "chancen-390.png") -> Any:
    from test_web_browser import ARTIFACTS

    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS / name


def test_offline_two_throws_wait_on_the_phone_finish_the_turn_and_arrive_once(
    browser: Any, server: Server
) -> None:
    """Offline, Bert's turn throw by throw: a throw without dice refused at once, then
    "Rauslegen, nochmal" with 1-1 set aside and "Stehen lassen" with a 6. The phone's engine
    shows the open turn, then the finished turn (Clara is next); back online, the server has
    exactly those two throws, each once."""
    t, p = throw_card(browser, server)
    try:
        page = p.page
        offline.go_offline(p)
        page.get_by_role("button", name="Stehen lassen").click()  # no die chosen: refused
        expect(page.locator("#wurf-fuer-wurf .offline-error")).to_have_text(
            "Bitte alle 3 Würfel des Wurfs wählen (es fehlt Würfel 1, 2, 3).",
            timeout=120_000,  # the engine's start
        )
        assert offline.waiting(p) == []  # nothing kept
        rows = page.locator("#wurf-fuer-wurf .throw-row")
        for row, pip in enumerate("14"):
            rows.nth(row).locator("label.die", has_text=pip).click()
        # "Chancen zeigen" with a die missing: the phone's engine draws the server's card
        page.get_by_role("button", name="Chancen zeigen").click()
        expect(page.locator("#chancen")).to_contain_text(DICE_FIRST)
        rows.nth(2).locator("label.die", has_text="1").click()  # the dice tapped are kept
        expect(page.locator("#chancen li").first).to_contain_text("Beide Einsen rauslegen")
        berts_two_throws(p)
        expect(page.locator("#runde li").nth(1)).to_have_text("Bert Schock 6 1-1-6, 2 Würfe")
        p.check_layout("offline throws")
        page.screenshot(path=str(artifact("wurf-offline-390.png")), full_page=True)
        assert t.call("GET", f"/games/{t.game}")["seq"] == 1  # nothing has left the phone

        offline.back_online(p)
        page.wait_for_function("() => !document.querySelector('#offline-list li')")
        expect(page.locator("#ansage")).to_contain_text("Nachgetragen, jetzt auf dem Server:")
        assert t.call("GET", f"/games/{t.game}")["seq"] == 3  # two throws, each once
        turns = [e for e in t.call("GET", f"/games/{t.game}/log")["events"] if "player" in e]
        assert turns[1] == {
            "player": "Bert",
            "detail": [{"dice": [1, 4, 1], "aside": [1, 1]}, {"dice": [6]}],
        }
        assert len(turns) == 2
    finally:
        closed(p)


def berts_two_throws(p: Any) -> None:
    """Offline, Bert's 1-4-1 tapped on the card: the ones set aside, "Rauslegen, nochmal"
    (the phone shows the open turn), then a 6 and "Stehen lassen" (Clara is next); both wait."""
    page = p.page
    for row in (1, 3):
        page.locator(f"input[name=x{row}]").check()
    page.get_by_role("button", name="Rauslegen, nochmal").click()
    opened = page.locator("#offener-zug")
    expect(opened).to_contain_text("rausgelegt: 1-1", timeout=120_000)  # the engine's start
    expect(opened).to_contain_text("Wurf 2 von höchstens 2 Würfe")
    assert offline.waiting(p) == ["Bert: Wurf 1 – 1-1-4, legt 1-1 heraus – wartet"]
    expect(page.get_by_role("button", name="Rauslegen, nochmal")).to_have_count(0)  # the limit
    page.locator(".throw-row").nth(0).locator("label.die", has_text="6").click()
    page.get_by_role("button", name="Stehen lassen").click()
    expect(page.locator("#am-zug")).to_have_text("Clara")
    assert offline.waiting(p) == [
        "Bert: Wurf 1 – 1-1-4, legt 1-1 heraus – wartet",
        "Bert: Schock 6 (1-1-6, 2 Würfe) – wartet",
    ]
    offline.status_becomes(p, "Offline – 2 Einträge warten")


def test_throws_that_no_longer_fit_are_dropped_together_after_another_phone_wrote(
    browser: Any, server: Server
) -> None:
    """Bert's two throws wait offline while another phone records Bert's whole turn; online
    again the phone shows both as not fitting, and dropping the first drops the second: the
    server keeps the other phone's turn only."""
    t, p = throw_card(browser, server)
    try:
        page = p.page
        offline.go_offline(p)
        for row, pip in enumerate("141"):
            page.locator(".throw-row").nth(row).locator("label.die", has_text=pip).click()
        berts_two_throws(p)
        t.call("POST", f"/games/{t.game}/turns", {"player": "Bert", "dice": [6, 5, 4], "throws": 1})
        offline.back_online(p)
        choice = page.locator("#offline-choice")
        expect(choice).to_contain_text("Auf einem anderen Handy wurde inzwischen eingetragen")
        expect(choice.locator("li")).to_have_text(
            [
                "Bert: Wurf 1 – 1-1-4, legt 1-1 heraus – passt nicht mehr: "
                "Bert ist nicht an der Reihe, sondern Clara.",
                "Bert: Schock 6 (1-1-6, 2 Würfe) – passt nicht mehr: "
                "Ein früherer Wurf dieses Zugs passt nicht mehr.",
            ]
        )
        page.locator("#offline-force").click()  # "Trotzdem nach dem neuen Stand eintragen"
        drop = page.locator("#offline-drop-one")
        expect(drop).to_have_text("Diesen Wurf verwerfen (mit den späteren Würfen seines Zugs)")
        expect(page.locator("#offline-edit-one")).to_have_count(0)
        drop.click()
        page.wait_for_function("() => !document.querySelector('#offline-list li')")
        expect(page.locator("#am-zug")).to_have_text("Clara")
        rows = page.evaluate(
            """() => new Promise((done) => {
                 const open = indexedDB.open("schocken-offline", 1);
                 open.onsuccess = () => {
                   const all = open.result.transaction("entries").objectStore("entries").getAll();
                   all.onsuccess = () => done(all.result.length);
                 };
               })"""
        )
        assert rows == 0  # nothing left on the phone
        assert t.call("GET", f"/games/{t.game}")["seq"] == 2  # Anna's and Bert's turns only
    finally:
        closed(p)
