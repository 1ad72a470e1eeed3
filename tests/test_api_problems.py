"""One error model everywhere: RFC 9457 problem details with a stable code (issue 14).

Every error answer of the API, the framework's own included, is ``application/problem+json``
with ``type``, ``title``, ``status``, ``detail``, ``code`` and the deprecated ``message``; the
409-vs-422 rule is checked over a table of cases on the in-memory fake.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from conftest import PLAYERS, Table, make_table

from api.app import create_app
from api.domain.problems import CATALOGUE
from api.http.problems import PROBLEM_JSON, TYPE_PREFIX
from api.storage import StorageUnavailable, StorageUnreachable

KEYS = {"type", "title", "status", "detail", "code", "message"}


def assert_problem(r: Any, status: int, code: str) -> dict[str, Any]:
    """``r`` is a problem document of ``status`` and ``code``, consistent in itself."""
    assert r.status_code == status, r.get_data(as_text=True)
    assert r.mimetype == PROBLEM_JSON
    doc: dict[str, Any] = r.get_json(force=True)
    assert KEYS <= set(doc), doc
    assert (doc["status"], doc["code"]) == (status, code), doc
    assert doc["type"] == TYPE_PREFIX + code
    assert doc["title"] == CATALOGUE[code][1]
    assert doc["detail"] and doc["message"] == doc["detail"]
    return doc


def _app(**config: Any) -> Any:
    return create_app({"STORAGE": "memory", "TESTING": True, **config})


@pytest.fixture
def fake() -> Any:
    return _app()


@pytest.fixture
def table(fake: Any) -> Table:
    t = make_table(fake.test_client())
    t.add_players(PLAYERS)
    return t


# ------------------------------------------------------------------ the framework's own answers
def test_an_unknown_route_is_a_problem_404(fake):
    doc = assert_problem(fake.test_client().get("/api/v1/nirgends"), 404, "not_found")
    assert "Adresse" in doc["detail"]


def test_a_wrong_method_is_a_problem_405_with_allow(fake):
    r = fake.test_client().delete("/api/v1/stammtische")
    assert_problem(r, 405, "method_not_allowed")
    assert "POST" in r.headers["Allow"]


def test_an_oversized_body_is_a_problem_413(fake):
    fake.config["MAX_CONTENT_LENGTH"] = 1000
    r = fake.test_client().post("/api/v1/stammtische", json={"name": "x" * 2000})
    assert "höchstens 1000 Bytes" in assert_problem(r, 413, "payload_too_large")["detail"]


def test_a_body_that_is_not_json_is_a_problem_415(fake):
    r = fake.test_client().post("/api/v1/stammtische", data="name=x", content_type="text/plain")
    assert_problem(r, 415, "unsupported_media_type")


def test_schema_errors_are_a_problem_422_with_field_errors(fake):
    r = fake.test_client().post("/api/v1/stammtische", json={"name": "", "extra": 1})
    doc = assert_problem(r, 422, "validation_failed")
    assert set(doc["errors"]["json"]) == {"name", "extra"}


def test_no_token_is_a_problem_401_with_www_authenticate(table):
    r = table.client.post(table.base + "/players", json={"name": "Emil"})
    assert_problem(r, 401, "unauthorized")
    assert r.headers["WWW-Authenticate"].startswith("Bearer")


def test_another_stammtisch_token_is_a_problem_403(table):
    other = make_table(table.client, "Anker")
    r = table.client.post(table.base + "/players", json={"name": "Emil"}, headers=other.auth)
    assert_problem(r, 403, "forbidden")


def test_an_unknown_game_is_a_problem_404(table):
    assert_problem(table.get("/games/999"), 404, "game_not_found")


def test_a_stale_if_match_is_a_problem_412_with_the_game(table):
    game = table.start()
    assert table.turn(game, "Anna", [1, 1, 4], 1).status_code == 201
    body = {"player": "Bert", "dice": [6, 3, 2], "throws": 1}
    headers = {**table.auth, "If-Match": '"0"'}
    r = table.client.post(f"{table.base}/games/{game}/turns", json=body, headers=headers)
    doc = assert_problem(r, 412, "precondition_failed")
    assert doc["game"]["seq"] == 1 and r.headers["ETag"] == '"1"'


def test_too_many_writes_are_a_problem_429_with_retry_after():
    client = _app(WRITE_RATE_PER_MINUTE=60, WRITE_RATE_BURST=2).test_client()
    table = make_table(client)
    statuses = [table.post("/players", {"name": n}) for n in ("A", "B", "C")]
    r = statuses[-1]
    assert_problem(r, 429, "rate_limited")
    assert int(r.headers["Retry-After"]) >= 1


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        (StorageUnavailable("disk full"), "storage_unavailable"),
        (StorageUnreachable("server down"), "database_unreachable"),
    ],
)
def test_storage_faults_are_a_problem_503_with_retry_after(fault, code):
    app = _app()

    def boom() -> Any:
        raise fault

    app.add_url_rule("/api/v1/boom", "boom", boom)
    r = app.test_client().get("/api/v1/boom")
    assert_problem(r, 503, code)
    assert r.headers["Retry-After"].isdigit()


def test_an_unexpected_exception_is_a_problem_500():
    app = create_app({"STORAGE": "memory"})  # not TESTING: the exception becomes the 500

    def boom() -> Any:
        raise RuntimeError("kaputt")

    app.add_url_rule("/api/v1/boom", "boom", boom)
    doc = assert_problem(app.test_client().get("/api/v1/boom"), 500, "internal_error")
    assert "kaputt" not in doc["detail"]


def test_idempotency_key_misuse_has_its_own_codes(table):
    def post(name: str, key: str) -> Any:
        headers = {**table.auth, "Idempotency-Key": key}
        return table.client.post(table.base + "/players", json={"name": name}, headers=headers)

    assert_problem(post("Emil", " "), 422, "idempotency_key_invalid")
    assert post("Emil", "k-1").status_code == 201
    assert_problem(post("Fritz", "k-1"), 422, "idempotency_key_reused")


# ------------------------------------------------------------------------ the type URIs
def test_a_problem_type_explains_itself(fake):
    r = fake.test_client().get(TYPE_PREFIX + "turn_not_yours")
    assert r.status_code == 200
    assert r.json == {
        "type": TYPE_PREFIX + "turn_not_yours",
        "code": "turn_not_yours",
        "title": "Nicht an der Reihe",
        "status": 409,
    }
    assert_problem(fake.test_client().get(TYPE_PREFIX + "gibt_es_nicht"), 404, "not_found")


def test_every_code_is_snake_case_with_a_german_title():
    for code, (status, title) in CATALOGUE.items():
        assert code.isascii() and code == code.lower() and " " not in code, code
        assert 400 <= status < 600 and title, code


# -------------------------------------------------------------------- the OpenAPI document
def test_every_documented_error_answer_is_problem_json(fake):
    spec = yaml.safe_load(fake.test_client().get("/openapi.json").get_data(as_text=True))
    answers = list(spec["components"]["responses"].values())
    for operations in spec["paths"].values():
        for operation in operations.values():
            if isinstance(operation, dict):
                answers += [
                    a
                    for status, a in operation.get("responses", {}).items()
                    if str(status)[0] in "45" and "content" in a and "Health" not in str(a)
                ]
    assert answers
    for answer in answers:
        assert set(answer["content"]) == {PROBLEM_JSON}, answer
    error = spec["components"]["schemas"]["Error"]
    assert set(error["properties"]["code"]["enum"]) == set(CATALOGUE)
    assert "409" in spec["info"]["description"] and "422" in spec["info"]["description"]


# ---------------------------------------------------------------- the 409-vs-422 rule, a table
def _game(table: Table, **kw: Any) -> str:
    return f"/games/{table.start(**kw)}"


def _opened(table: Table) -> str:
    """A game where Anna opened with one throw: the round's limit is 1."""
    game = _game(table)
    assert (
        table.post(game + "/turns", {"player": "Anna", "dice": [1, 1, 4], "throws": 1}).status_code
        == 201
    )
    return game


