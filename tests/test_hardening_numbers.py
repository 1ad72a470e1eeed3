"""Numbers that ``int()`` or the database refuse (issue 25, finding 5): a superscript "²",
5,000 digits (Python's ``int()`` refuses more than 4,300), an id of 2**63 (no signed 64-bit
column holds it) — in ``Last-Event-ID``, the dashboard's paths, the TV's ``?spiel=``, the
form's pages, the API's path ids and query numbers, and inside a JSON body. Each is a clear
4xx (404 for a path, 422 for a query value or a body, ignored where the value is optional) and
changes nothing; never a 500. On SQLite (the HTTP suites' store, tests/conftest.py).
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import PLAYERS, Table, app_on
from test_web_pages import Browser, add_players, create, errors_of, game_state, start, text_of

SUPERSCRIPT = "²"
FIVE_THOUSAND = "9" * 5000
TOO_BIG = str(2**63)
#: the odd numbers, each as it goes into a URL (the superscript percent-encoded, as a browser
#: sends it) and as it goes into a header (latin-1: "²" is one byte there)
ODD = [
    pytest.param(SUPERSCRIPT, id="superscript"),
    pytest.param(FIVE_THOUSAND, id="5000-digits"),
    pytest.param(TOO_BIG, id="2**63"),
]


@pytest.fixture
def app(storage: str, request: pytest.FixtureRequest, tmp_path: Any) -> Any:
    # EVENT_STREAM_SECONDS 0: a stream answers what is stored, then ends
    yield from app_on(storage, tmp_path, request, SECRET_KEY="n" * 40, EVENT_STREAM_SECONDS=0)


def _no_500(r: Any) -> None:
    assert r.status_code < 500, (r.status_code, r.data[:300])


def _game_state(table: Table, game: int) -> Any:
    return table.get(f"/games/{game}", headers=table.auth).json


# ------------------------------------------------------------------- the one reader


def test_a_number_from_text_is_ascii_digits_only_and_bounded() -> None:
    from api.rules import limits, read_number

    assert read_number("42") == 42 and read_number("0") == 0 and read_number("007") == 7
    for text in ["²", "٣", "１", " 7", "7 ", "+7", "-7", "1_000", "", "7\n", "9" * 21, None, 7]:
        assert read_number(text) is None, text
    assert read_number(str(2**63 - 1), limits.ID) == 2**63 - 1
    assert read_number(str(2**63), limits.ID) is None
    assert read_number("0", limits.ID) is None


def test_the_json_reader_refuses_what_python_takes_or_chokes_on() -> None:
    from api.http.blueprint import JsonRefused, read_json

    assert read_json(b'{"a": [1, -2, 3.5, 9223372036854775807]}', 32) == {
        "a": [1, -2, 3.5, 2**63 - 1]
    }
    refused = {
        f'{{"a": {FIVE_THOUSAND}}}': "zu groß",
        f'{{"a": -{FIVE_THOUSAND}}}': "zu groß",
        f'{{"a": {TOO_BIG}}}': "zu groß",
        '{"a": NaN}': "NaN",
        '{"a": -Infinity}': "Infinity",
        '{"a": 1e999}': "zu groß",
        "[" * 40 + "]" * 40: "verschachtelt",
        '{"a": "\\ud800"}': "Ersatzzeichen",
        "{kaputt": "Kein gültiges JSON.",
    }
    for body, words in refused.items():
        with pytest.raises(JsonRefused) as err:
            read_json(body.encode(), 32)
        assert words in err.value.message, (body[:40], err.value.message)


# ---------------------------------------------------------------- Last-Event-ID


@pytest.mark.parametrize("odd", ODD)
@pytest.mark.parametrize("which", ["stammtisch", "game"])
def test_an_odd_last_event_id_is_ignored_and_the_stream_answers(
    table: Table, odd: str, which: str
) -> None:
    game = table.start()
    path = "/events" if which == "stammtisch" else f"/games/{game}/events"
    r = table.get(path, headers={"Last-Event-ID": odd})
    _no_500(r)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    assert r.data.startswith(b"retry:")  # ignored: only new events, nothing replayed
    assert b"game_started" not in r.data


@pytest.mark.parametrize("odd", ODD)
def test_an_odd_last_event_id_in_the_query_is_422(table: Table, odd: str) -> None:
    r = table.get("/events", query_string={"last_event_id": odd})
    assert r.status_code == 422, r.data[:300]
    assert r.mimetype == "application/problem+json"
    assert "last_event_id" in r.json["errors"]["query"]


def test_the_largest_last_event_id_is_a_stream_with_nothing_to_replay(table: Table) -> None:
    table.start()
    for sent in ({"headers": {"Last-Event-ID": str(2**63 - 1)}}, {"query_string": {"last_event_id": str(2**63 - 1)}}):  # fmt: skip
        r = table.get("/events", **sent)
        assert r.status_code == 200 and b"game_started" not in r.data, r.data[:300]


# ------------------------------------------------------------------ the API's paths


@pytest.mark.parametrize("odd", ODD)
def test_an_odd_id_in_an_api_path_is_a_404_problem(table: Table, odd: str) -> None:
    game = table.start()
    before = _game_state(table, game)
    table.post("/webhooks", {"url": "https://chat.example/hook", "kinds": ["game_lost"]})
    paths = [
        ("get", f"/games/{odd}"),
        ("get", f"/games/{odd}/log"),
        ("get", f"/games/{odd}/undos"),
        ("get", f"/games/{odd}/events"),
        ("post", f"/games/{odd}/turns"),
        ("post", f"/games/{odd}/undo"),
        ("get", f"/players/{odd}"),
        ("patch", f"/players/{odd}"),
        ("get", f"/webhooks/{odd}"),
        ("get", f"/webhooks/{odd}/deliveries"),
        ("post", f"/webhooks/{odd}/ping"),
        ("post", f"/webhooks/1/deliveries/{odd}/redeliver"),
    ]
    for method, path in paths:
        url = table.base + path.replace(SUPERSCRIPT, "%C2%B2")
        body = {"player": "Anna", "dice": [1, 1, 4], "throws": 2} if method != "get" else None
        r = getattr(table.client, method)(url, json=body, headers=table.auth)
        assert r.status_code == 404, (method, path[:60], r.status_code, r.data[:200])
        assert r.mimetype == "application/problem+json"
    assert _game_state(table, game) == before


@pytest.mark.parametrize("odd", ODD)
def test_an_odd_number_in_an_api_query_is_422(table: Table, odd: str) -> None:
    hook = table.post("/webhooks", {"url": "https://chat.example/hook", "kinds": ["game_lost"]})
    assert hook.status_code == 201, hook.json
    for path, name in [
        ("/games", "player_id"),
        ("/games", "page"),
        ("/games", "year"),
        ("/statistics", "year"),
        (f"/webhooks/{hook.json['id']}/deliveries", "page"),
    ]:
        r = table.get(path, query_string={name: odd}, headers=table.auth)
        assert r.status_code == 422, (path, name, r.status_code, r.data[:200])
        assert name in r.json["errors"]["query"]


def test_the_largest_id_is_simply_not_found(table: Table) -> None:
    biggest = str(2**63 - 1)
    for path in (f"/games/{biggest}", f"/players/{biggest}", f"/webhooks/{biggest}"):
        r = table.get(path, headers=table.auth)
        assert r.status_code == 404 and r.json["code"] != "not_found", (path, r.json)
    r = table.get("/games", query_string={"player_id": biggest}, headers=table.auth)
    assert r.status_code == 200 and r.json["items"] == []


def test_an_id_beyond_64_bits_is_documented_out_of_range(app: Any) -> None:
    spec = app.test_client().get("/openapi.json").json
    game_id = spec["paths"]["/api/v1/stammtische/{slug}/games/{game_id}"]["parameters"][1]
    assert game_id["schema"]["minimum"] == 1
    assert game_id["schema"]["maximum"] == 2**63 - 1


# ---------------------------------------------------------------------- JSON bodies


@pytest.mark.parametrize(
    "number", [FIVE_THOUSAND, "-" + FIVE_THOUSAND, TOO_BIG, "NaN", "Infinity", "1e999"]
)
def test_an_odd_number_in_a_json_body_is_422_and_changes_nothing(table: Table, number: str) -> None:
    game = table.start()
    before = _game_state(table, game)
    bodies = [
        ("/players", f'{{"name": "Erna", "x": {number}}}'),
        ("/players", f'{{"name": {number}}}'),
        (f"/games/{game}/turns", f'{{"player": "Anna", "dice": [1, 1, 4], "throws": {number}}}'),
        (f"/games/{game}/penalties", f'{{"penalty": {{"player": "Anna", "deckel": {number}, "reason": "x"}}}}'),
        ("/imports", f'{{"players": ["Anna", "Bert"], "starter": "Anna", "events": [{number}]}}'),
        ("/webhooks", f'{{"url": "https://chat.example/hook", "kinds": [{number}]}}'),
    ]  # fmt: skip
    for path, body in bodies:
        r = table.client.post(
            table.base + path,
            data=body,
            headers={**table.auth, "Content-Type": "application/json"},
        )
        assert r.status_code == 422, (path, r.status_code, r.data[:300])
        assert r.mimetype == "application/problem+json"
    r = table.client.post(
        "/api/v1/stammtische",
        data=f'{{"name": "Zum Bären", "private": {number}}}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 422, r.data[:300]
    r = table.client.post(
        "/api/v1/rules/evaluate",
        data=f'{{"dice": [{number}, 1, 1]}}',
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 422, r.data[:300]
    assert _game_state(table, game) == before
    assert [p["name"] for p in table.get("/players", headers=table.auth).json] == PLAYERS


def test_a_huge_number_in_a_body_is_named_in_german(table: Table) -> None:
    r = table.client.post(
        table.base + "/players",
        data=f'{{"name": "Erna", "x": {FIVE_THOUSAND}}}',
        headers={**table.auth, "Content-Type": "application/json"},
    )
    assert r.status_code == 422
    assert "zu groß" in r.json["detail"] and "5000 Zeichen" in r.json["detail"]


# ------------------------------------------------------------------------ the pages


@pytest.fixture
def web(app: Any) -> tuple[Browser, str, str]:
    browser = Browser(app)
    slug, _token = create(browser)
    add_players(browser, slug)
    game = start(browser, slug)
    return browser, slug, game


@pytest.mark.parametrize("odd", ODD)
def test_an_odd_game_id_on_the_forms_pages_is_404(web: Any, odd: str) -> None:
    browser, slug, game = web
    before = game_state(browser.app, slug, game)
    sent = odd.replace(SUPERSCRIPT, "%C2%B2")
    for path in ["", "/zug", "/strafe", "/rueckgaengig", "/abbrechen", "/eintrag"]:
        url = f"/s/{slug}/spiel/{sent}{path}"
        r = browser.get(url) if not path else browser.post(url, {"seq": "0", "player": "Anna"})
        assert r.status_code == 404, (path, r.status_code, text_of(r)[:200])
    r = browser.post(f"/s/{slug}/spieler/{sent}", {"action": "retire"})
    assert r.status_code == 404, (r.status_code, text_of(r)[:200])
    for url in (f"/s/{slug}/unsere-regeln?spiel={sent}", f"/tv/{slug}?spiel={sent}"):
        r = browser.get(url)
        assert r.status_code == 404 and r.mimetype == "text/html", (url[:60], r.status_code)
        assert "gibt es" in text_of(r)  # the German error page
    assert game_state(browser.app, slug, game) == before


@pytest.mark.parametrize("odd", ODD)
def test_an_odd_number_in_a_forms_query_is_ignored(web: Any, odd: str) -> None:
    browser, slug, _game = web
    sent = odd.replace(SUPERSCRIPT, "%C2%B2")
    r = browser.get(f"/s/{slug}/neu?wie={sent}")  # seats as another game: none such
    assert r.status_code == 200, text_of(r)[:200]
    r = browser.get(f"/s/{slug}/spiele?seite={sent}")  # the page of the history: the first
    assert r.status_code == 200, text_of(r)[:200]


@pytest.mark.parametrize("odd", ODD)
def test_an_odd_number_of_deckel_in_the_rules_form_is_a_form_error(web: Any, odd: str) -> None:
    browser, slug, _game = web
    form = {"name": "Zur Post", "public": "1", "preset": "standard", "opt_deckel": odd}
    r = browser.post(f"/s/{slug}/regeln", form)
    _no_500(r)
    assert errors_of(r, "opt_deckel"), text_of(r)[:300]


def test_a_deep_json_value_in_the_rules_form_is_a_form_error(web: Any) -> None:
    browser, slug, _game = web
    form = {"name": "Zur Post", "public": "1", "preset": "standard", "opt_jule": "[" * 50000}
    r = browser.post(f"/s/{slug}/regeln", form)
    _no_500(r)
    assert errors_of(r, "opt_jule"), text_of(r)[:300]


# -------------------------------------------------------------------- the dashboard


@pytest.mark.parametrize("odd", ODD)
def test_an_odd_year_in_a_dashboard_path_is_404(table: Table, odd: str) -> None:
    sent = odd.replace(SUPERSCRIPT, "%C2%B2")
    for path in (f"/dashboard/{table.slug}/{sent}.html", f"/dashboard/{table.slug}/{sent}"):
        r = table.client.get(path)
        assert r.status_code == 404, (path[:60], r.status_code, r.data[:200])
