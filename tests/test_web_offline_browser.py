"""Offline entry in real Chromium with the phone's own engine (Pyodide), the network cut
mid-game (``context.set_offline``).

``schocken serve --workers 2`` on a temporary SQLite file; the Stammtisch, its players and
the game are made through the REST API, the phone logs in on the form. Offline, the engine
checks every tap and draws the next screen (the opener's limit included); the waiting turns
keep their players through a reload; online again, every turn arrives exactly once, with the
sentences of the flush shown after it. A second phone (its own browser context, opened
through the invite link) writing meanwhile ends in a German choice in which every waiting
entry keeps its player: none is ever recorded for another player. A game decided meanwhile
says so.

Without Chromium the tests are skipped, unless ``CI`` is set: then they fail.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from test_api_serve import Server, request, served
from test_web_browser import (
    Phone,
    board,
    browser_type_launch_args,  # noqa: F401 - Debian's Chromium
    closed,
)

from api.rules import Game, parse_event, ruleset_from_config

#: two phones, a server stopped and started: longer than the run's 120 s default when busy
pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
RULES = {"preset": "standard", "overrides": {"deckel": 13}}
DICE = ["113", "653", "542", "421", "221", "654", "631", "542", "332", "611", "521", "444"]


ENV = {"SCHOCKEN_SECRET_KEY": "offline-test-" + "x" * 32}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``schocken serve`` for the module's tests (each makes a Stammtisch of its own)."""
    db = tmp_path_factory.mktemp("offline") / "data" / "offline.sqlite3"
    yield from served(db, 2, ENV, background=False)


@pytest.fixture
def serve(server: Server) -> Server:
    """The module's server, running: a test may kill it and start it again (same port and
    file)."""
    server.revive()
    return server


@pytest.fixture
def base(serve: Server) -> str:
    return serve.base


class Table:
    """A Stammtisch, its players and one running game, through the REST API."""

    def __init__(self, base: str, players: list[str] = PLAYERS) -> None:
        self.base = base
        status, body, _ = request(base, "POST", "/api/v1/stammtische", {"name": "Kellerkneipe"})
        assert status == 201, body
        self.slug, self.token = body["slug"], body["token"]
        for name in players:
            self.call("POST", "/players", {"name": name})
        game = {"players": players, "starter": "Anna", "rules": RULES}
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


def opened(
    browser: Any, base: str, table: Table, timeout: int = 20000, link_decides: bool = False
) -> Phone:
    """A phone that opened ``table`` on the form's login (its slug and token); ``timeout``:
    its actions' default, in ms; ``link_decides``: see :class:`Phone`."""
    p = Phone(browser, base, 390, True, link_decides)
    p.context.set_default_timeout(timeout)
    page = p.page
    page.goto("/")
    page.fill("#login-slug", table.slug)
    page.fill("#login-token", table.token)
    page.get_by_role("button", name="Öffnen").click()
    return p


def invited(browser: Any, base: str, a: Phone) -> Phone:
    """A second phone, through the invite link that phone ``a`` shows."""
    invite = a.page.locator("#invite-link").text_content() or ""
    b = Phone(browser, base, 390, True)
    b.context.set_default_timeout(20000)
    b.page.goto(invite)
    return b


def logged_in(browser: Any, base: str, table: Table) -> Phone:
    p = opened(browser, base, table)
    page = p.page
    # the plain form online whatever the machine's load (not the slow-link heuristic)
    page.evaluate("localStorage.setItem('schocken.queue', 'never')")
    page.goto(table.url)
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    page.reload()  # now through the service worker, which keeps the page
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    engine_kept(p)
    return p


def engine_kept(p: Phone) -> None:
    """The engine's files are on the phone (fetched by the service worker after the first
    paint, without starting the engine)."""
    p.page.wait_for_function(
        """async () => {
          const wanted = document.querySelector('meta[name="schocken-engine"]')
            .getAttribute("data-files").split(" ").filter(Boolean).length;
          const cache = await caches.open("schocken-engine-v1");
          return (await cache.keys()).length >= wanted;
        }""",
        timeout=60000,
    )


@pytest.fixture
def phone(browser: Any, base: str) -> Iterator[tuple[Phone, Table]]:
    table = Table(base)
    p = logged_in(browser, base, table)
    yield p, table
    closed(p)


