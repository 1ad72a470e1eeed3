"""The pub form in real Chromium at phone size: a whole game through the form, checked against
the engine.

The app runs as ``schocken serve --workers 2`` (two processes) on a temporary SQLite file.
Chromium is Debian's (``.ci/run`` installs it); every request that would leave 127.0.0.1 is
recorded and aborted, and the host resolver maps every other name to nothing. Screenshots of
the main screens go to ``artifacts/`` (not committed).

Without Chromium the tests are skipped, unless ``CI`` is set: then they fail.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect
from test_api_serve import Server

from api.rules import Game, parse_event, ruleset_from_config

pytestmark = pytest.mark.browser

#: how long a retrying assertion (``expect``) waits for the page, in every browser module (they
#: all import this one): a guard against a hang, not a deadline (Playwright's 5 s default is
#: missed by a busy 2-core machine)
expect.set_options(timeout=30_000)

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
RULES = {"preset": "standard", "overrides": {"deckel": 3}}

# The game entered through the form: (player, dice as tapped, throws button).
# Hälfte 1: Dieter takes all 3 Deckel at once; Hälfte 2: Anna; Finale Anna – Dieter, where
# Anna's Schock aus gives Dieter every Deckel: Dieter loses the game.
HALF1 = [("Anna", "113", "1"), ("Bert", "653", "1"), ("Clara", "542", "1"), ("Dieter", "421", "1")]
HALF2 = [("Dieter", "113", "1"), ("Anna", "421", "1"), ("Bert", "653", "1"), ("Clara", "542", "1")]
FINALE = [("Anna", "111", "1"), ("Dieter", "654", "1")]


#: visible controls smaller than 44 × 44 px (a radio or checkbox counts by its label)
SMALL_TARGETS = """() => {
  const out = [];
  const controls = document.querySelectorAll(
    "button, a.button, .top a, summary, select, input, label.die span, label.choice, label.check, label.starter");
  for (const el of controls) {
    if (el.matches("input[type=radio], input[type=checkbox], input[type=hidden]")) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (r.width < 44 || r.height < 44) {
      out.push(`${el.tagName.toLowerCase()} "${(el.textContent || el.name || "").trim().slice(0, 30)}" ${Math.round(r.width)}x${Math.round(r.height)}`);
    }
  }
  return out;
}"""


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def browser_type_launch_args() -> dict[str, Any]:
    """Debian's Chromium; no host but 127.0.0.1 resolves."""
    path = shutil.which("chromium")
    if path is None:
        message = "Debian's chromium is not installed (apt-get install -y chromium)"
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {message}")
        pytest.skip(message)
    return {
        "executable_path": path,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        ],
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`schocken serve --workers 2` (two gunicorn worker processes, so a phone's requests land
    on either) on a temporary SQLite file, one per module (each test makes a Stammtisch of its
    own)."""
    db = tmp_path_factory.mktemp("web") / "data" / "web.sqlite3"
    served = Server(db, workers=2, env={"SCHOCKEN_SECRET_KEY": "browser-test-" + "x" * 32})
    try:
        yield served.base
    finally:
        served.stop()


class Phone:
    """A browser context at phone size that refuses to talk to anything but 127.0.0.1."""

    def __init__(
        self, browser: Any, base: str, width: int, javascript: bool, link_decides: bool = False
    ) -> None:
        """``link_decides``: the form's own switch to the queue on a slow link stays on."""
        self.base = base
        self.width = width
        self.outside: list[str] = []
        self.console_errors: list[str] = []
        self.context = browser.new_context(
            viewport={"width": width, "height": 780},
            device_scale_factor=1,
            is_mobile=True,
            has_touch=True,
            java_script_enabled=javascript,
            locale="de-DE",
            base_url=base,
        )
        self.context.set_default_timeout(5000)
        # online, the plain form whatever the machine's load: not the slow-link heuristic
        # (api/web/static/offline.js), which a busy machine trips; offline, the engine
        if not link_decides:
            self.context.add_init_script(
                "try { localStorage.setItem('schocken.queue', 'never') } catch (e) {}"
            )
        self.context.route("**/*", self._guard)
        self.page = self.context.new_page()
        # script errors and Content-Security-Policy violations ("Refused to …"); a 422 page
        # of a rejected entry is expected and not counted
        self.page.on("pageerror", lambda err: self.console_errors.append(str(err)))
        self.page.on(
            "console",
            lambda m: self.console_errors.append(m.text) if "Refused" in m.text else None,
        )
        self.taps = 0

    def _guard(self, route: Any) -> None:
        host = urlsplit(route.request.url).hostname
        if host != "127.0.0.1":
            self.outside.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    def tap(self, locator: Any) -> None:
        """One tap; when it submits a form, wait until the answer has loaded."""
        self.taps += 1
        locator.click()
        self.page.wait_for_load_state("load")

    def shot(self, name: str) -> None:
        """A screenshot of a main screen, after checking it fits the phone."""
        self.check_layout(name)
        ARTIFACTS.mkdir(exist_ok=True)
        self.page.screenshot(path=ARTIFACTS / f"{name}-{self.width}.png", full_page=True)

    def check_layout(self, name: str) -> None:
        """No sideways scrolling, and every visible touch target at least 44 × 44 px."""
        self.page.wait_for_load_state("load")
        width = self.page.evaluate("document.documentElement.scrollWidth")
        assert width <= self.width, f"{name}: {width} px wide at a {self.width} px screen"
        small = self.page.evaluate(SMALL_TARGETS)
        assert small == [], f"{name}: touch targets under 44 px: {small}"

    def close(self) -> None:
        self.context.close()


