"""The pub form through the Flask test client: every page and form, CSRF, inline errors.

The browser tests (``test_web_browser.py``) play whole games in Chromium; these check each
page's behaviour in detail and fast.
"""

from __future__ import annotations

import html
import re
import stat
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import app_on
from flask import Flask

from api.http.context import services
from api.http.headers import HEADERS, HSTS, STRICT_CSP, csp_for
from api.rules import OPTION_HELP, PRESET_HELP, Game, parse_event, ruleset_from_config
from api.web import _secret_key

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
WEB_ROOT = Path(__file__).resolve().parent.parent / "api" / "web"


# ----------------------------------------------------------------------------- helpers


class Browser:
    """A test client that fills in the form's CSRF token like a browser would."""

    def __init__(self, app: Flask, https: bool = False) -> None:
        self.app = app
        self.client = app.test_client()
        self.base_url = "https://localhost" if https else "http://localhost"
        self.csrf = ""
        self.posted: Any = None

    def get(self, url: str, **kw: Any) -> Any:
        r = self.client.get(url, base_url=self.base_url, **kw)
        found = re.search(r'name="csrf_token" value="([^"]+)"', r.text)
        if found:
            self.csrf = found.group(1)
        return r

    def post(self, url: str, data: dict[str, Any] | None = None, csrf: bool = True) -> Any:
        if not self.csrf:
            self.get("/")
        body = dict(data or {})
        if csrf:
            body.setdefault("csrf_token", self.csrf)
        r = self.client.post(url, data=body, base_url=self.base_url)
        self.posted = r
        if r.status_code == 303:  # Post/Redirect/Get: the browser follows at once
            return self.get(r.headers["Location"])
        found = re.search(r'name="csrf_token" value="([^"]+)"', r.text)
        if found:
            self.csrf = found.group(1)
        return r

    def follow(self, r: Any) -> Any:
        assert r.status_code in (302, 303), (r.status_code, text_of(r))
        return self.get(r.headers["Location"])


def text_of(r: Any) -> str:
    """The visible text of a page, whitespace collapsed, entities decoded."""
    body = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", r.text, flags=re.S)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())
    return re.sub(r"\s+([.,:;!?)])", r"\1", text)


def errors_of(r: Any, name: str) -> list[str]:
    found = re.findall(rf'<p class="error" id="err-{name}" role="alert">([^<]*)</p>', r.text)
    return [html.unescape(m) for m in found]


def input_value(r: Any, element_id: str) -> str | None:
    tag = re.search(rf'<input[^>]*\bid="{element_id}"[^>]*>', r.text)
    if not tag:
        return None
    value = re.search(r'\bvalue="([^"]*)"', tag.group(0))
    return html.unescape(value.group(1)) if value else ""


def announcements(r: Any) -> list[str]:
    block = re.search(r'<section class="announce".*?</section>', r.text, flags=re.S)
    if not block:
        return []
    return [
        html.unescape(m) for m in re.findall(r"<p class=\"[^\"]*\">([^<]*)</p>", block.group(0))
    ]


def throw_buttons(r: Any) -> list[str]:
    return re.findall(r'<button type="submit" name="throws" value="([^"]+)" class="throw', r.text)


@pytest.fixture
def app(storage: str, request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    yield from app_on(storage, tmp_path, request, SECRET_KEY="t" * 40)


@pytest.fixture
def web(app: Flask) -> Browser:
    return Browser(app)


def create(web: Browser, name: str = "Zur Post", **fields: Any) -> tuple[str, str]:
    r = web.post("/stammtisch", {"name": name, "preset": "standard", "public": "1", **fields})
    assert r.status_code == 200, errors_of(r, "name") + errors_of(r, "slug") + [text_of(r)]
    assert web.posted.status_code == 303
    slug = re.search(r'<code id="created-slug">([^<]+)</code>', r.text).group(1)
    token = re.search(r'<code id="created-token">([^<]+)</code>', r.text).group(1)
    return slug, token


def add_players(web: Browser, slug: str, names: list[str] = PLAYERS) -> None:
    for name in names:
        r = web.post(f"/s/{slug}/spieler", {"name": name})
        assert r.status_code == 302, errors_of(r, "name")


def player_ids(app: Flask, slug: str) -> dict[str, int]:
    with app.app_context():
        svc = services()
        return {p.name: p.id for p in svc.players(svc.stammtisch(slug))}


def start(web: Browser, slug: str, names: list[str] = PLAYERS, starter: str = "Anna") -> str:
    ids = player_ids(web.app, slug)
    seats = [str(ids[n]) for n in names]
    r = web.post(f"/s/{slug}/neu", {"action": "start", "seat": seats, "starter": str(ids[starter])})
    assert r.status_code == 302, errors_of(r, "seats") + errors_of(r, "starter")
    return r.headers["Location"]


def seq_of(r: Any) -> str:
    return re.search(r'name="seq" value="(\d+)"', r.text).group(1)


def turn(web: Browser, game: str, player: str, dice: str, throws: str, **extra: Any) -> Any:
    page = web.get(game)
    data = {"seq": seq_of(page), "player": player, "throws": throws, **extra}
    if "wurf" not in extra:
        data.update({f"d{i}": d for i, d in enumerate(dice, start=1)})
    return web.post(game + "/zug", data)


def game_state(app: Flask, slug: str, game_url: str) -> dict[str, Any]:
    game_id = int(game_url.rstrip("/").rsplit("/", 1)[1])
    with app.app_context():
        svc = services()
        view = svc.game(svc.stammtisch(slug), game_id)
        return {"seq": view.runtime.last_seq, **view.runtime.game.state().to_json()}


@pytest.fixture
def table(web: Browser) -> tuple[str, str]:
    """A logged-in Stammtisch with four players and a running game (3 Deckel, Anna opens)."""
    slug, _token = create(web, opt_deckel="3")
    add_players(web, slug)
    return slug, start(web, slug)


# ----------------------------------------------------------------------------- headers, assets


def test_every_page_carries_the_security_headers(web: Browser, table: tuple[str, str]) -> None:
    slug, game = table
    for url in [
        "/",
        f"/s/{slug}/",
        f"/s/{slug}/spieler",
        f"/s/{slug}/neu",
        game,
        f"/s/{slug}/spiele",
    ]:
        r = web.get(url)
        assert r.status_code == 200, url
        csp = r.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        assert "frame-ancestors 'none'" in csp
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["X-Frame-Options"] == "DENY"
        assert r.headers["Cache-Control"] == "no-store"
        assert "<script>" not in r.text and " style=" not in r.text and "onclick" not in r.text
        assert '<html lang="de">' in r.text


def test_assets_are_local_files_and_pages_name_no_other_host(web: Browser) -> None:
    r = web.get("/")
    for asset in re.findall(r'(?:href|src)="(/assets/[^"]+)"', r.text):
        got = web.client.get(asset)
        got.close()  # a file response holds the file open until closed
        assert got.status_code == 200, asset
        assert got.headers["X-Content-Type-Options"] == "nosniff"
    for path in WEB_ROOT.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".css", ".js"):
            assert not re.search(r"https?://", path.read_text(encoding="utf-8")), path


