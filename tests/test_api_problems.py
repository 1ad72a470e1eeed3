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
    assert_problem(r, 413, "payload_too_large")


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
    assert_problem(table.get("/games/999"), 404, "not_found")


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
