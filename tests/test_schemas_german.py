"""marshmallow's messages are German in every answer of the API (schemas/german.py), and
every message marshmallow defines has its German text (a new one in a later version fails
here)."""

from __future__ import annotations

import inspect
import re
from typing import Any

from marshmallow import fields, validate

import schemas  # noqa: F401  (sets the German messages)
from schemas.german import FIELDS, VALIDATORS

ENGLISH = re.compile(r"\b(Must|Length|Unknown|Missing|Not a|Invalid|Shorter|Longer|field)\b")


def test_every_message_of_every_field_and_validator_has_its_german_text() -> None:
    for cls in vars(fields).values():
        if inspect.isclass(cls) and issubclass(cls, fields.Field):
            own = cls.__dict__.get("default_error_messages", {})
            for key, text in own.items():
                assert not ENGLISH.search(text), (cls.__name__, key, text)
                assert any(key in FIELDS.get(c, {}) for c in cls.__mro__), (cls.__name__, key)
    for cls in vars(validate).values():
        if inspect.isclass(cls) and issubclass(cls, validate.Validator):
            for name, text in vars(cls).items():
                if name.startswith("message_") or name == "default_message":
                    assert text == VALIDATORS[cls][name], (cls.__name__, name)
                    assert not ENGLISH.search(text), (cls.__name__, name, text)


def test_the_api_answers_field_errors_in_german(client: Any) -> None:
    r = client.post("/api/v1/stammtische", json={"name": "Zur Post", "private": False})
    slug, token = r.json["slug"], r.json["token"]
    auth = {"Authorization": f"Bearer {token}"}
    cases = [
        (client.get(f"/api/v1/stammtische/{slug}/games?page=0"), "query", "page",
         "Muss mindestens 1 und höchstens 100000 sein."),
        (client.post(f"/api/v1/stammtische/{slug}/players", json={"name": ""}, headers=auth),
         "json", "name", "Die Länge muss zwischen 1 und 40 liegen."),
        (client.post(f"/api/v1/stammtische/{slug}/players", json={"name": "A", "x": 1},
                     headers=auth), "json", "x", "Unbekanntes Feld."),
        (client.post("/api/v1/stammtische", json={"name": 3}), "json", "name",
         "Kein gültiger Text."),
        (client.post("/api/v1/stammtische", json={}), "json", "name", "Pflichtfeld: fehlt."),
    ]  # fmt: skip
    for r, where, name, message in cases:
        assert r.status_code == 422
        assert r.json["errors"][where][name] == [message]