def test_the_form_and_the_api_docs_send_the_headers_of_one_policy(app: Flask) -> None:
    def directives(csp: str) -> dict[str, list[str]]:
        return {name: sources for name, *sources in (d.split() for d in csp.split("; "))}

    form, docs = Browser(app, https=True).get("/"), Browser(app, https=True).get("/docs")
    assert docs.status_code == 200 and docs.mimetype == "text/html"
    for name, value in [*HEADERS.items(), ("Strict-Transport-Security", HSTS)]:
        assert form.headers[name] == docs.headers[name] == value, name
    assert form.headers["Referrer-Policy"] == "same-origin"
    assert form.headers["Content-Security-Policy"] == STRICT_CSP
    assert docs.headers["Content-Security-Policy"] == csp_for(docs.data)
    # the docs page differs only in its own inline scripts (by hash) and inline styles
    strict, own = directives(STRICT_CSP), directives(docs.headers["Content-Security-Policy"])
    assert {k: v for k, v in own.items() if k not in ("script-src", "style-src")} == {
        k: v for k, v in strict.items() if k not in ("script-src", "style-src")
    }
    assert own["script-src"][0] == "'self'" and own["script-src"][1].startswith("'sha256-")
    assert own["style-src"] == ["'self'", "'unsafe-inline'"]


def test_the_start_page_explains_every_preset_and_option_in_german(web: Browser) -> None:
    page = text_of(web.get("/"))
    assert "Neuen Stammtisch anlegen" in page and "Stammtisch öffnen" in page
    for help_text in [*PRESET_HELP.values(), *OPTION_HELP.values()]:
        assert " ".join(help_text.split()) in page


# ----------------------------------------------------------------------------- CSRF


@pytest.mark.parametrize(
    "path",
    [
        "/stammtisch",
        "/anmelden",
        "/s/{slug}/abmelden",
        "/s/{slug}/spieler",
        "/s/{slug}/spieler/1",
        "/s/{slug}/neu",
        "/s/{slug}/regeln",
        "{game}/zug",
        "{game}/strafe",
        "{game}/rueckgaengig",
    ],
)
def test_a_post_without_the_csrf_token_is_refused_and_changes_nothing(
    web: Browser, table: tuple[str, str], path: str
) -> None:
    slug, game = table
    url = path.format(slug=slug, game=game)
    before = game_state(web.app, slug, game)
    players_before = player_ids(web.app, slug)
    data = {"name": "Zur Post 2", "slug": slug, "player": "Anna", "d1": "1", "d2": "1"}
    for csrf in (False, "falsch"):
        if csrf:
            data["csrf_token"] = csrf
        r = web.post(url, data, csrf=False)
        assert r.status_code == 400
        assert "Sicherheitsprüfung" in text_of(r)
        assert r.headers["X-Frame-Options"] == "DENY"
    assert game_state(web.app, slug, game) == before
    assert player_ids(web.app, slug) == players_before
    assert web.get(f"/s/{slug}/").status_code == 200  # still logged in


# ----------------------------------------------------------------------------- Stammtisch


def test_creating_a_stammtisch_shows_its_key_once_and_logs_in(app: Flask) -> None:
    web = Browser(app, https=True)
    r = web.post(
        "/stammtisch",
        {"name": "Knobelrunde Zur Post", "preset": "wolbeck", "opt_deckel": "15", "public": "1"},
    )
    assert web.posted.status_code == 303 and r.status_code == 200
    assert web.posted.headers["Location"] == "/s/knobelrunde-zur-post/schluessel"
    page = text_of(r)
    assert "wird nur jetzt angezeigt" in page
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "Secure" in cookie and "SameSite=Lax" in cookie
    token = re.search(r'<code id="created-token">([^<]+)</code>', r.text).group(1)
    assert token not in cookie  # the session remembers a hash, never the key itself
    with app.app_context():
        svc = services()
        st = svc.stammtisch("knobelrunde-zur-post")
        assert st.rules == {"preset": "wolbeck", "overrides": {"deckel": 15}}
        assert st.private is False
        svc.authorize(st, token)  # the key shown is the Stammtisch's key
    assert web.get("/s/knobelrunde-zur-post/").status_code == 200
    assert token not in web.get("/s/knobelrunde-zur-post/").text


