"""The pub TV in real Chromium: the board follows the event stream.

``schocken serve --workers 2`` on a temporary SQLite file; the page is opened once, the game is
played through the REST API (as a phone app would), and the board must change from the stream
within seconds (the page's own board read comes only every minute). Then the server is killed
and started again on the same port: the page reconnects, re-reads the board and goes on.
Screenshots (1920 × 1080 and 390 × 844, a running game and the pause between games) go to the
test's ``tmp_path``, or to the folder ``TV_SCREENSHOTS`` names (never into the repository).

axe-core over the TV (between games and during one) is a line of ``PAGES`` in
``tests/test_web_axe_browser.py``.

Without Chromium the tests are skipped, unless ``CI`` is set: then they fail.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from test_api_serve import Server, request, served
from test_web_browser import browser_type_launch_args  # noqa: F401 - Debian's Chromium

pytestmark = pytest.mark.browser

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
RULES = {"preset": "standard", "overrides": {"deckel": 3}}
HALF1 = [("Anna", "113"), ("Bert", "653"), ("Clara", "542"), ("Dieter", "421")]
HALF2 = [("Dieter", "113"), ("Anna", "421"), ("Bert", "653"), ("Clara", "542")]
FINALE = [("Anna", "111"), ("Dieter", "654")]
#: how long the board may take to follow an event (the stream, not the minute's board read)
LIVE_MS = 30_000  # a guard, not a deadline: below the minute's board read all the same
ENV = {"SCHOCKEN_SECRET_KEY": "tv-test-" + "x" * 32}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``schocken serve`` for the module's tests (each makes a Stammtisch of its own)."""
    yield from served(tmp_path_factory.mktemp("tv") / "data" / "tv.sqlite3", 2, ENV)


@pytest.fixture
def serve(server: Server) -> Server:
    """The module's server, running: a test may kill it and start it again (same port and
    file)."""
    server.revive()
    return server


class Pub:
    """A Stammtisch with four players, played through the REST API."""

    def __init__(self, base: str, **fields: Any) -> None:
        self.base = base
        body = {"name": "Zur Post", **fields}
        status, body, _ = request(base, "POST", "/api/v1/stammtische", body)
        assert status == 201, body
        self.slug, self.token = body["slug"], body["token"]
        for name in PLAYERS:
            self.call("POST", "/players", {"name": name})
        self.game = 0

    def call(self, method: str, path: str, body: Any = None) -> Any:
        url = f"/api/v1/stammtische/{self.slug}{path}"
        status, answer, _ = request(self.base, method, url, body, self.token)
        assert status in (200, 201), answer
        return answer

    def start(self, starter: str = "Anna") -> int:
        body = {"players": PLAYERS, "starter": starter, "rules": RULES}
        self.game = int(self.call("POST", "/games", body)["id"])
        return self.game

    def turn(self, player: str, dice: str, throws: int = 1, game: int | None = None) -> list[str]:
        body = {"player": player, "dice": [int(d) for d in dice], "throws": throws}
        answer = self.call("POST", f"/games/{game or self.game}/turns", body)
        return [e["message"] for e in answer["events"]]