def closed(p: Phone) -> None:
    """The phone closed, and it asked nothing outside 127.0.0.1 and logged no error."""
    p.close()
    assert p.outside == [], f"requests left 127.0.0.1: {p.outside}"
    assert p.console_errors == [], f"console errors (CSP?): {p.console_errors}"


def phones(browser: Any, server: str, height: int | None = None) -> Iterator[Any]:
    """A ``phone`` fixture's body: ``phone(width, javascript)`` opens a phone on ``server``
    (``height``: its screen's, else Playwright's); each is :func:`closed` after the test."""
    made: list[Phone] = []

    def make(width: int = 390, javascript: bool = True) -> Phone:
        p = Phone(browser, server, width, javascript)
        if height is not None:
            p.page.set_viewport_size({"width": width, "height": height})
        made.append(p)
        return p

    yield make
    for p in made:
        closed(p)


@pytest.fixture
def phone(browser: Any, server: str) -> Iterator[Any]:
    yield from phones(browser, server)


# ----------------------------------------------------------------------------- the engine side


class Referee:
    """The same entries replayed through the engine, for comparison with the page."""

    def __init__(self, starter: str, preset: str = "standard") -> None:
        self.rules = ruleset_from_config({**RULES, "preset": preset})
        self.entries: list[dict[str, Any]] = []
        self.starter = starter
        self.game = Game.start(self.rules, PLAYERS, starter)

    def turn(self, player: str, dice: str, throws: str) -> list[str]:
        event = {"player": player, "dice": [int(d) for d in dice], "throws": int(throws)}
        self.entries.append(event)
        return [e.message for e in self.game.apply(parse_event(event, self.rules))]

    def undo(self) -> None:
        self.entries.pop()
        self.game = Game.start(self.rules, PLAYERS, self.starter)
        for event in self.entries:
            self.game.apply(parse_event(event, self.rules))


# ----------------------------------------------------------------------------- page helpers


def create_stammtisch(p: Phone, name: str = "Zur Post") -> str:
    page = p.page
    page.goto("/")
    p.shot("01-start")
    page.fill("#name", name)
    page.locator("input[name=public][value='1']").check()  # asked, never assumed
    page.locator("details.options > summary").click()
    page.fill("#opt_deckel", "3")
    p.shot("02-stammtisch-anlegen")
    page.get_by_role("button", name="Stammtisch anlegen").click()
    assert page.locator("#created-token").inner_text().strip()
    slug = page.locator("#created-slug").inner_text().strip()
    p.shot("03-schluessel")
    page.get_by_role("link", name="Weiter: Spieler eintragen").click()
    return slug