def test_the_session_cookie_is_not_secure_over_plain_http_so_a_phone_on_the_lan_can_log_in(
    web: Browser,
) -> None:
    r = web.post("/stammtisch", {"name": "Zur Post", "preset": "standard"})
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "Secure" not in cookie


def test_a_rejected_stammtisch_keeps_the_entered_values_and_stores_nothing(
    web: Browser, app: Flask
) -> None:
    r = web.post("/stammtisch", {"name": "", "slug": "meine-runde", "preset": "nrw"})
    assert r.status_code == 422
    assert errors_of(r, "name") == ["Bitte einen Namen für den Stammtisch eintragen."]
    assert errors_of(r, "public") == ["Bitte wählen: öffentlich oder privat."]  # asked
    assert not re.search(r'name="public" value="[01]" checked', r.text)
    assert input_value(r, "slug") == "meine-runde"
    assert re.search(r'value="nrw" checked', r.text)

    r = web.post(
        "/stammtisch",
        {
            "name": "Zur Post",
            "preset": "standard",
            "opt_deckel": "1",
            "opt_jule": '"sieben"',
            "public": "0",
        },  # fmt: skip
    )
    assert r.status_code == 422
    assert errors_of(r, "opt_deckel") == [
        "Hausregel „deckel“: 1 ist ungültig (erlaubt: ganze Zahl von 2 bis 99)."
    ]
    assert input_value(r, "opt_deckel") == "1"
    assert '<option value="&#34;sieben&#34;" selected>' in r.text
    assert '<details class="options" open>' in r.text
    assert input_value(r, "name") == "Zur Post"
    assert re.search(r'name="public" value="0" checked', r.text)  # the choice is kept

    r = web.post(
        "/stammtisch",
        {"name": "Zur Post", "slug": "Zur Post!", "preset": "standard", "public": "1"},
    )
    assert errors_of(r, "slug") == [
        "Nur Kleinbuchstaben, Ziffern und Bindestriche (höchstens 40 Zeichen)."
    ]
    with app.app_context():
        assert services().repo.get_stammtisch("zur-post") is None


def test_a_kurzname_that_is_taken_is_rejected_next_to_the_field(web: Browser) -> None:
    create(web, slug="post")
    r = web.post(
        "/stammtisch", {"name": "Andere", "slug": "post", "preset": "standard", "public": "1"}
    )
    assert r.status_code == 422
    assert errors_of(r, "slug") == ["Den Stammtisch „post“ gibt es schon."]


def test_logging_in_needs_the_right_key_and_logging_out_forgets_it(app: Flask) -> None:
    owner = Browser(app)
    slug, token = create(owner)
    _other_slug, other_token = create(owner, "Andere Runde")

    guest = Browser(app)
    r = guest.get(f"/s/{slug}/")
    assert r.status_code == 302 and r.headers["Location"] == f"/?stammtisch={slug}"
    assert input_value(guest.get(r.headers["Location"]), "login-slug") == slug

    r = guest.post("/anmelden", {"slug": slug, "token": other_token})
    assert r.status_code == 422
    assert errors_of(r, "login_token") == ["Dieser Schlüssel passt nicht zu diesem Stammtisch."]
    assert input_value(r, "login-slug") == slug
    assert input_value(r, "login-token") == ""  # never echoed
    r = guest.post("/anmelden", {"slug": "gibts-nicht", "token": token})
    assert errors_of(r, "login_slug") == ["Einen Stammtisch „gibts-nicht“ gibt es nicht."]
    r = guest.post("/anmelden", {"slug": "", "token": ""})
    assert errors_of(r, "login_slug") and errors_of(r, "login_token")
    assert guest.get(f"/s/{slug}/").status_code == 302

    r = guest.post("/anmelden", {"slug": slug, "token": token})
    assert r.headers["Location"] == f"/s/{slug}/"
    assert "Zur Post" in text_of(guest.get("/"))  # listed as "Deine Stammtische"
    assert guest.get(f"/s/{slug}/").status_code == 200

    r = guest.post(f"/s/{slug}/abmelden")
    assert r.status_code == 302
    assert "Abgemeldet" in text_of(guest.get("/"))
    assert guest.get(f"/s/{slug}/").status_code == 302


def test_the_stammtisch_page_links_games_players_history_and_statistics(
    web: Browser, table: tuple[str, str]
) -> None:
    slug, game = table
    r = web.get(f"/s/{slug}/")
    assert f'href="{game}"' in r.text  # the running game
    assert f'href="/dashboard/{slug}/"' in r.text
    page = text_of(r)
    for words in ["Neues Spiel", "Spieler (4)", "Alle Spiele", "Statistik", "Deckel im Spiel: 3"]:
        assert words in page


