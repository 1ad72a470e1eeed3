"""Where webhooks may point: a hosted server (PostgreSQL, or ``WEBHOOK_LOOPBACK`` off) refuses
IP literals outside the public ranges in every spelling, for every scheme, at registration and
change; this machine's loopback only where the setting allows it. The sender resolves a name
itself, refuses it when it points to a non-public address (the log says so), and connects to
the address it checked with the name as ``Host``. The log keeps the status and a fixed reason,
never the receiver's body."""

from __future__ import annotations

import http.server
import shutil
import ssl
import subprocess
import threading

import pytest
from conftest import make_table, store_config
from test_webhooks_outbox import Clock, Receiver

from api.app import create_app
from api.domain.sender import Sender

#: the internal addresses of the outside probe (issue 25, finding 4), as URLs
INTERNAL = [
    "https://127.1/",
    "https://2130706433/",
    "https://0x7f.1/",
    "https://[::ffff:7f00:1]/",
    "https://0.0.0.0/",
    "https://10.0.0.1/",
    "https://169.254.169.254/latest/meta-data/",
    "https://[::1]/",
]
MORE_INTERNAL = [
    "https://0177.0.0.1/",
    "https://[fc00::1]/",
    "https://[fd12:3456::1]/",
    "https://[fe80::1]/",
    "https://192.168.1.20:8443/",
    "https://172.16.0.1/",
    "https://100.64.0.1/",
    "https://[::7f00:1]/",
    "https://[64:ff9b::a9fe:a9fe]/",
    "https://[2002:a00:1::]/",
    "http://127.0.0.1:5432/",
    "https://localhost/",
    "https://metadata.localhost/",
]


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def hosted(storage, request, tmp_path):
    """A Stammtisch on a server that allows no loopback receivers, with one webhook."""
    app = create_app({**store_config(storage, tmp_path, request), "WEBHOOK_LOOPBACK": False})
    table = make_table(app.test_client())
    made = table.post("/webhooks", {"url": "https://chat.example/", "kinds": ["game_lost"]})
    assert made.status_code == 201, made.json
    table.hook = made.json
    yield table
    app.extensions["schocken"].store.close()


def test_internal_ip_literals_are_refused_in_every_spelling(hosted):
    accepted = []
    for url in INTERNAL + MORE_INTERNAL:
        r = hosted.post("/webhooks", {"url": url, "kinds": ["game_lost"]})
        if r.status_code != 422:
            accepted.append(url)
            continue
        assert r.json["code"] == "webhook_url_invalid" and r.json["errors"]["json"]["url"], r.json
        changed = hosted.patch(f"/webhooks/{hosted.hook['id']}", {"url": url})
        assert changed.status_code == 422, url
    assert accepted == []
    (kept,) = hosted.get("/webhooks", headers=hosted.auth).json  # nothing made or changed
    assert kept["url"] == "https://chat.example/"


def test_public_addresses_and_names_are_taken(hosted):
    for url in ("https://8.8.8.8/hook", "https://[2606:4700::1111]/", "https://bücher.example/"):
        r = hosted.post("/webhooks", {"url": url, "kinds": ["game_lost"]})
        assert r.status_code == 201, (url, r.json)


def test_loopback_is_allowed_on_sqlite_and_refused_on_postgresql_unless_set(tmp_path, request):
    local = {"url": "http://127.0.0.1:8080/hook", "kinds": ["game_lost"]}
    cases = [
        ({"DATABASE": str(tmp_path / "a.sqlite3")}, 201),  # the embedded default
        ({"DATABASE_URL": request.getfixturevalue("pg_url")}, 422),  # hosted
        ({"DATABASE_URL": request.getfixturevalue("pg_url"), "WEBHOOK_LOOPBACK": True}, 201),
    ]
    for config, status in cases:
        app = create_app(config)
        try:
            table = make_table(app.test_client())
            assert table.post("/webhooks", local).status_code == status, config
        finally:
            app.extensions["schocken"].store.close()


