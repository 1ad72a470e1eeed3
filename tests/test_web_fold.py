# ruff: noqa: F811  (the fixtures imported from the other test module)
"""The turn input in the first screen: at 360 × 640 and 390 × 664 (a phone's viewport minus
the browser's bars) the whole turn form – who is at turn, the dice, every throws button – is
visible without scrolling in every state of a game, the banners of a round, a half, the Finale,
a penalty, an undo and a rejected entry included.

Screenshots of the first screen go to ``artifacts/fold-<state>-<width>.png`` (not committed).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect
from test_web_browser import (  # noqa: F401  (fixtures)
    ARTIFACTS,
    Phone,
    Referee,
    add_players,
    browser_type_launch_args,
    enter_turn,
    phone,
    server,
    start_game,
)

pytestmark = pytest.mark.browser

SCREENS = [(360, 640), (390, 664)]

#: where the turn form and its last throws button are, at the top of the page
FOLD = """() => {
  window.scrollTo(0, 0);
  const form = document.getElementById("eingabe");
  const buttons = [...document.querySelectorAll("#eingabe button.throw")];
  const r = form.getBoundingClientRect();
  return {
    top: r.top, bottom: r.bottom, height: window.innerHeight,
    buttons: Math.max(...buttons.map(b => b.getBoundingClientRect().bottom)),
  };
}"""


def check_fold(p: Phone, state: str) -> None:
    state = f"{state}-{p.page.locator('button.throw').count()}b"
    """At both screen sizes the turn form lies wholly inside the first screen."""
    page = p.page
    assert page.locator("#eingabe").count() == 1, state
    for width, height in SCREENS:
        page.set_viewport_size({"width": width, "height": height})
        box = page.evaluate(FOLD)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=ARTIFACTS / f"fold-{state}-{width}.png")
        assert box["top"] >= 0, (state, width, box)
        assert box["bottom"] <= height, f"{state} at {width}×{height}: {box}"
        assert box["buttons"] <= height, f"{state} at {width}×{height}: {box}"
        p.width = width
        p.check_layout(f"fold-{state}")


def create_stammtisch(p: Phone, preset: str) -> None:
    """3 Deckel, and a penalty of one Deckel (so the form offers "Strafe eintragen")."""
    page = p.page
    page.goto("/")
    page.fill("#name", "Zum Falz")
    page.locator(f"input[name=preset][value={preset}]").check()
    page.locator("input[name=public][value='1']").check()  # asked, never assumed
    page.locator("details.options > summary").click()
    page.fill("#opt_deckel", "3")
    page.select_option("#opt_penalty", label="1 Deckel")
    page.get_by_role("button", name="Stammtisch anlegen").click()
    page.get_by_role("link", name="Weiter: Spieler eintragen").click()


def turn(p: Phone, ref: Referee, player: str, dice: str) -> list[str]:
    enter_turn(p, player, dice, "1")
    return ref.turn(player, dice, "1")


def penalty(p: Phone, player: str, reason: str) -> None:
    page = p.page
    page.locator("details.penalty > summary").click()
    page.select_option("#pen-player", player)
    page.fill("#pen-reason", reason)
    page.fill("#pen-deckel", "1")
    p.tap(page.get_by_role("button", name="Strafe eintragen"))


@pytest.mark.parametrize("preset", ["standard", "wolbeck"])  # wolbeck: five throws buttons
def test_the_turn_input_stays_in_the_first_screen(phone: Any, preset: str) -> None:
    p = phone(width=390, javascript=True)
    page = p.page
    ref = Referee("Anna", preset)
    create_stammtisch(p, preset)
    add_players(p)
    start_game(p, "Anna")
    check_fold(p, "start")

    turn(p, ref, "Anna", "234")  # a Straße: the round's loser takes 2 of the 3 Deckel
    check_fold(p, "turn")
    for player, dice in [("Bert", "653"), ("Clara", "542"), ("Dieter", "521")]:
        events = turn(p, ref, player, dice)
    assert events[-1].startswith("Dieter bekommt 2 Deckel aus der Mitte – Straße")
    assert ref.game.state().to_json()["phase"] == "half1"
    check_fold(p, "round-lost")

    # a rejected entry: the error sits inside the form
    page.fill("#wurf", "117")
    p.tap(page.locator("button.throw").first)
    expect(page.locator("#err-dice")).to_have_count(1)  # waited for: the answer's page
    check_fold(p, "error")
    page.fill("#wurf", "")

    # Dieter opens the next round, loses it and the first half
    for player, dice in [("Dieter", "521"), ("Anna", "653"), ("Bert", "542"), ("Clara", "643")]:
        turn(p, ref, player, dice)
    expect(page.locator(".banner", has_text="erste Hälfte")).to_have_count(1)
    check_fold(p, "half-lost")

    for player, dice in [("Dieter", "113"), ("Anna", "521"), ("Bert", "653"), ("Clara", "542")]:
        turn(p, ref, player, dice)
    expect(page.locator("#phase")).to_have_text(re.compile(r"^Finale"))
    assert page.locator(".banner").count() >= 2  # the second half lost, the Finale begins
    check_fold(p, "finale")

    penalty(p, "Dieter", "zu früh aufgedeckt")
    expect(page.locator(".sentence-penalty")).to_have_count(1)
    check_fold(p, "penalty")

    p.tap(page.locator("#undo button"))
    expect(page.locator("#ansage")).to_contain_text("Rückgängig gemacht")
    check_fold(p, "undo")