def test_an_unknown_stammtisch_or_game_is_a_german_404_page(
    web: Browser, table: tuple[str, str]
) -> None:
    slug, game = table
    r = web.get("/s/gibts-nicht/")
    assert r.status_code == 404 and "Keinen Stammtisch „gibts-nicht“ gefunden." in text_of(r)
    r = web.get(f"/s/{slug}/spiel/999")
    assert r.status_code == 404 and "Kein Spiel 999 an diesem Stammtisch." in text_of(r)


# ----------------------------------------------------------------------------- players


def test_players_are_added_renamed_retired_and_brought_back(web: Browser, app: Flask) -> None:
    slug, _ = create(web)
    add_players(web, slug, ["Anna", "Bert"])
    r = web.post(f"/s/{slug}/spieler", {"name": "Anna"})
    assert r.status_code == 422
    assert errors_of(r, "name") == ["Einen Spieler „Anna“ gibt es an diesem Stammtisch schon."]
    assert input_value(r, "new-player") == "Anna"
    r = web.post(f"/s/{slug}/spieler", {"name": "   "})
    assert errors_of(r, "name") == ["Bitte einen Namen eintragen."]
    r = web.post(f"/s/{slug}/spieler", {"name": "x" * 41})
    assert errors_of(r, "name") == ["Der Name ist zu lang (höchstens 40 Zeichen)."]

    ids = player_ids(app, slug)
    r = web.post(f"/s/{slug}/spieler/{ids['Bert']}", {"action": "rename", "name": "Anna"})
    assert r.status_code == 422
    assert errors_of(r, f"player_{ids['Bert']}") == [
        "Einen Spieler „Anna“ gibt es an diesem Stammtisch schon."
    ]
    assert input_value(r, f"name-{ids['Bert']}") == "Anna"  # what was typed, kept
    r = web.follow(web.post(f"/s/{slug}/spieler/{ids['Bert']}", {"name": "Berti"}))
    assert "Bert heißt jetzt Berti." in text_of(r)

    r = web.follow(web.post(f"/s/{slug}/spieler/{ids['Anna']}", {"action": "retire"}))
    assert "Anna ist jetzt nicht mehr aktiv" in text_of(r)
    assert "+ Anna" not in text_of(web.get(f"/s/{slug}/neu"))
    r = web.follow(web.post(f"/s/{slug}/spieler/{ids['Anna']}", {"action": "return"}))
    assert "Anna ist wieder dabei." in text_of(r)
    assert "+ Anna" in text_of(web.get(f"/s/{slug}/neu"))
    assert set(player_ids(app, slug)) == {"Anna", "Berti"}


# ----------------------------------------------------------------------------- new game


def test_seats_are_tapped_in_order_reordered_and_the_opener_chosen(
    web: Browser, app: Flask
) -> None:
    slug, _ = create(web)
    add_players(web, slug)
    ids = {n: str(i) for n, i in player_ids(app, slug).items()}
    url = f"/s/{slug}/neu"
    page = web.get(url)

    def tap(label: str) -> Any:
        """Follow the link of a seat button (each tap is a plain GET: nothing is stored)."""
        nonlocal page
        found = re.search(
            rf'<a class="button [^"]*" href="([^"]+)"[^>]*>{re.escape(label)}</a>', page.text
        )
        assert found, label
        page = web.get(html.unescape(found.group(1)))
        assert page.status_code == 200
        return page

    def seats() -> list[str]:
        return re.findall(r'<input type="hidden" name="seat" value="(\d+)">', page.text)

    for name in ["Clara", "Anna", "Bert", "Dieter"]:
        tap(f"+ {name}")
    assert seats() == [ids[n] for n in ["Clara", "Anna", "Bert", "Dieter"]]
    page = web.get(
        re.sub(
            r"&amp;",
            "&",
            re.search(r'href="([^"]+)" aria-label="Anna einen Platz nach vorn"', page.text).group(
                1
            ),
        )
    )
    page = web.get(
        html.unescape(re.search(r'href="([^"]+)" aria-label="Bert entfernen"', page.text).group(1))
    )
    tap("+ Bert")
    assert seats() == [ids[n] for n in ["Anna", "Clara", "Dieter", "Bert"]]
    assert re.search(rf'value="{ids["Anna"]}" checked', page.text)  # first seat opens by default
    with app.app_context():
        svc = services()
        assert svc.games(svc.stammtisch(slug), {"page": 1, "page_size": 5})["total"] == 0

    r = web.post(url, {"seat": [ids["Anna"]], "starter": ids["Anna"]})
    assert r.status_code == 422
    assert errors_of(r, "seats") == ["Ein Spiel braucht mindestens 2 Spieler."]
    assert seats() != []  # still the page, with Anna seated
    r = web.post(url, {"seat": seats(), "starter": ""})
    assert errors_of(r, "starter") == ["Bitte wählen, wer die erste Runde beginnt."]

    r = web.post(url, {"seat": seats(), "starter": ids["Clara"]})
    assert r.status_code == 302
    game_id = int(r.headers["Location"].rsplit("/", 1)[1])
    with app.app_context():
        svc = services()
        game = svc.game(svc.stammtisch(slug), game_id).runtime.game
        assert game.first_starter == "Clara"
    # "Nochmal mit denselben" starts from the same seats
    page = web.get(f"{url}?wie={game_id}")
    assert seats() == [ids[n] for n in ["Anna", "Clara", "Dieter", "Bert"]]


# ----------------------------------------------------------------------------- the game