def test_chromium_finds_the_form_installable(phone: tuple[Phone, Table]) -> None:
    p, _table = phone
    cdp = p.context.new_cdp_session(p.page)
    answer = cdp.send("Page.getInstallabilityErrors")
    errors = [e["errorId"] for e in answer["installabilityErrors"]]
    assert [e for e in errors if e != "in-incognito"] == []  # a test context is incognito
    manifest = cdp.send("Page.getAppManifest")
    assert manifest["errors"] == []


def tap_turn(p: Phone, dice: str, throws: str = "1 Wurf") -> None:
    page = p.page
    for row, pip in enumerate(dice, start=1):
        page.locator(f"#eingabe .die-row:nth-of-type({row}) label.die", has_text=pip).click()
    page.locator("#eingabe button.throw", has_text=re.compile(f"^{throws}$")).click()


def online_turn(p: Phone, dice: str) -> None:
    """A turn through the plain form (online, nothing waiting): the server's next page."""
    with p.page.expect_navigation():
        tap_turn(p, dice)
    p.page.wait_for_load_state("load")


def offline_turns(p: Phone, *dice: str) -> None:
    """Turns tapped without a connection: each checked by the phone's engine and waiting."""
    for d in dice:
        before = len(waiting(p))
        tap_turn(p, d)
        p.page.wait_for_function(
            f"() => document.querySelectorAll('#offline-list li').length === {before + 1}",
            timeout=90000,  # the first tap waits for the engine's start
        )


def engine_ready(p: Phone) -> None:
    """The page's engine is loaded; a failed start fails at once, with what the page said,
    and a start that never ends fails with what the page and its worker did meanwhile."""
    seen: list[str] = []
    p.page.on("console", lambda m: seen.append(f"console {m.type}: {m.text}"))
    p.page.on("requestfailed", lambda r: seen.append(f"failed: {r.url} {r.failure}"))
    p.page.on("worker", lambda w: seen.append(f"worker: {w.url}"))
    state = """() => ({engine: document.documentElement.dataset.engine,
                      said: (document.getElementById('offline-status') || {}).textContent,
                      timings: window.SchockenEngine.timings,
                      controlled: !!navigator.serviceWorker.controller,
                      fetched: performance.getEntriesByType('resource')
                        .filter(e => /engine|pyodide/.test(e.name))
                        .map(e => [e.name.split('/').pop(), Math.round(e.duration)])})"""
    try:
        p.page.wait_for_function(
            "() => ['ready', 'failed'].includes(document.documentElement.dataset.engine)",
            timeout=120000,  # Pyodide compiles its WebAssembly: slow beside a busy test worker
        )
    except PlaywrightTimeoutError:
        pytest.fail(f"the engine did not start: {p.page.evaluate(state)}; meanwhile: {seen}")
    assert p.page.evaluate(state)["engine"] == "ready", p.page.evaluate(state)


def status_becomes(p: Phone, text: str) -> None:
    shown = "(document.getElementById('offline-status') || {}).textContent"
    p.page.wait_for_function(f"() => {shown} === {json.dumps(text)}", timeout=30000)


def waiting(p: Phone) -> list[str]:
    return p.page.locator("#offline-list li").all_inner_texts()


def warm_engine(p: Phone) -> None:
    """The engine started while online (as a first visit does by itself)."""
    p.page.evaluate("() => window.SchockenEngine.start().then(() => true)")


def go_offline(p: Phone) -> None:
    """The network cut, and the page knows it (a tap before that would be a plain POST)."""
    p.context.set_offline(True)
    p.page.wait_for_function("() => !navigator.onLine")


def back_online(p: Phone) -> None:
    p.context.set_offline(False)
    p.page.evaluate("window.dispatchEvent(new Event('online'))")  # as the phone's radio says


