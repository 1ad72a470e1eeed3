"""Idempotency keys belong to a credential (issue 13, item 5): a Stammtisch's writes to its
token, the creation of a Stammtisch (no token yet) to the client's address. Another client
sending the same key never gets the first one's answer (and its write token) replayed, nor
learns that the key is in use. On SQLite (the HTTP suites' store)."""

from __future__ import annotations

from conftest import make_table

KEY = {"Idempotency-Key": "3f1c2a9e-7b5d-4e0a-9c61-2d8f0b7a5e44"}
HOME = {"REMOTE_ADDR": "198.51.100.7"}
OTHER = {"REMOTE_ADDR": "203.0.113.9"}


def create(client, body, environ):
    return client.post("/api/v1/stammtische", json=body, headers=KEY, environ_base=environ)


def test_the_same_key_and_body_from_another_client_creates_its_own_stammtisch(client):
    body = {"name": "Zum Anker"}
    first = create(client, body, HOME)
    other = create(client, body, OTHER)
    assert first.status_code == other.status_code == 201
    assert "Idempotent-Replayed" not in other.headers
    assert other.json["token"] != first.json["token"]
    assert other.json["slug"] != first.json["slug"]
    # the first client's retry still gets its own answer back
    again = create(client, body, HOME)
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first.json


def test_the_same_key_with_another_body_from_another_client_reveals_nothing(client):
    create(client, {"name": "Zum Anker"}, HOME)
    other = create(client, {"name": "Zur Krone"}, OTHER)
    assert other.status_code == 201, other.json
    assert other.json["name"] == "Zur Krone"
    # the same client reusing its key for another request is still told so
    mine = create(client, {"name": "Zur Krone"}, HOME)
    assert mine.status_code == 422 and "Idempotency-Key" in mine.json["errors"]["headers"]


def test_keys_of_two_stammtische_are_separate(client):
    one, two = make_table(client, "Zur Post"), make_table(client, "Zur Linde")
    r1 = one.client.post(one.base + "/players", json={"name": "Anna"}, headers={**one.auth, **KEY})
    r2 = two.client.post(two.base + "/players", json={"name": "Anna"}, headers={**two.auth, **KEY})
    assert r1.status_code == r2.status_code == 201
    assert "Idempotent-Replayed" not in r2.headers
    assert [p["name"] for p in two.get("/players", headers=two.auth).json] == ["Anna"]


def test_the_spec_gives_no_fixed_key_and_an_if_match_that_always_matches(app):
    spec = app.extensions["flask-smorest"]["apis"][""]["ext_obj"].spec.to_dict()
    params = [
        param
        for path in spec["paths"].values()
        for operation in path.values()
        if isinstance(operation, dict)
        for param in operation.get("parameters", [])
    ]
    keys = [p for p in params if p.get("name") == "Idempotency-Key"]
    matches = [p for p in params if p.get("name") == "If-Match"]
    assert keys and matches
    assert all("example" not in p and "examples" not in p for p in keys)
    assert {p["example"] for p in matches} == {"*"}
