"""The webhook API (on SQLite, the HTTP suites' store): register (URL and kinds checked, the secret shown once),
list, read, change, pause, rotate, delete, the delivery log, ping and redelivery; the token
needed for all of it, a private Stammtisch's 404 without it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from conftest import make_table, store_config

from api.app import create_app
from api.domain.base import utcnow
from api.storage.webhook_records import Webhook

HOOK = {"url": "https://chat.example/hook", "kinds": ["game_lost", "half_lost"]}


def add(table, body=None):
    r = table.post("/webhooks", body or HOOK)
    assert r.status_code == 201, r.json
    return r.json


def test_registering_answers_the_secret_once_and_lists_without_it(table):
    made = add(table, {**HOOK, "description": "Discord"})
    assert made["secret"].startswith("whsec_") and len(made["secret"]) > 40
    assert made["kinds"] == ["game_lost", "half_lost"] and made["active"] is True
    listed = table.get("/webhooks", headers=table.auth).json
    assert [h["id"] for h in listed] == [made["id"]] and "secret" not in listed[0]
    one = table.get(f"/webhooks/{made['id']}", headers=table.auth).json
    assert one["description"] == "Discord" and "secret" not in one


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://chat.example/hook", True),
        ("http://localhost:8080/hook", True),
        ("http://127.0.0.1/hook", True),
        ("http://[::1]:9000/", True),
        ("http://chat.example/hook", False),
        ("ftp://chat.example/hook", False),
        ("https://user:pw@chat.example/", False),
        ("chat.example/hook", False),
        ("https://", False),
    ],
)
def test_urls_must_be_https_or_local_http(table, url, ok):
    r = table.post("/webhooks", {**HOOK, "url": url})
    if ok:
        assert r.status_code == 201, r.json
    else:
        assert r.status_code == 422 and r.json["code"] == "webhook_url_invalid", r.json
        assert r.json["detail"].startswith(("Nur https", "Erwartet", "Die Adresse"))


def test_kinds_must_be_known_and_not_empty(table):
    r = table.post("/webhooks", {**HOOK, "kinds": ["game_lost", "bier_bestellt"]})
    assert r.status_code == 422 and r.json["code"] == "webhook_kinds_invalid"
    assert "bier_bestellt" in r.json["detail"]
    assert table.post("/webhooks", {**HOOK, "kinds": []}).status_code == 422
    made = add(table, {**HOOK, "kinds": ["undone", "game_started", "undone"]})
    assert made["kinds"] == ["game_started", "undone"]  # each once, in the catalogue's order


def test_every_operation_needs_the_token(table):
    made = add(table)
    base = f"{table.base}/webhooks"
    for method, path in [
        ("get", ""), ("post", ""), ("get", f"/{made['id']}"), ("patch", f"/{made['id']}"),
        ("delete", f"/{made['id']}"), ("post", f"/{made['id']}/secret"),
        ("get", f"/{made['id']}/deliveries"), ("post", f"/{made['id']}/ping"),
    ]:  # fmt: skip
        r = getattr(table.client, method)(base + path, json=HOOK)
        assert r.status_code == 401, (method, path, r.json)
        wrong = {"Authorization": "Bearer falsch"}
        r = getattr(table.client, method)(base + path, json=HOOK, headers=wrong)
        assert r.status_code == 403, (method, path, r.json)


def test_a_private_stammtisch_hides_its_webhooks_behind_404(client):
    secret = make_table(client, "Geheim", private=True)
    r = client.get(f"{secret.base}/webhooks")
    assert r.status_code == 404 and r.json["code"] == "stammtisch_not_found"
    assert secret.get("/webhooks", headers=secret.auth).status_code == 200


def test_change_pause_rotate_and_delete(table):
    made = add(table)
    path = f"/webhooks/{made['id']}"
    changed = table.patch(path, {"kinds": ["game_lost"], "active": False}).json
    assert changed["kinds"] == ["game_lost"] and changed["active"] is False
    assert changed["url"] == HOOK["url"]
    assert table.patch(path, {"url": "http://example.org/"}).status_code == 422
    rotated = table.post(path + "/secret").json
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != made["secret"]
    assert table.client.delete(table.base + path, headers=table.auth).status_code == 204
    r = table.get(path, headers=table.auth)
    assert r.status_code == 404 and r.json["code"] == "webhook_not_found"


def test_another_stammtisch_cannot_see_the_webhook(client, table):
    made = add(table)
    other = make_table(client, "Zum Ochsen")
    r = other.get(f"/webhooks/{made['id']}", headers=other.auth)
    assert r.status_code == 404 and r.json["code"] == "webhook_not_found"


def test_at_most_ten_webhooks(table):
    for _ in range(10):
        add(table)
    r = table.post("/webhooks", HOOK)
    assert r.status_code == 409 and r.json["code"] == "too_many_webhooks"


def test_ping_shows_in_the_delivery_log_and_can_be_redelivered(table):
    made = add(table)
    ping = table.post(f"/webhooks/{made['id']}/ping")
    assert ping.status_code == 202, ping.json
    assert ping.json["state"] == "pending" and ping.json["attempts"] == 0
    assert ping.json["kind"] == "ping" and ping.json["position"] is None
    assert ping.json["message_id"] == f"{made['id']}-ping-{ping.json['id']}"
    log = table.get(f"/webhooks/{made['id']}/deliveries", headers=table.auth).json
    assert log["total"] == 1 and log["items"][0]["id"] == ping.json["id"]
    again = table.post(f"/webhooks/{made['id']}/deliveries/{ping.json['id']}/redeliver")
    assert again.status_code == 202 and again.json["message_id"] == ping.json["message_id"]
    r = table.post(f"/webhooks/{made['id']}/deliveries/999/redeliver")
    assert r.status_code == 404 and r.json["code"] == "delivery_not_found"


def test_the_contract_documents_signature_replay_window_retries_and_payload(client):
    spec = client.get("/openapi.json").json
    (tag,) = [t for t in spec["tags"] if t["name"] == "webhooks"]
    text = tag["description"]
    for needed in (
        "webhook-id", "webhook-timestamp", "webhook-signature: v1,<base64>", "HMAC-SHA256",
        "<webhook-id>.<webhook-timestamp>.<raw body>", "5 minutes", "10 s, 1 min, 5 min, "
        "30 min, 2 h, 6 h", '"kind", "message", "data", "game_id", "seq", "position"',
        "redirects are not followed",
    ):  # fmt: skip
        assert needed in text, needed
    ops = {op["operationId"] for path in spec["paths"].values() for op in path.values()
           if isinstance(op, dict) and "webhooks" in op.get("tags", [])}  # fmt: skip
    assert ops == {
        "listWebhooks", "addWebhook", "getWebhook", "updateWebhook", "deleteWebhook",
        "rotateWebhookSecret", "pingWebhook", "listWebhookDeliveries",
        "redeliverWebhookDelivery",
    }  # fmt: skip


@pytest.mark.parametrize("storage", ["sqlite", "postgresql"])
def test_health_tells_the_admin_when_the_sender_is_behind(storage, tmp_path, request):
    config = {**store_config(storage, tmp_path, request), "ADMIN_TOKEN": "a" * 40}
    app = create_app(config)
    try:
        client = app.test_client()
        table = make_table(client)
        repo = app.extensions["schocken"].store.repository()
        st = repo.get_stammtisch(table.slug)
        hook = repo.add_webhook(
            Webhook(0, st.id, "https://chat.example/", ("game_lost",), "whsec_", True, "", utcnow())
        )
        admin = {"Authorization": "Bearer " + "a" * 40}

        def sender(headers=None):
            r = client.get("/api/v1/health", headers=headers or {})
            assert r.status_code == 200 and r.json["status"] == "ok"
            return r.json.get("sender")

        assert sender(admin) == {
            "due": 0, "oldest_due_seconds": None, "waiting_seconds": None, "behind": False,
        }  # fmt: skip
        minute_ago = utcnow() - timedelta(seconds=60)
        for _ in range(2):  # due a minute ago, and no sender took them
            repo.add_ping(hook, {"kind": "ping", "message": "Test", "data": {}}, minute_ago)
        seen = sender(admin)
        assert seen["due"] == 2 and seen["behind"] is True
        assert seen["oldest_due_seconds"] >= 59 and seen["waiting_seconds"] >= 59
        assert sender() is None  # the public view has no sender; a wrong token is refused
        wrong = client.get("/api/v1/health", headers={"Authorization": "Bearer falsch"})
        assert wrong.status_code == 403 and "sender" not in wrong.get_data(as_text=True)
        now = utcnow()
        (claimed,) = repo.claim_deliveries(now, now + timedelta(seconds=15), 10)
        repo.close()
        seen = sender(admin)  # the rest waits for its own receiver, not for the sender
        assert seen["due"] == 1 and seen["waiting_seconds"] is None and seen["behind"] is False
    finally:
        app.extensions["schocken"].store.close()
