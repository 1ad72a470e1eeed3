"""Keys: a new write key for any Stammtisch (API and CLI; the form's in test_web_prg.py) ends
the old key and every login made with it; the demo's key is kept where a local user looks
(beside the database, the start page of a server on loopback, `schocken demo` run again)."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from test_web_pages import Browser, text_of

from api.app import create_app
from api.cli import main
from api.config import instance_folder, instance_path


def write(client: Any, slug: str, token: str, name: str) -> int:
    headers = {"Authorization": f"Bearer {token}"}
    r = client.post(f"/api/v1/stammtische/{slug}/players", json={"name": name}, headers=headers)
    return int(r.status_code)


def test_the_api_answers_a_new_key_once_and_the_old_one_stops_working(client: Any) -> None:
    r = client.post("/api/v1/stammtische", json={"name": "Zur Post", "private": False})
    slug, old = r.json["slug"], r.json["token"]
    assert client.post(f"/api/v1/stammtische/{slug}/key").status_code == 401
    bad = {"Authorization": "Bearer falsch"}
    assert client.post(f"/api/v1/stammtische/{slug}/key", headers=bad).status_code == 403
    r = client.post(f"/api/v1/stammtische/{slug}/key", headers={"Authorization": f"Bearer {old}"})
    assert r.status_code == 201
    new = r.json["token"]
    assert new != old and r.json["slug"] == slug and len(new) >= 40
    assert write(client, slug, old, "Anna") == 403
    assert write(client, slug, new, "Anna") == 201
    assert "token" not in client.get(f"/api/v1/stammtische/{slug}").json


@pytest.fixture
def db(tmp_path: Path) -> str:
    return str(tmp_path / "data" / "k.sqlite3")


def serve_app(db: str, **config: Any) -> Any:
    app = create_app({"DATABASE": db, "SECRET_KEY": "k" * 40, **config})
    return app


def test_the_cli_gives_any_stammtisch_a_new_key(db: str, capsys: Any) -> None:
    app = serve_app(db)
    client = app.test_client()
    r = client.post("/api/v1/stammtische", json={"name": "Zur Post", "private": True})
    slug, old = r.json["slug"], r.json["token"]
    assert main(["key", "rotate", slug, "--db", db], standalone_mode=False) == 0
    out = capsys.readouterr()
    new = out.out.strip()
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", new)
    assert "Der alte Schlüssel gilt nicht mehr" in out.err
    assert write(client, slug, old, "Anna") == 404  # private: another key sees nothing
    assert write(client, slug, new, "Anna") == 201
    assert main(["key", "rotate", "gibt-es-nicht", "--db", db], standalone_mode=False) == 1
    app.extensions["schocken"].store.close()


def test_the_demo_keeps_its_key_for_the_start_page_of_a_local_server(db: str, capsys: Any) -> None:
    assert main(["demo", "--db", db, "--years", "1"], standalone_mode=False) == 0
    said = capsys.readouterr().err
    path = Path(instance_folder(db, instance_path())) / "demo_key.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    kept = json.loads(path.read_text())
    assert kept["slug"] == "demo" and kept["token"] in said and str(path) in said

    # run again: it says where the key is and how to get a new one
    assert main(["demo", "--db", db], standalone_mode=False) == 0
    said = capsys.readouterr().err
    assert "Nichts zu tun" in said and str(path) in said and "schocken key rotate demo" in said

    local = serve_app(db, LISTEN_HOST="127.0.0.1")
    web = Browser(local)
    page = web.get("/")
    assert re.search(r'<code id="demo-token">([^<]+)</code>', page.text).group(1) == kept["token"]
    r = web.post("/anmelden", {"slug": "demo", "token": kept["token"]})  # "Demo öffnen"
    assert r.status_code == 302 and r.headers["Location"] == "/s/demo/"
    for config in [
        {"LISTEN_HOST": "0.0.0.0"},
        {"LISTEN_HOST": "127.0.0.1", "TRUSTED_PROXIES": 1},
        {},
    ]:
        other = serve_app(db, **config)
        assert 'id="demo-token"' not in Browser(other).get("/").text, config
        other.extensions["schocken"].store.close()

    # a new key replaces the kept one; a key renewed elsewhere is not shown
    assert main(["key", "rotate", "demo", "--db", db], standalone_mode=False) == 0
    new = capsys.readouterr().out.strip()
    assert json.loads(path.read_text())["token"] == new
    assert new in Browser(local).get("/").text
    local.test_client().post(
        "/api/v1/stammtische/demo/key", headers={"Authorization": f"Bearer {new}"}
    )
    assert 'id="demo-token"' not in Browser(local).get("/").text
    assert "Demo ausprobieren" not in text_of(Browser(local).get("/"))
    local.extensions["schocken"].store.close()