def add_players(p: Phone) -> None:
    page = p.page
    for name in PLAYERS:
        page.fill("#new-player", name)
        page.get_by_role("button", name="Hinzufügen").click()
        assert page.locator(".flash").inner_text() == f"{name} spielt jetzt mit."
    # a name that exists already is rejected inline, the entered value kept
    page.fill("#new-player", "Anna")
    page.get_by_role("button", name="Hinzufügen").click()
    assert "gibt es an diesem Stammtisch schon" in page.locator("#err-name").inner_text()
    assert page.input_value("#new-player") == "Anna"
    p.shot("04-spieler")


def start_game(p: Phone, starter: str) -> None:
    page = p.page
    page.get_by_role("link", name="Neues Spiel").click()
    # tapped in the wrong order, then fixed with ↑
    for name in ["Anna", "Clara", "Bert", "Dieter"]:
        page.get_by_role("link", name=f"+ {name}").click()
    page.get_by_role("link", name="Bert einen Platz nach vorn").click()
    seats = page.locator(".seats .starter span").all_inner_texts()
    assert seats == PLAYERS
    page.locator(".seats li", has_text=starter).locator("input[name=starter]").check()
    p.shot("05-neues-spiel")
    page.get_by_role("button", name="Spiel starten").click()
    assert page.locator("#phase").inner_text() == "1. Hälfte"


def board(p: Phone) -> dict[str, Any]:
    page = p.page
    stacks = {}
    for row in page.locator(".stack").all():
        name = row.get_attribute("data-player")
        num = row.locator(".num")
        stacks[name] = int(num.inner_text()) if num.count() else 0
    mitte = page.locator("#mitte")
    return {"mitte": int(mitte.inner_text()) if mitte.count() else None, "stacks": stacks}


def announced(p: Phone, expected: list[str]) -> None:
    """The page announces ``expected``: waited for (Playwright's retrying assertion), as a tap
    that submits returns before the answer's page has replaced this one."""
    expect(p.page.locator("#ansage p")).to_have_text(expected)


def enter_turn(p: Phone, player: str, dice: str, throws: str) -> None:
    """Three taps on the die buttons, one on the throws button: four taps; on the page of
    ``player``'s turn (waited for: the last tap returned before its answer replaced the page)."""
    page = p.page
    expect(page.locator("#am-zug")).to_have_text(player)
    before = p.taps
    for row, pip in enumerate(dice, start=1):
        p.tap(page.locator(f".die-row:nth-of-type({row}) label.die", has_text=pip))
    label = "1 Wurf" if throws == "1" else f"{throws} Würfe"
    p.tap(page.locator("button.throw", has_text=re.compile(f"^{label}$")))
    assert p.taps - before == 4


def play(
    p: Phone, ref: Referee, turns: list[tuple[str, str, str]], shot: str | None = None
) -> None:
    for i, (player, dice, throws) in enumerate(turns):
        enter_turn(p, player, dice, throws)
        expected = ref.turn(player, dice, throws)
        announced(p, expected)
        check_board(p, ref)
        if shot and i == len(turns) - 1:
            p.shot(shot)


def check_board(p: Phone, ref: Referee) -> None:
    state = ref.game.state().to_json()
    seen = board(p)
    if state["phase"] != "finished":
        assert seen == {"mitte": state["mitte"], "stacks": state["stacks"]}
        assert p.page.locator("#am-zug").inner_text() == state["next_player"]


