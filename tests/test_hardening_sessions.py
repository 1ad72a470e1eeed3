"""Issue 13, item 7: a login of the pub form can be revoked on the server.

After logging out (or after the Stammtisch's key changed) a saved copy of the session cookie
no longer works, in every server process of one database; the cookie (signed, not encrypted)
carries no hash of the key, only an opaque id. On the in-memory fake and on SQLite.
"""

from __future__ import annotations

import base64
import re
import zlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from conftest import app_on, store_config
from flask import Flask

from api.app import create_app
from api.storage import MemoryRepository, WebSession

COOKIE = "schocken_session"


@pytest.fixture
def app(storage: str, tmp_path: Path) -> Any:
    yield from app_on(storage, tmp_path)


def new_stammtisch(app: Flask) -> tuple[str, str]:
    r = app.test_client().post("/api/v1/stammtische", json={"name": "Zur Post"})
    assert r.status_code == 201, r.json
    return r.json["slug"], r.json["token"]


def csrf(client: Any) -> str:
    page = client.get("/").text
    found = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert found
    return found.group(1)


def log_in(app: Flask, slug: str, token: str) -> Any:
    """A phone logged in to ``slug`` (a test client holding the session cookie)."""
    phone = app.test_client()
    r = phone.post("/anmelden", data={"slug": slug, "token": token, "csrf_token": csrf(phone)})
    assert r.status_code == 302, r.text
    assert may_write(phone, slug)
    return phone


def may_write(client: Any, slug: str) -> bool:
    """Whether the players page (logged-in only) opens, instead of redirecting to the login."""
    r = client.get(f"/s/{slug}/spieler")
    assert r.status_code in (200, 302)
    return r.status_code == 200


def with_cookie(app: Flask, value: str) -> Any:
    """Another browser given a saved copy of the session cookie."""
    thief = app.test_client()
    thief.set_cookie(COOKIE, value)
    return thief


def cookie_text(value: str) -> str:
    """The readable payload of Flask's signed cookie (base64, zlib-compressed if it starts
    with a dot): what anyone holding the cookie can read."""
    payload = value.lstrip(".").split(".")[0]
    data = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    return (zlib.decompress(data) if value.startswith(".") else data).decode()


def test_a_saved_copy_of_the_cookie_no_longer_works_after_logout(app: Flask) -> None:
    slug, token = new_stammtisch(app)
    phone = log_in(app, slug, token)
    saved = phone.get_cookie(COOKIE).value
    assert may_write(with_cookie(app, saved), slug)  # the copy works while logged in
    r = phone.post(f"/s/{slug}/abmelden", data={"csrf_token": csrf(phone)})
    assert r.status_code == 302
    assert not may_write(phone, slug)
    assert not may_write(with_cookie(app, saved), slug)  # revoked on the server


def test_logging_out_one_phone_keeps_the_other_phones_logged_in(app: Flask) -> None:
    slug, token = new_stammtisch(app)
    first, second = log_in(app, slug, token), log_in(app, slug, token)
    first.post(f"/s/{slug}/abmelden", data={"csrf_token": csrf(first)})
    assert not may_write(first, slug)
    assert may_write(second, slug)


def test_the_cookie_carries_no_hash_of_the_key(app: Flask) -> None:
    slug, token = new_stammtisch(app)
    phone = log_in(app, slug, token)
    text = cookie_text(phone.get_cookie(COOKIE).value)
    repo = app.extensions["schocken"].store.repository()
    try:
        token_hash = repo.get_stammtisch(slug).token_hash
        assert token_hash not in text and token not in text
        assert slug in text  # the payload was read: it names the Stammtisch, not its key
    finally:
        repo.close()


def change_key(app: Flask, slug: str) -> None:
    """The Stammtisch's key changes (in the store, as any future key change would)."""
    repo = app.extensions["schocken"].store.repository()
    try:
        if isinstance(repo, MemoryRepository):
            repo.stammtische[slug] = replace(repo.stammtische[slug], token_hash="0" * 64)
        else:  # SQLite or PostgreSQL: the relational adapter's statement runner
            with repo.transaction():
                repo._x(  # noqa: SLF001
                    "UPDATE stammtische SET token_hash = :key WHERE slug = :slug",
                    {"key": "0" * 64, "slug": slug},
                )
    finally:
        repo.close()


def test_a_changed_key_ends_every_saved_login(app: Flask) -> None:
    slug, token = new_stammtisch(app)
    phone = log_in(app, slug, token)
    saved = phone.get_cookie(COOKIE).value
    change_key(app, slug)
    assert not may_write(phone, slug)
    assert not may_write(with_cookie(app, saved), slug)


def test_an_expired_login_no_longer_works_and_is_purged(app: Flask) -> None:
    slug, token = new_stammtisch(app)
    repo = app.extensions["schocken"].store.repository()
    try:
        st = repo.get_stammtisch(slug)
        old = WebSession("a" * 64, st.id, st.token_hash, datetime.now(UTC) - timedelta(1))
        repo.add_web_session(old)
        assert repo.get_web_session(old.id_hash) == old
        repo.purge_web_sessions(datetime.now(UTC))
        assert repo.get_web_session(old.id_hash) is None
    finally:
        repo.close()


def test_a_logout_in_one_server_process_ends_the_login_in_every_other(tmp_path: Path) -> None:
    """Two apps on one SQLite file (two gunicorn workers): same secret (the instance data
    beside the database), same logins."""
    config = store_config("sqlite", tmp_path)
    one, two = create_app(config), create_app(config)
    try:
        slug, token = new_stammtisch(one)
        phone = log_in(one, slug, token)
        saved = phone.get_cookie(COOKIE).value
        assert may_write(with_cookie(two, saved), slug)
        other = with_cookie(two, saved)
        r = other.post(f"/s/{slug}/abmelden", data={"csrf_token": csrf(other)})
        assert r.status_code == 302
        assert not may_write(phone, slug)  # the first worker knows it too
        assert not may_write(with_cookie(one, saved), slug)
    finally:
        one.extensions["schocken"].store.close()
        two.extensions["schocken"].store.close()


def test_a_response_that_does_not_change_the_session_sends_no_cookie(app: Flask) -> None:
    """A page's announcement (a flashed message in the cookie) is shown once. The phone loads
    the engine's files while the page is on its way: were those answers to send the cookie
    again (Flask refreshes a permanent session's cookie on every answer by default), the one
    arriving after the page would put the shown announcement back, and the next page would
    show it a second time."""
    slug, token = new_stammtisch(app)
    phone = log_in(app, slug, token)
    r = phone.post(f"/s/{slug}/spieler", data={"name": "Bert", "csrf_token": csrf(phone)})
    assert r.status_code == 302
    with_announcement = phone.get_cookie(COOKIE).value
    late = with_cookie(app, with_announcement)  # a download begun before the page
    for url in ("/assets/engine.js", "/assets/engine-worker.js", "/assets/style.css"):
        answer = late.get(url)
        assert answer.status_code == 200, url
        assert "Set-Cookie" not in answer.headers, url
    page = phone.get(f"/s/{slug}/spieler")
    assert "Bert spielt jetzt mit." in page.text
    assert "Set-Cookie" in page.headers  # the shown announcement leaves the cookie
    assert "Bert spielt jetzt mit." not in phone.get(f"/s/{slug}/spieler").text
