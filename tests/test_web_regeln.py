""" "Unsere Regeln" (``/s/<slug>/unsere-regeln``) through the Flask test client: the engine's
prose of the Stammtisch's rules or of one game's, who may read it, the links to it."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from conftest import STORES, Table, app_on, make_table
from flask import Flask
from test_web_pages import Browser, create, text_of

from api.rules import PRESETS, ruleset_from_config
from api.rules.prose import describe

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]


@pytest.fixture
def app(tmp_path: Any, request: pytest.FixtureRequest) -> Any:
    store = getattr(request, "param", "memory")
    yield from app_on(store, tmp_path, request, SECRET_KEY="t" * 40)


@pytest.fixture
def table(app: Flask) -> Table:
    t = make_table(app.test_client(), rules={"preset": "wolbeck", "overrides": {"deckel": 15}})
    t.add_players(PLAYERS)
    return t


def page(app: Flask, slug: str, query: str = "") -> Any:
    return app.test_client().get(f"/s/{slug}/unsere-regeln{query}")


def prose_of(r: Any) -> str:
    """The page's text with inline tags dropped (``<strong>``, the dice's ``<span>``)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", r.text)).split())


def headings(r: Any) -> list[tuple[str, str]]:
    return [(level, re.sub(r"<[^>]+>", "", inner).strip())
            for level, inner in re.findall(r"<h([12])[^>]*>(.*?)</h\1>", r.text, re.S)]  # fmt: skip


def test_a_public_stammtisch_shows_its_rules_without_login(app: Flask, table: Table) -> None:
    r = page(app, table.slug)
    assert r.status_code == 200
    text = text_of(r)
    rules = ruleset_from_config({"preset": "wolbeck", "overrides": {"deckel": 15}})
    assert headings(r)[0] == ("1", "Unsere Regeln Zur Post")
    assert [title for level, title in headings(r) if level == "2"] == [
        s.title for s in describe(rules)
    ]
    for section in describe(rules):
        for sentence in section.sentences():
            assert sentence in prose_of(r), sentence
    assert "Regelwerk „wolbeck“" in text and "jede mit 15 Deckeln" in text
    assert "Jule (1-2-4): 7 Deckel" in prose_of(r)
    # a visitor without login gets no links into the form's pages that would ask for it
    assert f'href="/s/{table.slug}/"' not in r.text
    assert f'href="/dashboard/{table.slug}/"' in r.text


def test_a_private_stammtisch_asks_for_the_login_first(app: Flask) -> None:
    t = make_table(app.test_client(), "Geheimrunde", private=True)
    r = page(app, t.slug)
    assert r.status_code == 302
    assert r.headers["Location"].endswith(f"/?stammtisch={t.slug}")
    assert page(app, t.slug, "?spiel=1").status_code == 302
    web = Browser(app)
    assert web.post("/anmelden", {"slug": t.slug, "token": t.token}).status_code == 302
    r = web.get(f"/s/{t.slug}/unsere-regeln")
    assert r.status_code == 200 and "Geheimrunde" in text_of(r)
    assert "Regelwerk „standard“" in text_of(r)
    assert f'href="/s/{t.slug}/"' in r.text  # members get the way back
    assert "/dashboard/" + t.slug not in r.text  # no statistics page of a private Stammtisch


def test_an_unknown_stammtisch_is_not_found(app: Flask) -> None:
    r = page(app, "gibt-es-nicht")
    assert r.status_code == 404 and "Nicht gefunden" in text_of(r)


def test_a_game_keeps_the_rules_it_was_started_with(app: Flask, table: Table) -> None:
    game = table.start(PLAYERS)
    number = table.game(game)["number"]
    assert table.patch("", {"rules": {"preset": "nrw"}}).status_code == 200
    now, then = text_of(page(app, table.slug)), text_of(page(app, table.slug, f"?spiel={game}"))
    assert "Regelwerk „nrw“" in now and "Zwei Fünfen verlieren nie:" in now
    assert "Regelwerk „wolbeck“" in then and "jede mit 15 Deckeln" in then
    assert "Zwei Fünfen verlieren nie:" not in then
    assert f"So galten sie in Spiel {number}" in then
    assert "So galten sie" not in now


@pytest.mark.parametrize("app", STORES, indirect=True)
@pytest.mark.parametrize(
    "spiel",
    ["999", "0", "-1", "+1", "1.0", "x", "", " 1", "²", "١", "9" * 18, "9" * 19, "9" * 40, "1e3"],
)
def test_a_bad_game_number_is_a_german_404(app: Flask, table: Table, spiel: str) -> None:
    table.start(PLAYERS)
    r = app.test_client().get(f"/s/{table.slug}/unsere-regeln", query_string={"spiel": spiel})
    assert r.status_code == 404, (spiel, r.status_code)
    assert "Nicht gefunden" in text_of(r)


def test_a_game_of_another_stammtisch_is_not_found(app: Flask, table: Table) -> None:
    other = make_table(app.test_client(), "Zum Falz")
    other.add_players(PLAYERS)
    theirs = other.start(PLAYERS)
    assert page(app, other.slug, f"?spiel={theirs}").status_code == 200
    assert page(app, table.slug, f"?spiel={theirs}").status_code == 404


def test_the_stammtisch_pages_link_to_the_rules(app: Flask) -> None:
    web = Browser(app)
    slug, _ = create(web)
    link = f'href="/s/{slug}/unsere-regeln"'
    overview, edit = web.get(f"/s/{slug}/"), web.get(f"/s/{slug}/regeln")
    assert re.search(rf'<a class="button" {link} id="regeln-link">Unsere Regeln</a>', overview.text)
    assert re.search(rf'<a {link} id="regeln-link">Unsere Regeln</a>', edit.text)
    r = web.get(f"/s/{slug}/unsere-regeln")
    assert f'href="/s/{slug}/regeln"' in r.text  # members may change them from here


def test_the_page_of_a_game_leads_back_to_the_game(app: Flask, table: Table) -> None:
    game = table.start(PLAYERS)
    web = Browser(app)
    assert web.post("/anmelden", {"slug": table.slug, "token": table.token}).status_code == 302
    r = web.get(f"/s/{table.slug}/unsere-regeln?spiel={game}")
    assert f'href="/s/{table.slug}/spiel/{game}"' in r.text
    assert f'href="/s/{table.slug}/unsere-regeln"' in r.text  # the rules for new games


def test_every_preset_reads_on_the_page(app: Flask) -> None:
    for name in PRESETS:
        t = make_table(app.test_client(), f"Runde {name}", rules={"preset": name})
        text = prose_of(page(app, t.slug))
        assert f"Regelwerk „{name}“" in text
        assert all(bullet in text for bullet in describe(PRESETS[name])[1].bullets)


def test_dice_stay_on_one_line_and_a_special_results_name_is_escaped(app: Flask) -> None:
    special = {"name": "<b>Wurst</b>", "pips": [6, 6, 5], "rank": 450, "deckel": 5}
    rules = {"preset": "standard", "overrides": {"specials": [special]}}
    t = make_table(app.test_client(), rules=rules)
    r = page(app, t.slug)
    assert '<strong>Schock 4</strong> (<span class="dice">1-1-4</span>): 4 Deckel' in r.text
    assert "<b>Wurst</b>" not in r.text
    assert '&lt;b&gt;Wurst&lt;/b&gt; (<span class="dice">5-6-6</span>)' in r.text
