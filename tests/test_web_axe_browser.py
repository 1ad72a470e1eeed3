# ruff: noqa: F811  (the fixtures imported from the other test modules)
"""The form's first steps on a phone, and axe-core over the pages, in real Chromium (Debian's).

- Creating a Stammtisch at 360 × 640: "Stammtisch anlegen" within 1.5 screens, the presets'
  descriptions folded, private by default with what that means in one line.
- The players page keeps the focus in the name field after "Hinzufügen".
- axe-core (tests/axe.py) finds no violation of impact serious or critical on any page of
  ``PAGES`` (the form's pages with the game screen and "Unsere Regeln", the pub TV between
  games and during one, the dashboard), at a phone's and a desk's width; each page has its h1.

One server for the module (the dashboard's phone tests' server: a demo year 2025, no demo key on
the start page), one browser page that bypasses the Content-Security-Policy so axe-core can be
injected. Screenshots go to ``artifacts/axe-*.png`` (not committed).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from axe import WIDTHS, axe_context, check_page
from test_dashboard_phone import base  # noqa: F401  (a demo year 2025, served)
from test_web_browser import (  # noqa: F401  (Debian's Chromium, skip/fail)
    ARTIFACTS,
    SMALL_TARGETS,
    browser_type_launch_args,
)

pytestmark = pytest.mark.browser

#: the pages axe-core checks, one line a page: (name, address, the text of its one h1); {slug}
#: is a Stammtisch the page is logged in to, {game} a game of it under way (after its first
#: turn), {pause} a public Stammtisch without a game (its TV waits for the next one), {demo}
#: and {year} the demo Stammtisch of the dashboard and its year
DEMO = "Demo-Stammtisch „Zur Post“"
PAGES = [
    ("start", "/", "Deckelzähler für Schocken"),
    ("stammtisch", "/s/{slug}/", "Zur Traube"),
    ("spieler", "/s/{slug}/spieler", "Spieler"),
    ("neues-spiel", "/s/{slug}/neu", "Neues Spiel"),
    ("spiel", "/s/{slug}/spiel/{game}", "Spiel 1"),
    ("unsere-regeln", "/s/{slug}/unsere-regeln", "Unsere Regeln Zur Traube"),
    ("tv-pause", "/tv/{pause}", "Zum Anker"),
    ("tv-spiel", "/tv/{slug}", "Zur Traube"),
    ("statistik", "/dashboard/", "Stammtische"),
    ("statistik-stammtisch", "/dashboard/{demo}/index.html", f"{DEMO} Ewige Tabelle"),
    ("statistik-jahr", "/dashboard/{demo}/{year}.html", f"{DEMO} Jahr 2025"),
]

PLAYERS = ["Anna", "Bert", "Clara"]


@dataclass
class Site:
    browser: Any
    root: str
    page: Any
    #: what the addresses of PAGES name
    values: dict[str, str]

    def phone(self) -> None:
        self.page.set_viewport_size({"width": 360, "height": 640})


@pytest.fixture(scope="module")
def site(browser: Any, base: str) -> Iterator[Site]:
    """A public Stammtisch made through the form, with three players and a game under way."""
    root = base.removesuffix("dashboard/")
    context = axe_context(browser, root)
    context.set_default_timeout(20_000)
    page = context.new_page()
    try:
        page.goto("/")
        page.fill("#name", "Zur Traube")
        page.locator("input[name=public][value='1']").check()
        page.get_by_role("button", name="Stammtisch anlegen").click()
        slug = page.locator("#created-slug").inner_text().strip()
        token = page.locator("#created-token").inner_text().strip()
        auth = {"Authorization": f"Bearer {token}"}
        api = f"/api/v1/stammtische/{slug}"
        for name in PLAYERS:
            assert page.request.post(f"{api}/players", data={"name": name}, headers=auth).ok
        game = page.request.post(
            f"{api}/games", data={"players": PLAYERS, "starter": "Anna"}, headers=auth
        ).json()["id"]
        turn = {"player": "Anna", "dice": [1, 1, 3], "throws": 1}
        assert page.request.post(f"{api}/games/{game}/turns", data=turn, headers=auth).ok
        pause = page.request.post("/api/v1/stammtische", data={"name": "Zum Anker"})
        assert pause.ok, pause.text()
        values = {
            "slug": slug, "game": str(game), "pause": pause.json()["slug"],
            "demo": "demo", "year": "2025",
        }  # fmt: skip
        yield Site(browser, root, page, values)
    finally:
        context.close()


def test_stammtisch_anlegen_is_within_one_and_a_half_screens_of_a_phone(site: Site) -> None:
    newcomer = site.browser.new_context(
        viewport={"width": 360, "height": 640}, is_mobile=True, has_touch=True,
        device_scale_factor=1, locale="de-DE", base_url=site.root,
    )  # fmt: skip
    try:
        first_visit(newcomer.new_page())
    finally:
        newcomer.close()


def first_visit(page: Any) -> None:
    """The start page of a phone that knows no Stammtisch yet."""
    page.goto("/")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "axe-start-360.png", full_page=True)
    button = page.get_by_role("button", name="Stammtisch anlegen").bounding_box()
    assert button["y"] + button["height"] <= 1.5 * 640, button
    # the presets by name; what each means folded, one click away
    assert page.locator("input[name=preset]").count() == 7
    assert not page.locator("#preset-wolbeck").is_visible()
    page.get_by_text("Was die Regelwerke unterscheidet").click()
    assert "Jule als scharfe Sieben" in page.locator("#preset-wolbeck").inner_text()
    # private unless chosen otherwise; what the choice means, in one line
    assert page.locator("input[name=public]:checked").get_attribute("value") == "0"
    consequence = page.locator(".visibility .consequence:visible")
    assert consequence.all_inner_texts() == ["Privat: nur mit dem Schlüssel lesbar."]
    page.locator("input[name=public][value='1']").check()
    assert consequence.all_inner_texts() == ["Öffentlich: für alle lesbar."]
    line = float(consequence.evaluate("p => parseFloat(getComputedStyle(p).lineHeight)"))
    assert consequence.bounding_box()["height"] < 1.5 * line  # one line at 360 px
    assert page.evaluate(SMALL_TARGETS) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 360


def test_the_name_field_keeps_the_focus_after_hinzufuegen(site: Site) -> None:
    site.phone()
    page = site.page
    page.goto("/s/{slug}/spieler".format(**site.values))
    page.fill("#new-player", "Dieter")
    page.get_by_role("button", name="Hinzufügen").click()
    assert page.locator(".flash").inner_text() == "Dieter spielt jetzt mit."
    assert page.evaluate("document.activeElement.id") == "new-player"
    # the next name is typed at once, and sent with the keyboard's Enter
    page.keyboard.type("Erna")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert page.locator(".flash").inner_text() == "Erna spielt jetzt mit."
    assert page.evaluate("document.activeElement.id") == "new-player"
    page.screenshot(path=ARTIFACTS / "axe-spieler-360.png", full_page=True)
    page.reload()  # only the page after an entry takes the focus
    assert page.evaluate("document.activeElement.id") != "new-player"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(("name", "path", "h1"), PAGES, ids=[name for name, *_ in PAGES])
def test_axe_finds_no_serious_or_critical_violation(
    site: Site, name: str, path: str, h1: str, width: int
) -> None:
    site.page.set_viewport_size({"width": width, "height": 800})
    check_page(site.page, path.format(**site.values), name, h1)
