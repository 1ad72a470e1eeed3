"""A new key pauses every webhook of the Stammtisch (one registered with a leaked key would go
on receiving its events): the API's answer, the form's key page and ``schocken key rotate``
list them; nothing is delivered until someone with the new key resumes a webhook; the old key
can neither resume nor read them."""

from __future__ import annotations

import re
from typing import Any

from conftest import make_table
from test_web_pages import Browser, create, text_of

from api.cli import main


def hooks_of(table: Any, token: str) -> list[dict[str, Any]]:
    r = table.get("/webhooks", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200, r.json
    return r.json


def test_a_new_key_pauses_the_webhooks_and_lists_them(client: Any) -> None:
    table = make_table(client)
    table.add_players(["Anna", "Bert"])
    leaked = table.post("/webhooks", {"url": "https://evil.example/", "kinds": ["game_started"]})
    ours = table.post("/webhooks", {"url": "https://chat.example/", "kinds": ["game_started"],
                                    "description": "Discord"})  # fmt: skip
    old = table.token
    r = table.post("/key")
    assert r.status_code == 201, r.json
    new = r.json["token"]
    listed = [(h["id"], h["url"], h["active"]) for h in r.json["webhooks"]]
    assert listed == [
        (leaked.json["id"], "https://evil.example/", False),
        (ours.json["id"], "https://chat.example/", False),
    ]
    assert all("secret" not in h for h in r.json["webhooks"])
    table.token = new
    table.start(["Anna", "Bert"], starter="Anna")  # paused: nothing for either
    for hook in (leaked, ours):
        log = table.get(f"/webhooks/{hook.json['id']}/deliveries", headers=table.auth).json
        assert log["items"] == []
    old_auth = {"Authorization": f"Bearer {old}"}
    resume = {"active": True}
    path = f"{table.base}/webhooks/{ours.json['id']}"
    assert client.patch(path, json=resume, headers=old_auth).status_code == 403
    assert table.patch(f"/webhooks/{ours.json['id']}", resume).status_code == 200
    table.start(["Anna", "Bert"], starter="Bert")  # resumed: ours gets it, the leaked one not
    got = table.get(f"/webhooks/{ours.json['id']}/deliveries", headers=table.auth).json
    assert [d["kind"] for d in got["items"]] == ["game_started"]
    assert [h["active"] for h in hooks_of(table, new)] == [False, True]


def test_the_key_page_of_the_form_lists_the_paused_webhooks(app: Any) -> None:
    web = Browser(app)
    slug, token = create(web)
    client = app.test_client()
    auth = {"Authorization": f"Bearer {token}"}
    made = client.post(
        f"/api/v1/stammtische/{slug}/webhooks",
        json={"url": "https://evil.example/x", "kinds": ["game_lost"]},
        headers=auth,
    )
    assert made.status_code == 201
    r = web.post(f"/s/{slug}/schluessel", {})
    new = re.search(r'<code id="created-token">([^<]+)</code>', r.text).group(1)
    assert "https://evil.example/x" in text_of(r) and "Webhooks pausiert" in text_of(r)
    hooks = client.get(
        f"/api/v1/stammtische/{slug}/webhooks", headers={"Authorization": f"Bearer {new}"}
    ).json
    assert [h["active"] for h in hooks] == [False]


def test_the_cli_rotation_pauses_and_names_the_webhooks(tmp_path: Any, capsys: Any) -> None:
    from api.app import create_app

    db = str(tmp_path / "k.sqlite3")
    app = create_app({"DATABASE": db, "SECRET_KEY": "k" * 40})
    try:
        table = make_table(app.test_client())
        made = table.post("/webhooks", {"url": "https://evil.example/", "kinds": ["game_lost"]})
        assert main(["key", "rotate", table.slug, "--db", db], standalone_mode=False) == 0
        said = capsys.readouterr()
        assert f"Webhook {made.json['id']}: https://evil.example/" in said.err
        assert [h["active"] for h in hooks_of(table, said.out.strip())] == [False]
    finally:
        app.extensions["schocken"].store.close()