def _open_turn(table: Table) -> str:
    """A game where Anna's turn is open: one throw, a 1 set aside, two dice in the cup."""
    game = _game(table)
    assert (
        table.post(
            game + "/throws", {"player": "Anna", "dice": [1, 4, 6], "aside": [1]}
        ).status_code
        == 201
    )
    return game


TWO_THROWS = {"preset": "standard", "overrides": {"max_throws": 2}}
DETAIL_TOO_MANY_DICE = [{"dice": [1, 4, 6], "aside": [1]}, {"dice": [2, 3, 5]}]

#: (case, setup → path, request path, body, status, code, field at fault or None)
CASES: list[tuple[str, Any, str, dict[str, Any], int, str, str | None]] = [
    # 422: malformed whatever the game's state
    (
        "summary with two dice",
        _game,
        "/turns",
        {"player": "Anna", "dice": [1, 4], "throws": 1},
        422,
        "dice_count_wrong",
        "dice",
    ),
    (
        "throws: 0",
        _game,
        "/turns",
        {"player": "Anna", "dice": [1, 1, 4], "throws": 0},
        422,
        "validation_failed",
        "throws",
    ),
    (
        "throws beyond the house rules",
        lambda t: _game(t, rules=TWO_THROWS),
        "/turns",
        {"player": "Anna", "dice": [1, 1, 4], "throws": 3},
        422,
        "throws_over_house_limit",
        "throws",
    ),
    (
        "a detail throwing a die set aside",
        _game,
        "/turns",
        {"player": "Anna", "detail": DETAIL_TOO_MANY_DICE},
        422,
        "dice_count_wrong",
        "detail[1]",
    ),
    (
        "a player not in the game",
        _game,
        "/turns",
        {"player": "Egon", "dice": [1, 1, 4], "throws": 1},
        422,
        "unknown_player",
        "player",
    ),
    (
        "blind where the house rules forbid it",
        _game,
        "/turns",
        {"player": "Anna", "dice": [1, 1, 4], "throws": 1, "blind": True},
        422,
        "house_rule_forbids",
        "blind",
    ),
    (
        "four dice in a throw",
        _game,
        "/throws",
        {"player": "Anna", "dice": [1, 2, 3, 4]},
        422,
        "validation_failed",
        "dice",
    ),
    (
        "an unknown field",
        _game,
        "/turns",
        {"player": "Anna", "dice": [1, 1, 4], "throws": 1, "x": 1},
        422,
        "validation_failed",
        "x",
    ),
    # 409: well-formed, but the rules forbid it in this game's state
    (
        "not this player's turn",
        _game,
        "/turns",
        {"player": "Bert", "dice": [1, 1, 4], "throws": 1},
        409,
        "turn_not_yours",
        "player",
    ),
    (
        "more throws than the opener allowed",
        _opened,
        "/turns",
        {"player": "Bert", "dice": [3, 4, 5], "throws": 2, "hand": False},
        409,
        "throw_limit_exceeded",
        "throws",
    ),
    (
        "three dice while two are in the cup",
        _open_turn,
        "/throws",
        {"player": "Anna", "dice": [2, 3, 5]},
        409,
        "cup_mismatch",
        "dice",
    ),
    (
        "stop without an open turn",
        _game,
        "/throws",
        {"player": "Anna", "stop": True},
        409,
        "no_open_turn",
        "stop",
    ),
    (
        "a penalty while a turn is open",
        _open_turn,
        "/penalties",
        {"player": "Bert", "deckel": 1, "reason": "zu früh"},
        409,
        "turn_open",
        None,
    ),
    (
        "a whole turn over one's open turn",
        _open_turn,
        "/turns",
        {"player": "Anna", "dice": [1, 1, 4], "throws": 2, "hand": False},
        409,
        "turn_open",
        "player",
    ),
    (
        "undo with nothing to undo",
        _game,
        "/undo",
        {"by": "Anna", "reason": "vertippt"},
        409,
        "nothing_to_undo",
        None,
    ),
]


