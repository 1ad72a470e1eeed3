"""Rate limits keyed on who asks (issue 13, item 1): a Stammtisch's writes on its verified key,
everything else on the client address; creating Stammtische (API and form) and logging in
with a key (form) limited per address; wrong keys back a Stammtisch's form login off
exponentially, for every address and process; the address behind a reverse proxy only from a
configured number of trusted proxies. On SQLite (the HTTP suites' store), also across two processes."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import make_table, store_config
from test_web_pages import Browser, create, errors_of

from api.app import create_app
from api.http import context

LIMITS = {"WRITE_RATE_PER_MINUTE": 60, "WRITE_RATE_BURST": 3, "CREATE_RATE_PER_HOUR": 60,
          "CREATE_RATE_BURST": 3, "LOGIN_RATE_PER_MINUTE": 600, "LOGIN_RATE_BURST": 100}  # fmt: skip


@pytest.fixture
def make_app(storage: str, tmp_path: Any) -> Any:
    apps = []

    def make(**config: Any) -> Any:
        apps.append(create_app({**store_config(storage, tmp_path), **LIMITS, **config}))
        return apps[-1]

    yield make
    for app in apps:
        app.extensions["schocken"].store.close()


class Clock:
    """time.time of the rate limits, moved by hand."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def time(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(context, "time", c)
    return c


def _create(client: Any, name: str, headers: dict[str, str] | None = None, **kw: Any) -> Any:
    return client.post("/api/v1/stammtische", json={"name": name}, headers=headers or {}, **kw)


def test_made_up_authorization_headers_do_not_open_fresh_buckets(make_app, clock):
    client = make_app(CREATE_RATE_BURST=100).test_client()
    table = make_table(client)  # the address's first write
    codes = [
        client.post(
            table.base + "/players",
            json={"name": f"P{i}"},
            headers={"Authorization": f"Bearer junk{i}"},
        ).status_code  # fmt: skip
        for i in range(4)
    ]
    assert codes[:2] == [403, 403] and codes[2:] == [429, 429]  # the address's bucket is empty
    # the Stammtisch's own bucket is untouched by them
    assert table.post("/players", {"name": "Anna"}).status_code == 201


def test_a_valid_key_with_extra_spaces_is_the_same_bucket(make_app, clock):
    table = make_table(make_app().test_client())
    spaced = {"Authorization": f"Bearer    {table.token}  "}
    codes = [table.client.post(table.base + "/players", json={"name": f"P{i}"},
                               headers=spaced).status_code for i in range(4)]  # fmt: skip
    assert codes == [201, 201, 201, 429]
    assert table.post("/players", {"name": "X"}).status_code == 429  # written normally: the same
    clock.now += 1.0  # one token per second flows back
    assert table.post("/players", {"name": "X"}).status_code == 201


def test_creating_stammtische_is_limited_per_address_whatever_the_header(make_app, clock):
    client = make_app().test_client()
    codes = [_create(client, f"S{i}", {"Authorization": f"Bearer junk{i}"}).status_code
             for i in range(4)]  # fmt: skip
    assert codes == [201, 201, 201, 429]
    r = _create(client, "S4")
    assert r.status_code == 429 and "neue Stammtische" in r.json["message"]
    assert int(r.headers["Retry-After"]) >= 1
    other = _create(client, "S5", environ_base={"REMOTE_ADDR": "198.51.100.7"})
    assert other.status_code == 201  # another address has its own bucket


def test_the_form_limits_creating_stammtische_per_address(make_app, clock):
    app = make_app()
    web = Browser(app)
    for i in range(3):
        create(web, f"Form {i}")
    r = web.post("/stammtisch", {"name": "Form 3", "preset": "standard", "public": "1"})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    assert "neue Stammtische" in " ".join(errors_of(r, "name"))
    assert _create(app.test_client(), "API").status_code == 429  # one bucket for API and form


def _login(web: Browser, slug: str, token: str, addr: str = "127.0.0.1") -> Any:
    web.client.environ_base["REMOTE_ADDR"] = addr
    return web.post("/anmelden", {"slug": slug, "token": token})


def test_wrong_keys_back_the_form_login_off_exponentially_for_every_address(make_app, clock):
    app = make_app()
    web = Browser(app)
    slug, token = create(web, "Zur Post")
    for i in range(3):  # three wrong keys are free
        r = _login(web, slug, f"wrong{i}", f"203.0.113.{i}")
        assert r.status_code == 422 and "passt nicht" in " ".join(errors_of(r, "login_token"))
    r = _login(web, slug, token, "198.51.100.1")  # then even the right key waits, from anywhere
    assert r.status_code == 429 and r.headers["Retry-After"] == "1"
    assert "falsche Schlüssel" in " ".join(errors_of(r, "login_token"))
    clock.now += 1.0
    assert _login(web, slug, "wrong3", "203.0.113.9").status_code == 422  # the 4th: now 2 s
    r = _login(web, slug, token)
    assert r.status_code == 429 and r.headers["Retry-After"] == "2"
    clock.now += 1.5
    assert _login(web, slug, token).status_code == 429
    clock.now += 0.5
    r = _login(web, slug, token)
    assert r.status_code == 302  # the right key after the wait: logged in, the back-off cleared
    assert _login(web, slug, "wrong5").status_code == 422


def test_the_back_off_is_capped_at_a_minute(make_app, clock):
    web = Browser(make_app())
    slug, token = create(web, "Zur Post")
    for i in range(12):
        _login(web, slug, f"wrong{i}")
        clock.now += 120.0
    _login(web, slug, "wrong")
    assert int(_login(web, slug, token).headers["Retry-After"]) == context.MAX_BACKOFF


def test_login_attempts_are_limited_per_address(make_app, clock):
    web = Browser(make_app(LOGIN_RATE_BURST=2))
    slug, token = create(web, "Zur Post")
    assert _login(web, slug, "x").status_code == 422
    assert _login(web, "gibt-es-nicht", "y").status_code == 422
    r = _login(web, slug, token)
    assert r.status_code == 429 and "Anmeldeversuche" in " ".join(errors_of(r, "login_token"))
    assert _login(web, slug, token, "198.51.100.1").status_code == 302


def test_the_client_address_comes_from_trusted_proxies_only(make_app, clock):
    forwarded = [{"X-Forwarded-For": f"198.51.100.{i}"} for i in range(4)]
    direct = make_app().test_client()  # no proxy trusted: the header is the client's own words
    assert [_create(direct, f"D{i}", h).status_code for i, h in enumerate(forwarded)] == [
        201, 201, 201, 429]  # fmt: skip
    proxied = make_app(TRUSTED_PROXIES=1).test_client()
    assert [_create(proxied, f"P{i}", h).status_code for i, h in enumerate(forwarded)] == [201] * 4


def test_the_login_back_off_holds_across_two_processes(tmp_path, clock):
    config = {**LIMITS, "STORAGE": "sqlite", "DATABASE": str(tmp_path / "two.sqlite3")}
    a, b = create_app(config), create_app(config)
    try:
        web_a, web_b = Browser(a), Browser(b)
        slug, token = create(web_a, "Zur Post")
        for i in range(4):
            _login(web_a if i % 2 else web_b, slug, f"wrong{i}")
        assert _login(web_b, slug, token).status_code == 429
        assert _login(web_a, slug, token).status_code == 429
    finally:
        for app in (a, b):
            app.extensions["schocken"].store.close()