def test_a_turn_takes_three_dice_and_one_throws_button_and_is_announced_like_the_engine(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    rules = ruleset_from_config({"preset": "standard", "overrides": {"deckel": 3}})
    ref = Game.start(rules, PLAYERS, "Anna")
    page = web.get(game)
    assert throw_buttons(page) == ["1", "2", "3"]  # Anna opens: up to the maximum
    assert "Runde 1: Anna legt vor: bis zu 3 Würfe." in text_of(page)

    entries = [
        ("Anna", "114", "2"),
        ("Bert", "345", "2"),
        ("Clara", "555", "1"),
        ("Dieter", "632", "2"),
    ]
    for i, (player, dice, throws) in enumerate(entries):
        if i == 1:  # typed instead of tapped
            r = turn(web, game, player, "", throws, wurf=dice)
        else:
            r = turn(web, game, player, dice, throws)
        expected = [
            e.message
            for e in ref.apply(
                parse_event(
                    {"player": player, "dice": [int(d) for d in dice], "throws": int(throws)}, rules
                )
            )
        ]
        page = web.follow(r)
        assert announcements(page) == expected
        if i == 0:
            assert throw_buttons(page) == ["1", "2"]  # only what Anna's limit allows
            assert "Anna hat vorgelegt: höchstens 2 Würfe." in text_of(page)
    assert announcements(page)[-2:] == [
        "Dieter bekommt 3 Deckel aus der Mitte – Schock 4 von Anna.",
        "Dieter hat alle Deckel und verliert die erste Hälfte.",
    ]
    state = game_state(app, slug, game)
    assert state["phase"] == "half2" and state["mitte"] == 3
    assert re.search(r'<span class="count" id="mitte">3</span>', page.text)
    assert 'id="phase">2. Hälfte<' in page.text
    assert 'id="am-zug">Dieter<' in page.text  # the half's loser opens the next
    assert "1. Hälfte verloren" in text_of(page)
    assert "Runde 1" in text_of(page)  # the history


def test_a_rejected_turn_is_shown_next_to_the_field_keeps_the_input_and_stores_nothing(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    web.follow(turn(web, game, "Anna", "113", "1"))
    before = game_state(app, slug, game)

    r = turn(web, game, "Bert", "", "1", wurf="117")
    assert r.status_code == 422
    assert errors_of(r, "dice") == ["„117“ sind keine Würfel (erwartet z. B. 1-1-4 oder 114)."]
    assert input_value(r, "wurf") == "117"

    r = turn(web, game, "Bert", "12", "1")
    assert errors_of(r, "dice") == ["Bitte alle 3 Würfel wählen (es fehlt Würfel 3)."]
    assert re.search(r'name="d1" value="1" checked', r.text)
    assert re.search(r'name="d2" value="2" checked', r.text)

    r = turn(web, game, "Bert", "653", "")
    assert errors_of(r, "throws") == ["Wie viele Würfe? Bitte eine der Wurf-Tasten antippen."]

    # a forged throws value beyond the round's limit: the engine's rule, next to the buttons
    r = turn(web, game, "Bert", "653", "3")
    assert r.status_code == 422
    assert errors_of(r, "throws") == [
        "In dieser Runde ist höchstens 1 Wurf erlaubt (Anna hat vorgelegt), nicht 3."
    ]
    assert re.search(r'name="d1" value="6" checked', r.text)

    r = turn(web, game, "Clara", "653", "1")  # not Clara's turn (a stale form of another phone)
    assert errors_of(r, "throws") == ["Clara ist nicht an der Reihe, sondern Bert."]
    assert game_state(app, slug, game) == before


def test_a_form_of_an_older_state_records_nothing(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    old = seq_of(web.get(game))
    web.follow(turn(web, game, "Anna", "113", "1"))
    before = game_state(app, slug, game)
    r = web.post(
        game + "/zug",
        {"seq": old, "player": "Bert", "d1": "6", "d2": "5", "d3": "3", "throws": "1"},
    )
    assert r.status_code == 409
    assert "Inzwischen wurde in diesem Spiel etwas eingetragen" in text_of(r)
    assert game_state(app, slug, game) == before


def test_undo_names_what_it_undoes_and_a_double_tap_undoes_only_once(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    web.follow(turn(web, game, "Anna", "113", "1"))
    page = web.follow(turn(web, game, "Bert", "665", "1"))
    assert "↶ Rückgängig: Zug von Bert (5-6-6)" in text_of(page)
    seq = seq_of(page)
    r = web.follow(web.post(game + "/rueckgaengig", {"seq": seq}))
    assert announcements(r) == ["Rückgängig gemacht: Zug von Bert (5-6-6)."]
    assert "↶ Rückgängig: Zug von Anna (1-1-3)" in text_of(r)
    assert 'id="am-zug">Bert<' in r.text
    state = game_state(app, slug, game)
    r = web.post(game + "/rueckgaengig", {"seq": seq})  # the same button again
    assert r.status_code == 409
    assert "Es wurde nichts rückgängig gemacht." in errors_of(r, "undo")[0]
    assert game_state(app, slug, game) == state


def test_aus_der_hand_and_blind_are_offered_only_when_the_house_rules_care(
    web: Browser, app: Flask
) -> None:
    slug, _ = create(web, opt_deckel="3", preset="wolbeck", opt_blind="true")
    add_players(web, slug)
    game = start(web, slug)
    page = web.get(game)
    assert throw_buttons(page) == ["1", "2", "2h", "3", "3h", "blind"]
    assert "aus der Hand" in text_of(page)
    r = web.follow(turn(web, game, "Anna", "555", "3h"))
    assert announcements(r) == ["Anna: General (5-5-5, 3 Würfe)."]  # from the hand: a General
    r = web.follow(turn(web, game, "Bert", "555", "2"))
    assert announcements(r) == ["Bert: Zahl 555 (5-5-5, 2 Würfe)."]  # assembled: a Zahl
    r = web.follow(turn(web, game, "Clara", "642", "blind"))
    assert announcements(r) == ["Clara: Zahl 642 (2-4-6, 1 Wurf)."]

    slug2, _ = create(web, "Ohne Hand", opt_deckel="3")
    add_players(web, slug2)
    assert throw_buttons(web.get(start(web, slug2))) == ["1", "2", "3"]


def test_penalties_with_a_reason_where_the_house_rules_have_them(web: Browser, app: Flask) -> None:
    slug, _ = create(web, preset="nrw")
    add_players(web, slug)
    game = start(web, slug)
    page = web.get(game)
    assert "Strafe eintragen" in text_of(page)
    assert input_value(page, "pen-deckel") == "1"
    r = web.post(
        game + "/strafe", {"seq": seq_of(page), "player": "Bert", "reason": "", "deckel": "1"}
    )
    assert r.status_code == 422
    assert errors_of(r, "reason") == ["Bitte den Grund der Strafe eintragen."]
    assert game_state(app, slug, game)["mitte"] == 13
    r = web.post(
        game + "/strafe",
        {"seq": seq_of(page), "player": "Bert", "reason": "zu früh aufgedeckt", "deckel": "2"},
    )
    page = web.follow(r)
    assert announcements(page) == ["Strafe für Bert (zu früh aufgedeckt): 2 Deckel aus der Mitte."]
    state = game_state(app, slug, game)
    assert state["mitte"] == 11 and state["stacks"]["Bert"] == 2
    assert "↶ Rückgängig: Strafe für Bert (zu früh aufgedeckt)" in text_of(page)

    slug2, _ = create(web, "Ohne Strafen")
    add_players(web, slug2)
    assert "Strafe eintragen" not in text_of(web.get(start(web, slug2)))


def test_a_finished_game_shows_its_loser_and_its_rounds_and_takes_no_more_turns(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    for player, dice in [("Anna", "113"), ("Bert", "653"), ("Clara", "542"), ("Dieter", "421")]:
        web.follow(turn(web, game, player, dice, "1"))
    for player, dice in [("Dieter", "113"), ("Anna", "653"), ("Bert", "542"), ("Clara", "421")]:
        page = web.follow(turn(web, game, player, dice, "1"))
    assert "Finale: Clara gegen Dieter, Clara beginnt." in announcements(page)
    assert "Finale: Clara gegen Dieter" in text_of(page)
    web.follow(turn(web, game, "Clara", "653", "1"))
    page = web.follow(turn(web, game, "Dieter", "111", "1"))
    assert "Clara verliert das Finale und zahlt die Runde." in announcements(page)
    assert 'id="eingabe"' not in page.text
    assert "Clara hat verloren" in text_of(page)
    assert "Hälften verloren: Dieter und Clara" in text_of(page)

    history = web.get(f"/s/{slug}/spiele")
    assert "verloren: Clara" in text_of(history)
    assert f'href="{game}"' in history.text
    # a turn posted after the end is refused by the engine, nothing stored
    r = turn(web, game, "Clara", "653", "1")
    assert r.status_code == 422
    assert "Das Spiel ist schon vorbei: Clara hat verloren." in text_of(r)


# ----------------------------------------------------------------------------- secret key


def test_the_secret_key_is_generated_once_and_kept_in_the_instance_folder(tmp_path: Path) -> None:
    app = Flask("x", instance_path=str(tmp_path / "instance"))
    app.config.update(SECRET_KEY=None, STORAGE="sqlite", DATABASE=str(tmp_path / "a.sqlite3"))
    key = _secret_key(app)
    path = tmp_path / "instance" / "secret_key"
    assert len(key) >= 32 and path.read_text().strip() == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert _secret_key(app) == key  # the next start signs with the same key
    assert list((tmp_path / "instance").iterdir()) == [path]

    app.config["SECRET_KEY"] = "configured-" + "k" * 32
    assert _secret_key(app) == "configured-" + "k" * 32
    app.config.update(SECRET_KEY=None, DATABASE=":memory:")
    assert _secret_key(app) != key  # nothing to persist for an in-memory database


def test_two_undo_taps_at_the_same_moment_undo_only_one_entry(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The form's "is this still the current state?" check and the undo are one step."""
    owner = Browser(app)
    slug, token = create(owner, opt_deckel="3")
    add_players(owner, slug)
    game = start(owner, slug)
    owner.follow(turn(owner, game, "Anna", "113", "1"))
    owner.follow(turn(owner, game, "Bert", "665", "1"))
    second = Browser(app)
    second.post("/anmelden", {"slug": slug, "token": token})
    seq = seq_of(owner.get(game))
    assert seq_of(second.get(game)) == seq

    import api.domain.services

    original = api.domain.services.Services.undo

    def slow_undo(self: Any, *args: Any, **kw: Any) -> Any:
        time.sleep(0.2)  # both taps arrive while the first undo is still being written
        return original(self, *args, **kw)

    monkeypatch.setattr(api.domain.services.Services, "undo", slow_undo)
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def tap(who: Browser) -> None:
        barrier.wait()
        statuses.append(who.post(game + "/rueckgaengig", {"seq": seq}).status_code)

    threads = [threading.Thread(target=tap, args=(b,)) for b in (owner, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [302, 409]
    state = game_state(app, slug, game)
    assert state["next_player"] == "Bert"  # only Bert's entry was undone, Anna's is kept


def test_two_dice_rules_show_two_die_rows_and_accept_two_typed_pips(web: Browser) -> None:
    slug, _ = create(web, opt_deckel="3", opt_two_dice="true", opt_max_throws="5")
    add_players(web, slug, ["Anna", "Bert"])
    game = start(web, slug, ["Anna", "Bert"])
    page = web.get(game)
    assert page.text.count('class="die-row"') == 2
    assert throw_buttons(page) == ["1", "2", "3", "4", "5"]
    r = web.follow(turn(web, game, "Anna", "", "4", wurf="14"))
    assert announcements(r)[0].startswith("Anna: ")
    r = turn(web, game, "Bert", "", "1", wurf="114")
    assert errors_of(r, "dice") == ["„dice“ muss genau 2 Würfel enthalten, nicht 3: [4, 1, 1]."]


def test_the_history_groups_rounds_by_half_with_repeats_and_penalties() -> None:
    from api.rules import DomainEvent as Ev
    from api.rules import Half, HalfLost, PenaltyGiven, RoundLost, RoundRepeated, TurnRecorded
    from api.table.views import protocol

    def turn(message: str) -> Ev:
        return Ev(message, TurnRecorded(message[0], message[3:], ""))

    sections = protocol(
        [
            (1, [turn("A: Zahl 653")]),
            (2, [turn("B: Zahl 653"), Ev("wiederholt", RoundRepeated("A"))]),
            (3, [Ev("Strafe für B", PenaltyGiven("B", 1, "zu früh", "mitte"))]),
            (4, [turn("A: Schock aus")]),
            (
                5,
                [
                    turn("B: Zahl 421"),
                    Ev("B bekommt alle", RoundLost("B", 3, "all", "A", "Schock aus")),
                    Ev("B verliert die erste Hälfte", HalfLost("B", Half.HALF1, {"A": 0, "B": 3})),
                ],
            ),
            (6, [turn("B: Zahl 653")]),
        ]
    )
    assert [s.title for s in sections] == ["1. Hälfte", "2. Hälfte"]
    first = sections[0].items
    assert [r.number for r in first] == [1, 2]
    assert first[0].turns == ["A: Zahl 653", "B: Zahl 653"]
    assert first[0].outcome == [("round_repeated", "wiederholt")]
    assert first[1].turns == ["A: Schock aus", "B: Zahl 421"]
    assert first[1].outcome == [
        ("penalty", "Strafe für B"),
        ("round_lost", "B bekommt alle"),
        ("half_lost", "B verliert die erste Hälfte"),
    ]
    assert sections[1].items[0].turns == ["B: Zahl 653"]  # the round in progress


def test_name_and_house_rules_can_be_changed_for_the_games_that_follow(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    page = web.get(f"/s/{slug}/regeln")
    assert input_value(page, "name") == "Zur Post"
    assert input_value(page, "opt_deckel") == "3"
    assert re.search(r'value="standard" checked', page.text)
    assert '<details class="options" open>' in page.text

    r = web.post(f"/s/{slug}/regeln", {"name": "", "preset": "nrw", "opt_deckel": "15"})
    assert r.status_code == 422
    assert errors_of(r, "name") == ["Bitte einen Namen für den Stammtisch eintragen."]
    assert re.search(r'value="nrw" checked', r.text) and input_value(r, "opt_deckel") == "15"

    assert re.search(r'name="public" value="1" checked', page.text)  # public, as created
    form = {"name": "Zur alten Post", "preset": "nrw", "opt_deckel": "15", "public": "0"}
    r = web.post(f"/s/{slug}/regeln", form)
    page = web.follow(r)
    assert "Gespeichert. Neue Hausregeln gelten ab dem nächsten Spiel." in text_of(page)
    assert "Zur alten Post" in text_of(page)
    with app.app_context():
        st = services().stammtisch(slug)
        assert st.rules == {"preset": "nrw", "overrides": {"deckel": 15}}
        assert st.private is True  # "Nur wir" was chosen
    assert game_state(app, slug, game)["mitte"] == 3  # the running game keeps its rules
    assert game_state(app, slug, start(web, slug))["mitte"] == 15


def test_the_house_rules_page_turns_the_odds_on_for_the_form_or_also_the_tv(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, _ = table
    page = web.get(f"/s/{slug}/regeln")
    assert "Manche Runden halten das für Schummeln" in text_of(page)
    assert re.search(r'name="odds_shown" value="off" checked', page.text)  # off unless chosen
    form = {"name": "Zur Post", "preset": "standard", "opt_deckel": "3", "public": "1"}
    r = web.post(f"/s/{slug}/regeln", {**form, "odds_shown": "ueberall", "name": "Neu"})
    assert r.status_code == 422
    assert errors_of(r, "odds_shown") == [
        "Bitte wählen: Chancen aus, im Formular oder auch im Fernsehen."
    ]
    with app.app_context():
        st = services().stammtisch(slug)
        assert (st.name, st.odds_shown) == ("Zur Post", "off")  # nothing written
    web.follow(web.post(f"/s/{slug}/regeln", {**form, "odds_shown": "form_and_tv"}))
    with app.app_context():
        st = services().stammtisch(slug)
        assert (st.odds_shown, st.rules["preset"]) == ("form_and_tv", "standard")
    page = web.get(f"/s/{slug}/regeln")
    assert re.search(r'name="odds_shown" value="form_and_tv" checked', page.text)
    web.follow(web.post(f"/s/{slug}/regeln", form))  # a form without the choice keeps it
    with app.app_context():
        assert services().stammtisch(slug).odds_shown == "form_and_tv"


def test_a_house_rule_set_through_the_api_survives_saving_the_form(
    web: Browser, app: Flask
) -> None:
    slug, _ = create(web)
    own = {"name": "Zwei Zweien", "pips": [3, 2, 2], "rank": 478, "deckel": 8}
    with app.app_context():
        svc = services()
        svc.update_stammtisch(
            svc.stammtisch(slug),
            {"rules": {"preset": "standard", "overrides": {"specials": [own], "penalty": 7}}},
        )
    page = web.get(f"/s/{slug}/regeln")
    assert "Zwei Zweien (eigener Wert)" in text_of(page)
    assert "7 Deckel (eigener Wert)" in text_of(page)
    form = {"name": "Zur Post", "preset": "standard", "public": "1"}
    for key, options in re.findall(r'<select id="opt_(\w+)"[^>]*>(.*?)</select>', page.text, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected>', options)
        if chosen:  # what a browser sends: the selected option of every menu
            form[f"opt_{key}"] = html.unescape(chosen.group(1))
    web.follow(web.post(f"/s/{slug}/regeln", form))
    with app.app_context():
        rules = services().stammtisch(slug).rules
    assert rules == {"preset": "standard", "overrides": {"specials": [own], "penalty": 7}}


def test_an_unexpected_error_is_a_german_page_with_the_security_headers(
    web: Browser, table: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slug, game = table
    web.app.config["PROPAGATE_EXCEPTIONS"] = False
    import api.web.games

    def broken(*_args: Any, **_kw: Any) -> Any:
        raise RuntimeError("kaputt")

    monkeypatch.setattr(api.web.games, "screen", broken)
    r = web.get(game)
    assert r.status_code == 500
    assert "Da ist etwas schiefgegangen." in text_of(r) and "kaputt" not in r.text
    assert r.headers["X-Frame-Options"] == "DENY"


def test_players_without_deckel_are_out_once_the_mitte_is_empty(
    web: Browser, app: Flask, table: tuple[str, str]
) -> None:
    slug, game = table
    for player, dice in [("Anna", "112"), ("Bert", "653"), ("Clara", "542"), ("Dieter", "421")]:
        page = web.follow(turn(web, game, player, dice, "1"))
    assert "Runde 2:" in text_of(page)
    for player, dice in [("Dieter", "113"), ("Anna", "653"), ("Bert", "542"), ("Clara", "421")]:
        page = web.follow(turn(web, game, player, dice, "1"))
    assert announcements(page)[-3:] == [
        "Clara bekommt 1 Deckel aus der Mitte – Schock 3 von Dieter.",
        "Anna hat keine Deckel mehr und ist in dieser Hälfte raus.",
        "Bert hat keine Deckel mehr und ist in dieser Hälfte raus.",
    ]
    out = re.findall(r'<li class="stack is-out" data-player="(\w+)">', page.text)
    assert out == ["Anna", "Bert"]
    assert page.text.count('<span class="tag tag-out">raus</span>') == 2
    assert re.search(r'<span class="count" id="mitte">0</span>', page.text)
    assert 'id="am-zug">Clara<' in page.text and "Runde 3:" in text_of(page)


def test_the_start_page_warns_when_the_key_would_travel_unencrypted(web: Browser) -> None:
    warning = "Diese Verbindung ist nicht verschlüsselt"
    assert warning not in text_of(web.get("/"))  # on this machine: fine
    assert warning in text_of(web.client.get("/", base_url="http://192.168.1.20:5000"))
    assert warning not in text_of(web.client.get("/", base_url="https://schocken.example"))
    manifest = web.client.get(re.search(r'rel="manifest" href="([^"]+)"', web.get("/").text)[1])
    manifest.close()
    assert manifest.mimetype == "application/manifest+json"


def test_a_turn_open_throw_by_throw_from_an_app_is_shown_and_not_overwritten(
    web: Browser, app: Flask
) -> None:
    slug, token = create(web, opt_deckel="3")
    add_players(web, slug)
    game = start(web, slug)
    game_id = game.rsplit("/", 1)[1]
    r = web.client.post(
        f"/api/v1/stammtische/{slug}/games/{game_id}/throws",
        json={"player": "Anna", "dice": [1, 4, 6], "aside": [1]},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert r.status_code == 201, r.json
    page = web.get(game)
    # the form continues the app's turn throw by throw (issue 27): it says so and shows it
    assert "Anna hat einen offenen Zug (Wurf für Wurf): unten Wurf für Wurf weiter" in text_of(page)
    assert "Wurf 2 von höchstens 3 Würfe · rausgelegt: 1 · im Becher: 2 Würfel" in text_of(page)
    before = game_state(app, slug, game)
    r = turn(web, game, "Anna", "114", "2")
    assert r.status_code == 422
    assert "Anna hat noch einen offenen Zug" in errors_of(r, "throws")[0]
    assert game_state(app, slug, game) == before