def test_ten_turns_entered_offline_arrive_once_with_their_sentences_after_the_flush(
    phone: tuple[Phone, Table],
) -> None:
    p, table = phone
    page = p.page
    online_turn(p, DICE[0])
    online_turn(p, DICE[1])
    assert len(table.turns()) == 2

    go_offline(p)
    offline_turns(p, *DICE[2:12])
    status_becomes(p, "Offline – 10 Züge warten")
    first = waiting(p)[:2]
    assert first == [
        "Clara: Zahl 542 (2-4-5, 1 Wurf) – wartet",
        "Dieter: Zahl 421 (1-2-4, 1 Wurf) – wartet",
    ]
    # the engine's own screen: the board and whose turn, as the server will have them
    players = ["Anna", "Bert"] + [w.split(":")[0] for w in waiting(p)]
    tapped = [
        {"player": who, "dice": [int(d) for d in dice], "throws": 1}
        for who, dice in zip(players, DICE[:12], strict=True)
    ]
    expected = replay(tapped).state().to_json()
    assert board(p) == {"mitte": expected["mitte"], "stacks": expected["stacks"]}
    assert page.locator("#am-zug").inner_text() == expected["next_player"]
    assert len(table.turns()) == 2  # nothing reached the server

    page.close()  # the tab closed, offline; a new tab: the stored page, the queue, the engine
    page = p.page = p.context.new_page()
    page.goto(table.url)
    engine_ready(p)
    status_becomes(p, "Offline – 10 Züge warten")
    assert board(p) == {"mitte": expected["mitte"], "stacks": expected["stacks"]}

    back_online(p)
    status_becomes(p, "")
    assert waiting(p) == []
    turns = table.turns()
    assert [(t["player"], sorted(t["dice"])) for t in turns] == [
        (t["player"], sorted(t["dice"])) for t in tapped
    ]  # in order, each exactly once, each for its own player
    said = page.locator("#ansage").inner_text()
    assert said.startswith("Nachgetragen, jetzt auf dem Server:")
    assert "bekommt" in said  # the rounds' sentences of the flush, after it
    page.reload()
    assert board(p) == {"mitte": expected["mitte"], "stacks": expected["stacks"]}


def test_offline_the_openers_waiting_turn_sets_the_limit_and_an_illegal_tap_is_refused(
    phone: tuple[Phone, Table],
) -> None:
    p, table = phone
    page = p.page
    warm_engine(p)
    go_offline(p)
    offline_turns(p, "653")  # Anna opens with one throw
    assert "Anna hat vorgelegt: höchstens 1 Wurf" in page.locator("#vorgabe").inner_text()
    assert page.locator("#eingabe button.throw").all_inner_texts() == ["1 Wurf"]
    assert page.locator("#am-zug").inner_text() == "Bert"
    page.fill("#wurf", "11")  # two dice: refused at once, in German, nothing waits
    page.locator("#eingabe button.throw").first.click()
    error = page.locator("#eingabe .error")
    error.wait_for()
    assert "Würfel" in error.inner_text()
    assert len(waiting(p)) == 1
    assert table.turns() == []


def test_a_second_phone_writing_meanwhile_never_gets_a_turn_booked_to_another_player(
    browser: Any, base: str
) -> None:
    """The defect's repro: phone A enters Anna's opener, phone B joins through the invite
    link; A, offline, enters Bert's and Clara's turns; B enters Bert's turn; A reconnects and
    chooses "Trotzdem …": Bert's waiting turn is refused (he has thrown), Clara's stays Clara's."""
    table = Table(base)
    a = logged_in(browser, base, table)
    online_turn(a, "653")  # Anna
    b = invited(browser, base, a)
    assert b.page.locator("#am-zug").inner_text() == "Bert"

    go_offline(a)
    offline_turns(a, "421", "542")  # Bert's and Clara's turns, as A saw them
    assert [w.split(":")[0] for w in waiting(a)] == ["Bert", "Clara"]
    online_turn(b, "665")  # Bert's real turn, on phone B

    back_online(a)
    choice = a.page.locator("#offline-choice")
    choice.wait_for()
    text = choice.inner_text()
    assert "Auf einem anderen Handy wurde inzwischen eingetragen (Zug von Bert (5-6-6))" in text
    assert (
        "Bert: Zahl 421 (1-2-4, 1 Wurf) – passt nicht mehr: Bert ist nicht an der Reihe, sondern Clara."
        in text
    )
    assert "Clara: Zahl 542 (2-4-5, 1 Wurf) – passt" in text
    a.page.get_by_role("button", name="Trotzdem nach dem neuen Stand eintragen").click()
    a.page.locator("#offline-choice").wait_for()
    assert "passt nicht zum neuen Stand" in a.page.locator("#offline-choice").inner_text()
    a.page.get_by_role("button", name="Diesen Eintrag verwerfen").click()
    status_becomes(a, "")
    turns = [(t["player"], sorted(t["dice"])) for t in table.turns()]
    assert turns == [("Anna", [3, 5, 6]), ("Bert", [5, 6, 6]), ("Clara", [2, 4, 5])]
    assert a.page.locator("#am-zug").inner_text() == "Dieter"
    closed(a)
    closed(b)


