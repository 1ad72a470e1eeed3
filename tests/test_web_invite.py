# ruff: noqa: F811  (the fixtures imported from the other test module)
"""The invite link and QR code on the game page: a second phone opens the game logged in,
without the key in the link; it expires, and a new key ends it."""

from __future__ import annotations

import html
import re
import time
from typing import Any

import pytest
import segno
from test_web_pages import Browser, app, create, start, table, web  # noqa: F401  (fixtures)

from api.web import invite as invite_module


def invite_link(page: Any) -> str:
    return html.unescape(re.search(r'<code id="invite-link">([^<]+)</code>', page.text).group(1))


def test_the_game_page_shows_an_invite_link_and_its_qr_code(
    web: Browser, table: tuple[str, str]
) -> None:
    slug, game = table
    page = web.get(game)
    link = invite_link(page)
    assert link.startswith("http://localhost/einladung/")
    _slug, token = create(Browser(web.app), "Andere Runde")
    assert token not in link
    svg = re.search(r"<svg .*?</svg>", page.text, flags=re.S).group(0)
    assert 'aria-label="QR-Code der Einladung"' in svg and "<path" in svg
    # the same QR code segno makes of the link (the link is what the camera reads)
    expected = segno.make(link, error="m").svg_inline(scale=4, border=2, dark="#1f1a14")
    assert svg.split("<path", 1)[1] == expected.split("<path", 1)[1]


def test_a_second_phone_opens_the_game_logged_in(web: Browser, table: tuple[str, str]) -> None:
    slug, game = table
    link = invite_link(web.get(game)).removeprefix("http://localhost")
    second = Browser(web.app)
    assert second.get(game).status_code == 302  # not logged in
    r = second.get(link)
    assert r.status_code == 303 and r.headers["Location"] == game
    page = second.get(game)
    assert page.status_code == 200 and 'id="eingabe"' in page.text
    assert "dieses Handy ist jetzt angemeldet" in page.text


def test_an_invite_ends_with_a_new_key_and_after_twelve_hours(
    web: Browser, table: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slug, game = table
    link = invite_link(web.get(game)).removeprefix("http://localhost")
    tampered = link[:-3] + ("aaa" if not link.endswith("aaa") else "bbb")
    assert Browser(web.app).get(tampered).status_code == 404

    later = time.time() + invite_module.INVITE_SECONDS + 60
    monkeypatch.setattr("itsdangerous.timed.time.time", lambda: later)
    r = Browser(web.app).get(link)
    assert r.status_code == 404 and "abgelaufen" in html.unescape(r.text)
    monkeypatch.undo()

    assert Browser(web.app).get(link).status_code == 303  # still valid now
    web.post(f"/s/{slug}/schluessel", {})  # a new key
    second = Browser(web.app)
    assert second.get(link).status_code == 404
    assert second.get(game).status_code == 302