def play_whole_game(p: Phone, javascript: bool) -> None:
    page = p.page
    ref = Referee("Anna")
    slug = create_stammtisch(p, "Zur Post" if javascript else "Ohne Skript")
    add_players(p)
    start_game(p, "Anna")

    # Anna opens, Bert's entry is mistyped and undone
    play(p, ref, HALF1[:1])
    assert "Anna beginnt" not in page.locator("#runde").inner_text()
    assert page.locator("#limit").inner_text() == "1 Wurf"
    assert page.locator("button.throw").all_inner_texts() == ["1 Wurf"]  # only what is allowed
    enter_turn(p, "Bert", "665", "1")
    ref.turn("Bert", "665", "1")
    p.shot("06-spiel-runde")
    undo = page.locator("#undo button")
    assert undo.inner_text() == "↶ Rückgängig: Zug von Bert (5-6-6)"
    p.tap(undo)
    ref.undo()
    announced(p, ["Rückgängig gemacht: Zug von Bert (5-6-6)."])
    check_board(p, ref)
    assert page.locator("#undo button").inner_text() == "↶ Rückgängig: Zug von Anna (1-1-3)"

    play(p, ref, HALF1[1:2])
    # a rejected entry: shown inline next to the dice, the typed value kept, nothing stored
    before = board(p)
    page.fill("#wurf", "117")
    p.tap(page.locator("button.throw").first)
    assert "„117“ sind keine Würfel" in page.locator("#err-dice").inner_text()
    assert page.input_value("#wurf") == "117"
    assert page.locator("#am-zug").inner_text() == "Clara"
    assert board(p) == before
    assert page.locator("#undo button").inner_text() == "↶ Rückgängig: Zug von Bert (3-5-6)"
    p.shot("07-fehler")
    page.fill("#wurf", "")
    if javascript:  # typing selects the die buttons, tapping a die clears the typed text
        page.fill("#wurf", "542")
        for row, pip in enumerate("542", start=1):
            assert page.locator(f"input[name=d{row}][value='{pip}']").is_checked()
        page.locator(".die-row:nth-of-type(1) label.die", has_text="6").click()
        assert page.input_value("#wurf") == ""

    play(p, ref, HALF1[2:], shot="08-haelfte-verloren")
    assert page.locator(".banner", has_text="verliert die erste Hälfte").count() == 1
    assert page.locator("#phase").inner_text() == "2. Hälfte"
    assert page.locator(".stack[data-player=Dieter] .tag-half").inner_text() == "1. Hälfte verloren"

    play(p, ref, HALF2, shot="09-finale")
    assert page.locator("#phase").inner_text() == "Finale: Anna gegen Dieter"
    assert page.locator(".stack[data-player=Bert] .tag-out").inner_text() == "nicht im Finale"

    play(p, ref, FINALE, shot="10-verloren")
    assert ref.game.loser == "Dieter"
    assert page.locator("#phase").inner_text() == "Spiel vorbei"
    assert page.locator("#ergebnis h1").inner_text() == "Dieter hat verloren"
    assert page.locator(".banner-game_lost").inner_text() == (
        "Dieter verliert das Finale und zahlt die Runde."
    )
    assert page.locator("#eingabe").count() == 0  # nothing more to enter

    # the history lists the game with its loser; its page shows every round
    page.get_by_role("link", name="Alle Spiele").first.click()
    page.wait_for_load_state("load")  # count() does not wait (a loaded machine was slower)
    assert page.locator(".games li").count() == 1
    assert "verloren: Dieter" in page.locator(".games li").inner_text()
    p.shot("11-spiele")
    page.locator(".games a").first.click()
    history = page.locator("#verlauf").inner_text()
    for message in [
        "Dieter hat alle Deckel und verliert die erste Hälfte.",
        "Schock aus von Anna!",
    ]:
        assert message in history
    assert page.locator("#verlauf .rno").count() == 3  # one round in each half and the Finale
    assert f"/dashboard/{slug}/" in page.locator("a", has_text="Statistik").first.get_attribute(
        "href"
    )
    page.locator(".top .nav a").click()
    assert page.locator("h1").inner_text() == ("Zur Post" if javascript else "Ohne Skript")
    p.shot("12-stammtisch")


# ----------------------------------------------------------------------------- tests


def test_a_whole_game_through_the_form_matches_the_engine(phone: Any) -> None:
    p = phone(width=390, javascript=True)
    play_whole_game(p, javascript=True)
    # eleven turns of four taps (one of them undone), the undo, the rejected entry
    assert p.taps == 4 * (len(HALF1) + len(HALF2) + len(FINALE) + 1) + 2


def test_the_core_flow_works_without_javascript(phone: Any) -> None:
    p = phone(width=360, javascript=False)
    play_whole_game(p, javascript=False)