@pytest.mark.parametrize(
    ("setup", "path", "body", "status", "code", "field"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_409_means_the_state_forbids_it_and_422_that_it_is_malformed(
    table, setup, path, body, status, code, field
):
    game = setup(table)
    before = table.game(int(game.rsplit("/", 1)[1]))
    doc = assert_problem(table.post(game + path, body), status, code)
    assert CATALOGUE[code][0] == status  # one status per code
    if field is None:
        assert "errors" not in doc
    else:
        assert field in doc["errors"]["json"], doc
    assert table.game(int(game.rsplit("/", 1)[1])) == before  # a refusal changes nothing


def test_the_same_request_is_422_or_409_by_the_rule_not_by_the_layer(table):
    """The issue's examples: a wrong dice count is 422 in a summary and in a detail (the
    request contradicts itself), 409 thrown one by one (it depends on the open turn)."""
    summary = table.post(_game(table) + "/turns", {"player": "Anna", "dice": [1, 4], "throws": 1})
    detail = table.post(_game(table) + "/turns", {"player": "Anna", "detail": DETAIL_TOO_MANY_DICE})
    thrown = table.post(_open_turn(table) + "/throws", {"player": "Anna", "dice": [2, 3, 5]})
    assert [summary.status_code, detail.status_code, thrown.status_code] == [422, 422, 409]


def test_a_name_taken_is_409_with_the_field(table):
    doc = assert_problem(table.post("/players", {"name": "Anna"}), 409, "name_taken")
    assert "name" in doc["errors"]["json"]


def test_not_found_names_what_is_missing(table):
    assert_problem(table.get("/games/999"), 404, "game_not_found")
    assert_problem(table.client.get("/api/v1/stammtische/nix"), 404, "stammtisch_not_found")
    assert_problem(table.client.get("/api/v1/rules/presets/nix"), 404, "preset_not_found")


# ------------------------------------------------------------- every code is in the catalogue
def _codes_raised() -> set[str]:
    """Every ``code="…"`` (errors) and ``problem="…"`` (aborts) written in api/."""
    import ast
    from pathlib import Path

    found: set[str] = set()
    for path in Path(__file__).parent.parent.joinpath("api").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    value = kw.value
                    if kw.arg in ("code", "problem") and isinstance(value, ast.Constant):
                        if isinstance(value.value, str):
                            found.add(value.value)
    return found


def test_every_code_raised_is_catalogued():
    raised = _codes_raised()
    assert {"turn_not_yours", "throw_limit_exceeded", "turn_open", "name_taken"} <= raised
    assert raised <= set(CATALOGUE), raised - set(CATALOGUE)


def test_the_412_answer_is_documented_as_412_not_409(fake):
    spec = yaml.safe_load(fake.test_client().get("/openapi.json").get_data(as_text=True))
    stale = spec["components"]["schemas"]["PreconditionFailed"]["properties"]
    assert stale["status"]["example"] == 412 and stale["code"]["enum"] == ["precondition_failed"]
    assert stale["title"]["example"] == CATALOGUE["precondition_failed"][1]
