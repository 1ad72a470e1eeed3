# ruff: noqa: F811  (the fixtures imported from the other test module)
"""Items 1, 4 and 5 of issue 15 in real Chromium at 390 × 844: the demo's key on the start page
of a loopback server, a renewed key, German texts, per-Stammtisch game numbers, privacy (private
unless chosen otherwise, since issue 24), "Spiel abbrechen", the invite link, Post/Redirect/Get,
the confirmed undo of the deciding turn, the loser opening "Nochmal mit denselben" and the icon
of ``/docs``.

One ``schocken serve`` for the module, on a SQLite file that ``schocken demo`` filled first.
"""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_api_serve import ROOT, Server
from test_web_browser import (  # noqa: F401  (fixtures)
    FINALE,
    HALF1,
    HALF2,
    Phone,
    Referee,
    add_players,
    browser_type_launch_args,
    phones,
    play,
    start_game,
)

pytestmark = pytest.mark.browser

HEIGHT = 844
CODES = ("throws_then_repeat", "earlier_wins", "round_loser", "(half)")


@pytest.fixture(scope="module")
def served(tmp_path_factory: Any) -> Iterator[tuple[str, Path, str]]:
    """(base address, database, the demo's key): `schocken demo --years 1`, then the server."""
    db = tmp_path_factory.mktemp("items") / "data" / "web.sqlite3"
    db.parent.mkdir()
    demo = subprocess.run(
        [sys.executable, "-m", "api.cli", "demo", "--db", str(db), "--years", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    token = re.search(r"Schreibschlüssel: (\S+)", demo.stderr)
    assert token, demo.stderr
    served = Server(db, workers=2, env={"SCHOCKEN_SECRET_KEY": "browser-test-" + "y" * 32})
    try:
        yield served.base, db, token.group(1)
    finally:
        served.stop()


@pytest.fixture(scope="module")
def server(served: tuple[str, Path, str]) -> str:
    return served[0]


@pytest.fixture
def phone(browser: Any, server: str) -> Iterator[Any]:
    """Like test_web_browser's, 844 high, for this module's server."""
    yield from phones(browser, server, HEIGHT)


def entries(db: Path) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute("SELECT count(*) FROM game_log").fetchone()[0])


def posts_on_reload(p: Phone) -> list[str]:
    """Reload the page; the methods of the requests it sent."""
    sent: list[str] = []
    p.page.on("request", lambda r: sent.append(r.method))
    p.page.reload()
    p.page.wait_for_load_state("load")
    return [m for m in sent if m == "POST"]


def new_stammtisch(p: Phone, name: str) -> tuple[str, str]:
    page = p.page
    page.goto("/")
    page.fill("#name", name)
    page.locator("input[name=public][value='0']").check()
    page.get_by_role("button", name="Stammtisch anlegen").click()
    return (
        page.locator("#created-slug").inner_text().strip(),
        page.locator("#created-token").inner_text().strip(),
    )


def log_in(p: Phone, slug: str, token: str) -> None:
    p.page.goto("/")
    p.page.fill("#login-slug", slug)
    p.page.fill("#login-token", token)
    p.page.get_by_role("button", name="Öffnen", exact=True).click()
    p.page.wait_for_load_state("load")


# ----------------------------------------------------------------------------- item 1


def test_the_start_page_of_a_local_server_shows_the_demo_key_and_opens_the_demo(
    phone: Any, served: tuple[str, Path, str]
) -> None:
    p, stranger = phone(), phone()
    stranger.page.goto("/s/demo/")
    assert stranger.page.url == served[0] + "/?stammtisch=demo"  # not without the key
    p.page.goto("/")
    assert p.page.locator("#demo-slug").inner_text() == "demo"
    assert p.page.locator("#demo-token").inner_text() == served[2]
    p.shot("items-01-demo")
    p.tap(p.page.get_by_role("button", name="Demo öffnen"))
    assert p.page.url == served[0] + "/s/demo/"
    assert p.page.locator(".flash-error, .error").count() == 0
    assert p.page.get_by_role("link", name="Neues Spiel").count() >= 1  # logged in


def test_a_renewed_key_is_shown_once_and_logs_out_the_old_one(phone: Any) -> None:
    owner, other = phone(), phone()
    slug, old = new_stammtisch(owner, "Schlüsselrunde")
    log_in(other, slug, old)
    assert other.page.url.endswith(f"/s/{slug}/")
    owner.page.goto(f"/s/{slug}/")
    owner.tap(owner.page.get_by_role("link", name="Schlüssel erneuern"))
    owner.tap(owner.page.get_by_role("button", name="Neuen Schlüssel erzeugen"))
    new = owner.page.locator("#created-token").inner_text().strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", new) and new != old
    assert "Der alte Schlüssel gilt nicht mehr" in owner.page.inner_text("main")
    owner.page.reload()
    assert owner.page.locator("#created-token").count() == 0  # shown once
    assert posts_on_reload(owner) == []
    # the old key's login is gone: the other phone is sent to the login form
    other.page.goto(f"/s/{slug}/")
    assert other.page.url.endswith(f"/?stammtisch={slug}")
    assert other.page.locator("#login-token").is_visible()
    log_in(other, slug, old)
    assert other.page.locator("#err-login_token, #err-login_slug").count() == 1
    log_in(other, slug, new)
    assert other.page.url.endswith(f"/s/{slug}/")


# ----------------------------------------------------------------------------- items 4 and 5


def test_german_texts_private_by_default_and_a_rejected_form_not_resubmitted(phone: Any) -> None:
    p = phone()
    page = p.page
    page.goto("/")
    page.locator("details.options > summary").click()
    help_texts = page.locator("details.options").inner_text()
    for code in CODES:
        assert code not in help_texts
    assert not re.search(r"\([a-z]+_[a-z_]+\)", help_texts)
    # private unless chosen otherwise, and the form says what that means (issue 24)
    assert page.locator("input[name=public]:checked").get_attribute("value") == "0"
    assert page.locator("#if-private").inner_text() == "Privat: nur mit dem Schlüssel lesbar."
    p.tap(page.get_by_role("button", name="Stammtisch anlegen"))  # without a name
    assert urlpath(page.url) == "/"  # redirected to the page, not left at the POST address
    assert (
        page.locator("#err-name").inner_text() == "Bitte einen Namen für den Stammtisch eintragen."
    )
    assert posts_on_reload(p) == []
    assert page.locator("p.error").count() == 0

    # an option out of range: a German message beside the field (no marshmallow English)
    page.fill("#name", "Zur Linde")
    page.locator("input[name=public][value='0']").check()
    page.locator("details.options > summary").click()
    page.fill("#opt_deckel", "0")
    p.tap(page.get_by_role("button", name="Stammtisch anlegen"))
    assert urlpath(page.url) == "/"
    errors = page.locator("p.error").evaluate_all("es => es.map(e => e.id + ': ' + e.textContent)")
    assert len(errors) == 1 and errors[0].startswith("err-opt_deckel: "), errors
    assert not re.search(r"Must|greater|equal|required|Not a valid", errors[0]), errors
    assert "0 ist ungültig (erlaubt: ganze Zahl von 2 bis 99)" in errors[0], errors
    assert page.input_value("#opt_deckel") == "0"  # the entered value kept
    p.shot("items-02-german-errors")
    assert posts_on_reload(p) == []
    assert page.locator("p.error").count() == 0


def urlpath(url: str) -> str:
    return "/" + url.split("/", 3)[3].split("#")[0].split("?")[0]


def open_zur_post(p: Phone) -> tuple[str, str]:
    """A new private Stammtisch with four players and its first game: (slug, game address)."""
    page = p.page
    page.goto("/")
    page.fill("#name", "Zur Post")
    page.locator("input[name=public][value='0']").check()
    page.locator("details.options > summary").click()
    page.fill("#opt_deckel", "3")
    page.get_by_role("button", name="Stammtisch anlegen").click()
    slug = page.locator("#created-slug").inner_text().strip()
    page.get_by_role("link", name="Weiter: Spieler eintragen").click()
    add_players(p)
    start_game(p, "Anna")
    return slug, page.url


def rejected_turn_is_not_sent_again(p: Phone, db: Path, game_url: str) -> None:
    """A rejected turn: the address is the game's, a reload sends nothing and stores nothing."""
    page = p.page
    before = entries(db)
    page.fill("#wurf", "117")
    p.tap(page.locator("button.throw").first)
    assert "„117“ sind keine Würfel" in page.locator("#err-dice").inner_text()
    assert page.url.split("#")[0] == game_url
    assert posts_on_reload(p) == []
    assert entries(db) == before
    assert page.locator("#err-dice").count() == 0


def invite_opens_the_game(p: Phone, second: Phone, game_url: str) -> None:
    """The invite link opens the game on a second phone, signed in."""
    p.page.locator("#einladen > summary").click()
    assert p.page.locator("#einladen .qr svg").count() == 1
    invite = p.page.locator("#invite-link").inner_text().strip()
    second.page.goto(invite)
    second.page.wait_for_load_state("load")
    assert second.page.url.split("#")[0] == game_url
    assert second.page.locator("#am-zug").inner_text() == "Bert"
    assert second.page.locator("#eingabe button.throw").count() >= 1


def undo_of_the_decision_is_asked(p: Phone, db: Path) -> None:
    """Undoing the deciding turn is asked first; "Nein, so lassen" keeps the game decided."""
    page = p.page
    decided = entries(db)
    p.tap(page.locator("#undo button"))
    assert "Das Spiel ist entschieden." in page.locator("#undo").inner_text()
    assert entries(db) == decided
    p.shot("items-03-undo-asked")
    p.tap(page.get_by_role("link", name="Nein, so lassen"))
    assert page.locator("#phase").inner_text() == "Spiel vorbei"
    assert entries(db) == decided


def test_a_new_stammtisch_game_numbers_invite_undo_again_abandon(
    phone: Any, served: tuple[str, Path, str]
) -> None:
    p, second = phone(), phone()
    page = p.page
    slug, game_url = open_zur_post(p)
    assert page.locator("#spiel-nr").inner_text() == "Spiel 1"  # the demo's games count apart

    ref = Referee("Anna")
    play(p, ref, HALF1[:1])
    assert page.locator("#limit").inner_text() == "1 Wurf"
    rejected_turn_is_not_sent_again(p, served[1], game_url)
    invite_opens_the_game(p, second, game_url)

    play(p, ref, HALF1[1:] + HALF2 + FINALE)
    assert page.locator("#ergebnis h1").inner_text() == "Dieter hat verloren"
    page.goto(f"/s/{slug}/spiele")
    assert page.locator("#anzahl").inner_text() == "1 Spiel"
    page.go_back()
    undo_of_the_decision_is_asked(p, served[1])

    # "Nochmal mit denselben": the loser opens; the next game is "Spiel 2"
    p.tap(page.get_by_role("link", name="Nochmal mit denselben"))
    starter = page.locator(".seats li", has=page.locator("input[name=starter]:checked"))
    assert starter.locator(".starter span").inner_text() == "Dieter"
    p.tap(page.get_by_role("button", name="Spiel starten"))
    assert page.locator("#spiel-nr").inner_text() == "Spiel 2"
    assert page.locator("#am-zug").inner_text() == "Dieter"

    # "Spiel abbrechen": recorded as abandoned, not deleted
    page.locator("#abbrechen > summary").click()
    p.tap(page.get_by_role("button", name="Ja, Spiel abbrechen"))
    assert page.locator("#phase").inner_text() == "abgebrochen"
    assert page.locator("#eingabe").count() == 0
    page.goto(f"/s/{slug}/spiele")
    games = page.locator(".games li").all_inner_texts()
    assert len(games) == 2
    assert "Spiel 2" in games[0] and "abgebrochen" in games[0]
    assert "Spiel 1" in games[1] and "verloren: Dieter" in games[1]
    p.shot("items-04-spiele")


#: the icon a browser asks for: the page's own, else /favicon.ico
ICON = """() => {
  const link = document.querySelector("link[rel~=icon]");
  return link ? link.href : new URL("/favicon.ico", location.href).href;
}"""


def test_docs_load_without_a_failed_request_and_their_icon_is_there(phone: Any) -> None:
    p = phone()
    failed: list[str] = []
    p.page.on("requestfailed", lambda r: failed.append(r.url))
    p.page.on(
        "response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None
    )
    response = p.page.goto("/docs")
    p.page.wait_for_load_state("networkidle")
    assert response is not None and response.status == 200
    assert p.page.locator(".swagger-ui").count() == 1
    # headless Chromium does not ask for the icon itself: ask for it as a browser would
    icon = p.page.context.request.get(p.page.evaluate(ICON))
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/")
    assert failed == []