def test_the_sender_refuses_a_name_that_resolves_to_an_internal_address(table, receiver):
    """The check is made when the sender connects: a name registered while it pointed
    elsewhere, resolving to a private address now, is refused, and the log says so."""
    port = receiver.url.split(":")[2].split("/")[0]
    made = table.post("/webhooks", {"url": f"https://hooks.example:{port}/in",
                                    "kinds": ["game_lost"]}).json  # fmt: skip
    table.post(f"/webhooks/{made['id']}/ping")
    repo = table.client.application.extensions["schocken"].store.repository()
    asked = []

    def private(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["10.0.0.7"]

    sender = Sender(repo, clock=Clock(), resolve=private, loopback=True)
    assert sender.run_once() == 1
    sender.close()
    (delivery,) = table.get(f"/webhooks/{made['id']}/deliveries", headers=table.auth).json["items"]
    assert delivery["last_error"] == (
        "Nicht gesendet: hooks.example zeigt auf eine nicht öffentliche Adresse (gesperrt)."
    )
    assert delivery["last_status"] is None and asked == ["hooks.example"] and receiver.got == []


def test_the_sender_connects_to_the_address_it_checked_with_the_name_as_host(table, receiver):
    port = receiver.url.split(":")[2].split("/")[0]
    made = table.post("/webhooks", {"url": f"http://localhost:{port}/in",
                                    "kinds": ["game_lost"]}).json  # fmt: skip
    table.post(f"/webhooks/{made['id']}/ping")
    repo = table.client.application.extensions["schocken"].store.repository()
    answers = iter([["127.0.0.1"], ["10.0.0.7"]])  # a rebinding resolver: asked once only

    sender = Sender(repo, clock=Clock(), resolve=lambda h, p: next(answers), loopback=True)
    assert sender.run_once() == 1
    sender.close()
    ((headers, _),) = receiver.got
    assert headers["host"] == f"localhost:{port}"
    (delivery,) = table.get(f"/webhooks/{made['id']}/deliveries", headers=table.auth).json["items"]
    assert delivery["state"] == "delivered"
    # the hosted sender (no loopback) refuses the same name when it connects
    table.post(f"/webhooks/{made['id']}/ping")
    hosted = Sender(repo, clock=Clock())
    assert hosted.run_once() == 1
    hosted.close()
    log = table.get(f"/webhooks/{made['id']}/deliveries", headers=table.auth).json["items"]
    assert log[0]["last_error"].startswith("Nicht gesendet: localhost zeigt auf")
    assert len(receiver.got) == 1


def test_the_log_keeps_the_status_and_a_fixed_reason_never_the_answer(table, receiver):
    receiver.status, receiver.location = 500, None
    receiver.body = b"db_password=hunter2"
    made = table.post("/webhooks", {"url": receiver.url, "kinds": ["game_lost"]}).json
    table.post(f"/webhooks/{made['id']}/ping")
    repo = table.client.application.extensions["schocken"].store.repository()
    sender = Sender(repo, clock=Clock(), loopback=True)
    assert sender.run_once() == 1
    receiver.status, receiver.location = 302, "http://10.0.0.1/db_password=hunter2"
    table.post(f"/webhooks/{made['id']}/ping")
    assert sender.run_once() == 1
    sender.close()
    log = table.get(f"/webhooks/{made['id']}/deliveries", headers=table.auth).json["items"]
    assert [(d["last_status"], d["last_error"]) for d in log] == [
        (302, "Antwort 302: Weiterleitungen werden nicht gefolgt."),
        (500, "Antwort 500 (erwartet: 2xx)."),
    ]


def test_tls_goes_to_the_checked_address_with_the_name_for_sni_and_the_certificate(table, tmp_path):
    """https://hooks.example resolved (once) to 127.0.0.1: the sender connects there, sends
    the name as SNI and checks the certificate against it; a certificate for another name is
    refused like any failed connection."""
    if not shutil.which("openssl"):
        pytest.skip("needs the openssl command")

    def certificate(name: str) -> tuple[str, str]:
        cert, key = tmp_path / f"{name}.pem", tmp_path / f"{name}.key"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
             "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={name}",
             "-addext", f"subjectAltName=DNS:{name}"],
            check=True, capture_output=True,
        )  # fmt: skip
        return str(cert), str(key)

    seen: list[str | None] = []
    got: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            got.append(self.headers["Host"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    results, ports = [], []
    for name in ("hooks.example", "other.example"):
        cert, key = certificate(name)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        context.sni_callback = lambda sock, server_name, ctx: seen.append(server_name)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            port = server.server_address[1]
            ports.append(port)
            made = table.post("/webhooks", {"url": f"https://hooks.example:{port}/in",
                                            "kinds": ["game_lost"]}).json  # fmt: skip
            table.post(f"/webhooks/{made['id']}/ping")
            repo = table.client.application.extensions["schocken"].store.repository()
            sender = Sender(repo, clock=Clock(), resolve=lambda h, p: ["127.0.0.1"],
                            loopback=True, ca_certs=cert)  # fmt: skip
            assert sender.run_once() == 1
            sender.close()
            path = f"/webhooks/{made['id']}/deliveries"
            (delivery,) = table.get(path, headers=table.auth).json["items"]
            results.append((delivery["state"], delivery["last_error"]))
        finally:
            server.shutdown()
            server.server_close()
    assert results[0] == ("delivered", None)
    assert results[1][0] == "pending" and results[1][1].startswith("Keine Antwort")
    assert seen == ["hooks.example", "hooks.example"]  # SNI: the name, not the address
    assert got == [f"hooks.example:{ports[0]}"]  # the other certificate: nothing sent


def test_the_loopback_setting_reads_yes_and_no_from_the_environment(monkeypatch):
    from api.config import settings

    for raw, value in (("0", False), ("no", False), ("1", True), ("true", True)):
        monkeypatch.setenv("SCHOCKEN_WEBHOOK_LOOPBACK", raw)
        assert settings()["WEBHOOK_LOOPBACK"] is value
    monkeypatch.delenv("SCHOCKEN_WEBHOOK_LOOPBACK")
    assert settings()["WEBHOOK_LOOPBACK"] is None  # unset: by the store (see loopback_allowed)
