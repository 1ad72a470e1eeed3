# ruff: noqa: F811  (the fixtures imported from the other test module)
"""Post/Redirect/Get in the pub form, and the key of a Stammtisch: renewed from the form.

Every rejected form answers ``303 See Other`` to its page (never a page at the POST address),
the page shows the messages and the entered values with the rejection's status once; a
reload shows the plain page and records nothing.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from test_web_pages import (  # noqa: F401  (fixtures)
    Browser,
    add_players,
    app,
    create,
    errors_of,
    game_state,
    input_value,
    player_ids,
    seq_of,
    start,
    table,
    text_of,
    turn,
    web,
)

from api.http.context import services


def rejected(web: Browser, url: str, data: dict[str, Any], page: str, status: int = 422) -> Any:
    """POST ``data`` to ``url``: 303 to ``page`` (a GET: a reload sends nothing again), shown
    with ``status``."""
    r = web.post(url, data)
    assert web.posted.status_code == 303, url
    location = web.posted.headers["Location"]
    assert location.split("#")[0].split("?")[0] == page
    assert r.status_code == status
    return r


def reload_is_plain(web: Browser, page: str) -> None:
    again = web.get(page)
    assert again.status_code == 200
    assert 'class="error"' not in again.text


@pytest.mark.parametrize(
    ("url", "data", "page", "field", "message"),
    [
        ("/stammtisch", {"name": ""}, "/", "name", "Bitte einen Namen"),
        ("/anmelden", {"slug": "gibt-es-nicht", "token": "x"}, "/", "login_slug", "gibt es nicht"),
        ("/s/{slug}/spieler", {"name": ""}, "/s/{slug}/spieler", "name", "Bitte einen Namen"),
        ("/s/{slug}/neu", {"seat": []}, "/s/{slug}/neu", "seats", "mindestens 2 Spieler"),
        ("/s/{slug}/regeln", {"name": ""}, "/s/{slug}/regeln", "name", "Bitte einen Namen"),
    ],
)
def test_a_rejected_form_redirects_to_its_page_and_a_reload_shows_it_plain(
    web: Browser,
    table: tuple[str, str],
    url: str,
    data: dict[str, Any],
    page: str,
    field: str,
    message: str,
) -> None:
    slug, game = table
    url, page = url.format(slug=slug, game=game), page.format(slug=slug, game=game)
    before = game_state(web.app, slug, game)
    r = rejected(web, url, {**data, "seq": seq_of(web.get(game))}, page)
    assert message in " ".join(errors_of(r, field))
    reload_is_plain(web, page)
    assert game_state(web.app, slug, game) == before


def test_a_rejected_turn_keeps_the_typed_dice_and_a_reload_records_nothing(
    web: Browser, table: tuple[str, str]
) -> None:
    slug, game = table
    before = game_state(web.app, slug, game)
    r = turn(web, game, "Anna", "", "1", wurf="117")
    assert web.posted.status_code == 303 and web.posted.headers["Location"] == game
    assert r.status_code == 422
    assert "„117“ sind keine Würfel" in " ".join(errors_of(r, "dice"))
    assert input_value(r, "wurf") == "117"
    reload_is_plain(web, game)
    assert game_state(web.app, slug, game) == before


def test_a_rejected_penalty_keeps_what_was_entered(web: Browser) -> None:
    slug, _token = create(web, opt_deckel="3", opt_penalty="1")
    add_players(web, slug)
    game = start(web, slug)
    data = {"seq": seq_of(web.get(game)), "player": "Bert", "reason": "", "deckel": "2"}
    r = rejected(web, game + "/strafe", data, game)
    assert "Grund" in " ".join(errors_of(r, "reason"))
    assert input_value(r, "pen-deckel") == "2"
    assert "<option selected>Bert</option>" in r.text
    reload_is_plain(web, game)


def test_a_stale_form_is_409_on_the_game_page(web: Browser, table: tuple[str, str]) -> None:
    slug, game = table
    r = web.post(game + "/zug", {"seq": "99", "player": "Anna", "throws": "1", "wurf": "114"})
    assert web.posted.status_code == 303 and r.status_code == 409
    assert "Inzwischen wurde" in " ".join(errors_of(r, "form"))
    turn(web, game, "Anna", "114", "1")
    r = web.post(game + "/rueckgaengig", {"seq": "0"})
    assert web.posted.status_code == 303 and r.status_code == 409
    assert "nichts rückgängig" in " ".join(errors_of(r, "undo"))


def test_a_rejected_rename_keeps_the_name_beside_its_player(
    web: Browser, table: tuple[str, str]
) -> None:
    slug, _game = table
    anna = player_ids(web.app, slug)["Anna"]
    page = f"/s/{slug}/spieler"
    r = rejected(web, f"{page}/{anna}", {"action": "rename", "name": "Bert"}, page)
    assert "gibt es an diesem Stammtisch schon" in " ".join(errors_of(r, f"player_{anna}"))
    reload_is_plain(web, page)


def test_the_wait_of_the_back_off_survives_the_redirect(app: Flask) -> None:
    web = Browser(app)
    slug, token = create(web)
    for i in range(3):  # three wrong keys are free, then even the right one waits
        web.post("/anmelden", {"slug": slug, "token": f"wrong{i}"})
    r = rejected(web, "/anmelden", {"slug": slug, "token": token}, "/", status=429)
    assert int(r.headers["Retry-After"]) >= 1
    assert "falsche Schlüssel" in " ".join(errors_of(r, "login_token"))
    assert input_value(r, "login-slug") == slug
    assert token not in str(web.client.get_cookie("session"))  # the key is never kept


# ----------------------------------------------------------------------------- the key


def shown_key(r: Any) -> str | None:
    found = re.search(r'<code id="created-token">([^<]+)</code>', r.text)
    return found.group(1) if found else None


def test_a_new_key_is_shown_once_and_ends_the_old_key_and_its_logins(app: Flask) -> None:
    web, other = Browser(app), Browser(app)
    slug, old = create(web)
    assert shown_key(web.get(f"/s/{slug}/schluessel")) is None  # a reload shows no key
    r = other.post("/anmelden", {"slug": slug, "token": old})
    assert other.get(f"/s/{slug}/").status_code == 200

    r = web.post(f"/s/{slug}/schluessel", {})
    assert web.posted.status_code == 303
    new = shown_key(r)
    assert new and new != old
    assert "Der alte Schlüssel gilt nicht mehr" in text_of(r)
    assert shown_key(web.get(f"/s/{slug}/schluessel")) is None  # once
    assert web.get(f"/s/{slug}/").status_code == 200  # this phone stays logged in
    assert other.get(f"/s/{slug}/").status_code == 302  # the other login has ended
    with app.app_context():
        st = services().stammtisch(slug)
        services().authorize(st, new)
    client = app.test_client()
    for token, status in [(old, 403), (new, 201)]:
        r = client.post(
            f"/api/v1/stammtische/{slug}/players",
            json={"name": f"Neu {status}"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert r.status_code == status
    r = other.post("/anmelden", {"slug": slug, "token": old})
    assert "passt nicht" in " ".join(errors_of(r, "login_token"))


def test_a_refused_csrf_token_is_shown_on_the_page_the_form_came_from(
    web: Browser, table: tuple[str, str]
) -> None:
    slug, game = table
    before = game_state(web.app, slug, game)
    r = web.client.post(
        game + "/zug",
        data={"csrf_token": "falsch", "seq": "0", "player": "Anna", "throws": "1", "wurf": "114"},
        headers={"Referer": "http://localhost" + game},
    )
    assert r.status_code == 303 and r.headers["Location"] == game
    page = web.get(game)
    assert page.status_code == 400 and "Sicherheitsprüfung" in text_of(page)
    assert game_state(web.app, slug, game) == before
    r = web.client.post("/anmelden", data={"csrf_token": "x"}, headers={"Referer": "http://evil/"})
    assert r.headers["Location"] == "/"  # another site's page is never the way back