class Screen:
    """A browser context the size of a screen that talks to nothing but 127.0.0.1."""

    def __init__(self, browser: Any, base: str, width: int, height: int) -> None:
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(
            viewport={"width": width, "height": height},
            locale="de-DE",
            base_url=base,
        )
        self.context.set_default_timeout(LIVE_MS)
        self.context.route("**/*", self._guard)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda err: self.errors.append(str(err)))
        self.page.on(
            "console", lambda m: self.errors.append(m.text) if "Refused" in m.text else None
        )

    def _guard(self, route: Any) -> None:
        if urlsplit(route.request.url).hostname != "127.0.0.1":
            self.outside.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    def open(self, slug: str, query: str = "") -> None:
        self.page.goto(f"/tv/{slug}{query}")
        self.page.wait_for_selector("body[data-stream=open]")

    def text(self, selector: str) -> str:
        return " ".join(str(self.page.locator(selector).inner_text()).split())

    def wait_text(self, selector: str, expected: str) -> None:
        """Until the element's text is ``expected`` (the board is swapped in, not edited)."""
        self.page.wait_for_function(
            "([sel, want]) => { const el = document.querySelector(sel);"
            " return !!el && el.textContent.replace(/\\s+/g, ' ').trim() === want; }",
            arg=[selector, expected],
            timeout=LIVE_MS,
        )

    def deckel(self, name: str) -> str:
        return self.text(f'.player[data-player="{name}"] .num')

    def fits(self) -> None:
        size = self.page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth,"
            " document.documentElement.scrollHeight, window.innerHeight]"
        )
        assert size[0] <= size[1], f"wider than the screen: {size}"
        assert size[2] <= size[3], f"taller than the screen: {size}"

    def shot(self, path: Path) -> None:
        self.fits()
        self.page.screenshot(path=path)

    def close(self) -> None:
        self.context.close()
        assert self.outside == [], self.outside
        assert self.errors == [], self.errors


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the screenshots go."""
    folder = Path(os.environ.get("TV_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def screens(browser: Any, serve: Server) -> Iterator[Any]:
    made: list[Screen] = []

    def make(width: int = 1920, height: int = 1080) -> Screen:
        made.append(Screen(browser, serve.base, width, height))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_the_board_follows_the_stream_through_a_game(
    serve: Server, screens: Any, shots: Path
) -> None:
    pub = Pub(serve.base)
    tv, phone = screens(), screens(390, 844)
    for s in (tv, phone):
        s.open(pub.slug)
    tv.wait_text("#ticker", "Warte auf das nächste Spiel …")
    tv.shot(shots / "tv-pause-1920.png")
    phone.shot(shots / "tv-pause-390.png")

    game = pub.start()  # game_started: both screens switch to the new game
    for s in (tv, phone):
        s.page.wait_for_selector(f'#screen[data-game="{game}"][data-state=running]')
        s.wait_text("#tv-am-zug", "Anna")
    assert tv.text("#ticker") == "Neues Spiel: Anna, Bert, Clara und Dieter. Anna fängt an."

    pub.turn(*HALF1[0])
    pub.turn("Bert", "654")  # mistyped: taken back, the board goes back with it
    tv.wait_text("#tv-am-zug", "Clara")
    undone = pub.call("POST", f"/games/{game}/undo", {"by": "Test"})["events"][0]["message"]
    tv.wait_text("#ticker", undone)  # the stream's sentence stays: the board is no newer
    tv.wait_text("#tv-am-zug", "Bert")
    assert undone.startswith("Rückgängig gemacht: ")
    messages = pub.turn(*HALF1[1])
    tv.wait_text("#tv-am-zug", "Clara")
    tv.wait_text("#ticker", messages[-1])
    assert tv.text("#tv-throws") == "höchstens 1 Wurf"
    tv.shot(shots / "tv-running-1920.png")
    phone.wait_text("#tv-am-zug", "Clara")
    phone.shot(shots / "tv-running-390.png")

    messages = [m for player, dice in HALF1[2:] for m in pub.turn(player, dice)]
    tv.wait_text("#tv-phase", "2. Hälfte")
    assert tv.text("#ticker").startswith("Dieter bekommt 3 Deckel")
    assert "verliert die erste Hälfte" in tv.text("#ticker")
    assert tv.deckel("Dieter") == "0"  # the Deckel went back for the second half
    assert tv.text('.player[data-player="Dieter"] .tags') == "am Zug beginnt 1. Hälfte verloren"

    for player, dice in HALF2:
        pub.turn(player, dice)
    tv.wait_text("#tv-phase", "Finale: Anna gegen Dieter")
    for player, dice in FINALE:
        pub.turn(player, dice)
    tv.wait_text("#tv-phase", "Spiel vorbei")
    assert "Dieter hat verloren" in tv.text("#tv-result")
    # the statistics come from the refresher (a request never computes them): until its round
    # the board says "wird aktualisiert" and asks again
    tv.page.wait_for_function(
        "() => (document.querySelector('#tv-verlierer')?.textContent || '').includes('Dieter')",
        timeout=LIVE_MS,
    )
    assert tv.text("#ticker") == "Warte auf das nächste Spiel …"

    second = pub.start("Dieter")
    tv.page.wait_for_selector(f'#screen[data-game="{second}"][data-state=running]')
    tv.wait_text("#tv-am-zug", "Dieter")


def test_the_board_survives_a_server_restart(serve: Server, screens: Any) -> None:
    pub = Pub(serve.base)
    pub.start()
    tv = screens()
    tv.open(pub.slug)
    pub.turn("Anna", "113")
    tv.wait_text("#tv-am-zug", "Bert")

    serve.kill()
    tv.page.wait_for_selector("body[data-stream=lost]")
    assert tv.page.locator("#verbindung").is_hidden()  # a short drop is not worth a word
    tv.page.wait_for_selector("#verbindung", state="visible", timeout=15000)
    assert tv.text("#verbindung") == "Keine Verbindung – neuer Versuch läuft …"
    serve.start()
    # recorded before the page can have reconnected: the re-read after the reconnect shows it
    pub.turn("Bert", "653")
    tv.page.wait_for_selector("body[data-stream=open]", timeout=30000)
    tv.wait_text("#tv-am-zug", "Clara")
    tv.page.wait_for_selector("#verbindung", state="hidden")
    # and the stream goes on after the reconnect
    message = pub.turn("Clara", "542")[-1]
    tv.wait_text("#ticker", message)
    tv.wait_text("#tv-am-zug", "Dieter")


def test_a_private_stammtisch_after_the_form_login(serve: Server, screens: Any) -> None:
    pub = Pub(serve.base, private=True)
    tv = screens()
    tv.page.goto(f"/tv/{pub.slug}")
    assert urlsplit(tv.page.url).path == "/"  # the form's login first
    tv.page.fill("#login-token", pub.token)
    tv.page.locator("#anmelden button[type=submit]").click()
    tv.page.wait_for_load_state("load")
    tv.open(pub.slug)  # the stream takes the login cookie
    pub.start()
    tv.wait_text("#tv-am-zug", "Anna")
    message = pub.turn("Anna", "113")[-1]
    tv.wait_text("#ticker", message)
    tv.wait_text("#tv-am-zug", "Bert")


def test_the_tv_follows_the_latest_entry_and_a_pinned_tv_its_game(
    serve: Server, screens: Any
) -> None:
    pub = Pub(serve.base)
    first = pub.start("Anna")
    follow, pinned = screens(), screens()
    follow.open(pub.slug)
    pinned.open(pub.slug, f"?spiel={first}")
    pub.turn("Anna", "113", throws=3)
    for s in (follow, pinned):  # live (the board read after the stream's event) …
        s.wait_text("#tv-opener", "Anna hat vorgelegt: mit 3 Würfen")
        s.wait_text("#tv-throws", "höchstens 3 Würfe")
    follow.page.reload()  # … and as the server renders the page: the same words
    assert follow.text("#tv-opener") == "Anna hat vorgelegt: mit 3 Würfen"

    second = pub.start("Bert")  # a second table starts: no entry yet, both TVs stay
    follow.page.reload()
    follow.page.wait_for_selector("body[data-stream=open]")
    assert follow.page.get_attribute("#screen", "data-game") == str(first)
    pub.turn("Bert", "653", game=first)
    for s in (follow, pinned):
        s.wait_text("#tv-am-zug", "Clara")
        assert s.page.get_attribute("#screen", "data-game") == str(first)

    pub.turn("Bert", "113", game=second)  # the latest entry: the TV follows it, live
    follow.page.wait_for_selector(f'#screen[data-game="{second}"]')
    follow.wait_text("#tv-opener", "Bert hat vorgelegt: mit 1 Wurf")
    pub.turn("Clara", "542", game=first)  # and back; the pinned TV never left its game
    follow.page.wait_for_selector(f'#screen[data-game="{first}"]')
    for s in (follow, pinned):
        s.wait_text("#tv-am-zug", "Dieter")
    assert pinned.page.get_attribute("#screen", "data-game") == str(first)
    assert pinned.page.get_attribute("body", "data-pinned") == str(first)

    for wanted in ("%C2%B2", "9" * 40, str(second + 100)):
        answer = pinned.page.goto(f"/tv/{pub.slug}?spiel={wanted}")
        assert answer is not None and answer.status == 404
        assert pinned.text("h1") == "Nicht gefunden"
        assert pinned.text(".error").startswith("Bei Zur Post gibt es kein Spiel „")


#: what the connection line must never cover
FIGURES = (
    ".head > *, .player .name, .player .tag, .player .pictos, .player .deckel, #tv-turn p,"
    " .recent li, #ticker"
)
#: the boxes of the connection line and of every visible figure it overlaps
COVERED = """([line, figures]) => {
  const box = document.querySelector(line).getBoundingClientRect();
  const covered = [];
  for (const el of document.querySelectorAll(figures)) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.left < box.right && box.left < r.right && r.top < box.bottom && box.top < r.bottom) {
      covered.push(`${el.className || el.id} "${el.textContent.trim().slice(0, 20)}"`);
    }
  }
  return [box.width, box.height, covered];
}"""


def test_the_connection_line_covers_no_figure(serve: Server, screens: Any, shots: Path) -> None:
    pub = Pub(serve.base)
    pub.start("Anna")
    for player, dice in HALF1[:2]:
        pub.turn(player, dice)
    tv = screens()
    tv.open(pub.slug)
    tv.wait_text("#tv-am-zug", "Clara")
    # the stream is cut and does not come back: the line appears after 5 s
    tv.page.route("**/events?*", lambda route: route.abort())
    tv.page.evaluate("window.dispatchEvent(new Event('online'))")  # tv.js connects anew
    tv.page.wait_for_selector("#verbindung", state="visible", timeout=15000)
    for width, height in ((360, 740), (1024, 768), (1920, 1080)):
        tv.page.set_viewport_size({"width": width, "height": height})
        width_seen, height_seen, covered = tv.page.evaluate(COVERED, ["#verbindung", FIGURES])
        assert width_seen > 0 and height_seen > 0, "the line is not shown"
        assert covered == [], f"{width} px: the connection line covers {covered}"
        if width > height:
            tv.fits()  # the board gives way: still one screen
        tv.page.screenshot(path=shots / f"tv-offline-{width}.png")