def test_a_game_decided_on_another_phone_says_so_and_offers_to_drop_the_queue(
    browser: Any, base: str
) -> None:
    table = Table(base, ["Anna", "Bert"])
    a = logged_in(browser, base, table)
    warm_engine(a)
    go_offline(a)
    offline_turns(a, "542")  # Anna's opener, waiting
    for player, dice in (("Anna", "111"), ("Bert", "653"), ("Bert", "653"), ("Anna", "111")):
        table.turn(player, dice)  # the other phone: Blattschuss for Bert
    back_online(a)
    choice = a.page.locator("#offline-choice")
    choice.wait_for()
    assert "Das Spiel ist schon entschieden: Bert hat verloren." in choice.inner_text()
    assert a.page.locator("#eingabe").count() == 0  # no input for a decided game
    a.page.get_by_role("button", name="Wartende Einträge verwerfen").click()
    status_becomes(a, "Die wartenden Einträge dieses Handys wurden verworfen.")
    assert waiting(a) == []
    assert "Bert hat verloren" in a.page.locator("#ergebnis").inner_text()
    assert len(table.turns()) == 4
    closed(a)


def test_a_damaged_record_on_the_phone_is_dropped_with_a_message_never_sent(
    phone: tuple[Phone, Table],
) -> None:
    p, table = phone
    page = p.page
    page.evaluate(
        """(game) => new Promise((resolve) => {
          const req = indexedDB.open("schocken-offline", 1);
          req.onsuccess = () => {
            const t = req.result.transaction("entries", "readwrite");
            t.objectStore("entries").add({game: game, kind: "turn", seq: 0, key: "k",
                                          fields: {wurf: "113", throws: "1"}});
            t.oncomplete = () => resolve(true);
          };
        })""",
        table.url,
    )
    page.reload()
    notice = page.locator(".offline-notice")
    notice.wait_for()
    assert "beschädigter Eintrag" in notice.inner_text()
    assert waiting(p) == []
    assert table.turns() == []


NOT_KEPT = (
    "Die Spiel-Engine ist auf diesem Telefon noch nicht gespeichert. Ohne Netz bitte die Würfe "
    "aufschreiben und später eintragen. Offline nimmt dieses Handy ohne die Spiel-Engine nichts an."
)


def forget_engine_files(p: Phone, *names: str) -> None:
    """The engine's files whose URL holds one of ``names`` gone from the service worker's
    cache and the browser's (as on a phone that lost its connection while they were being
    stored); deleted until they stay away for two seconds (the service worker may still be
    storing a copy it fetched twice: both pages asked it to keep them)."""
    p.page.evaluate(
        """async (names) => {
          const cache = await caches.open("schocken-engine-v1");
          for (let clean = 0; clean < 2; ) {
            const gone = (await cache.keys()).filter((r) => names.some((n) => r.url.includes(n)));
            await Promise.all(gone.map((r) => cache.delete(r)));
            clean = gone.length ? 0 : clean + 1;
            await new Promise((wait) => setTimeout(wait, 1000));
          }
        }""",
        list(names),
    )
    p.context.new_cdp_session(p.page).send("Network.clearBrowserCache")


@pytest.mark.parametrize(
    "missing",
    [
        # the runtime's big files (where Pyodide used to wait for good) and the bundle
        ("pyodide.asm.wasm", "python_stdlib.zip", ".zip"),
        ("pyodide.asm.wasm",),
        ("/engine/",),  # all of them
    ],
    ids=["runtime", "wasm", "all"],
)
def test_offline_without_the_engines_files_the_phone_says_so_at_once_and_takes_nothing(
    phone: tuple[Phone, Table], missing: tuple[str, ...]
) -> None:
    """The page is the service worker's, but the engine's files (some or all) are not kept:
    offline, its start fails within seconds with a German note on what to do (it used to stay
    "loading" for good), a tap is refused and nothing waits; online again the form posts."""
    p, table = phone
    page = p.page
    forget_engine_files(p, *missing)
    go_offline(p)  # offline.js starts the engine
    failed = f"""() => document.documentElement.dataset.engine === 'failed' &&
      document.getElementById('offline-status').textContent === {json.dumps(NOT_KEPT)}"""
    page.wait_for_function(failed, timeout=20000)  # it used to stay "loading" for good
    tap_turn(p, DICE[0])  # the tap tries the engine again: refused, nothing kept
    page.wait_for_function(failed, timeout=20000)
    assert waiting(p) == []
    back_online(p)
    online_turn(p, DICE[0])  # the plain form, the server's next page
    assert [sorted(t["dice"]) for t in table.turns()] == [[1, 1, 3]]
    assert waiting(p) == []


def test_a_form_posted_while_the_server_is_unreachable_shows_the_stored_page_queues_nothing(
    phone: tuple[Phone, Table], serve: Server
) -> None:
    """The phone thinks it is online (navigator.onLine), the engine is not started, but the
    server is gone: the service worker answers the posted form with the stored game page and
    queues nothing unchecked."""
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


def test_logging_out_forgets_the_stored_pages(phone: tuple[Phone, Table]) -> None:
    p, table = phone
    page = p.page
    page.goto(f"/s/{table.slug}/")
    page.get_by_role("button", name="Abmelden").click()
    page.wait_for_load_state("load")
    go_offline(p)
    page.goto(table.url)  # without signal: no stored copy of the game any more
    assert page.locator("h1").inner_text() == "Offline"
    assert page.locator("#board").count() == 0


def test_two_phones_offline_with_the_same_players_turn_record_it_once(
    browser: Any, base: str
) -> None:
    """Both phones offline, both enter Bert's turn; after both reconnect exactly one is
    recorded, and the other phone is told and shows the real state."""
    table = Table(base)
    a = logged_in(browser, base, table)
    online_turn(a, "653")  # Anna
    b = invited(browser, base, a)
    b.page.evaluate("localStorage.setItem('schocken.queue', 'never')")
    b.page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    engine_kept(b)
    engine_ready(b)  # a first visit starts the engine at once, in the background
    go_offline(a)
    go_offline(b)
    offline_turns(a, "421")
    offline_turns(b, "665")
    back_online(a)
    status_becomes(a, "")
    back_online(b)
    choice = b.page.locator("#offline-choice")
    choice.wait_for()
    assert "Bert ist nicht an der Reihe, sondern Clara." in choice.inner_text()
    b.page.get_by_role("button", name="Verwerfen und neu eingeben").click()
    status_becomes(b, "Die wartenden Einträge dieses Handys wurden verworfen.")
    assert b.page.locator("#am-zug").inner_text() == "Clara"  # the real state
    assert waiting(b) == []
    turns = [(t["player"], sorted(t["dice"])) for t in table.turns()]
    assert turns == [("Anna", [3, 5, 6]), ("Bert", [1, 2, 4])]
    closed(a)
    closed(b)


def test_on_a_slow_link_a_tap_goes_through_the_phones_engine_without_a_page_load(
    browser: Any, base: str
) -> None:
    """The slow-link switch (offline.js, SLOW_MS): a page that took longer than 400 ms from
    its request to its last byte sends the next tap through the phone's engine and queue
    (no form POST, no page load), and the turn is recorded once."""
    table = Table(base)
    p = opened(browser, base, table, link_decides=True)  # no "schocken.queue" setting
    page = p.page

    def slow_link(route: Any) -> None:  # the page's bytes take 600 ms (the service worker's
        time.sleep(0.6)  # fetch as well: the context's routes see it)
        route.continue_()

    p.context.route(f"**{table.url}", slow_link)
    page.goto(table.url)
    took = page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " return n.responseEnd - n.requestStart; }"
    )
    assert took > 400, took
    p.context.unroute(f"**{table.url}", slow_link)
    page.evaluate("window.samePage = true")
    tap_turn(p, "653")
    engine_ready(p)
    page.wait_for_function("() => document.querySelectorAll('#offline-list li').length === 0")
    polls = 300  # 60 s at most
    while [t["player"] for t in table.turns()] != ["Anna"] and polls:
        page.wait_for_timeout(200)
        polls -= 1
    assert [(t["player"], sorted(t["dice"])) for t in table.turns()] == [("Anna", [3, 5, 6])]
    assert page.evaluate("window.samePage") is True  # the engine answered, not a new page
    closed(p)
