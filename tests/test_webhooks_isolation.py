"""One slow receiver stalls nobody else: a receiver that trickles its answer a byte at a time
and one that never answers, with 20 deliveries each, while another Stammtisch's receiver gets
its delivery within a few seconds. On SQLite (one sender) and on PostgreSQL (two senders
sharing the outbox, as the senders of two servers do): each attempt is cut off at its
deadline, and at most one attempt per webhook is in flight across both senders."""

from __future__ import annotations

import socket
import socketserver
import threading
import time

import pytest
from conftest import make_table, store_config

from api.app import create_app
from api.domain.sender import Sender

#: seconds one attempt may take in this test (the sender's deadline)
DEADLINE = 1.0


class SlowReceivers:
    """Two receivers on localhost: ``trickle`` answers one byte a second and never ends its
    head; ``silent`` reads the request and never answers. Each notes when requests came."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.came: dict[str, list[float]] = {"trickle": [], "silent": []}
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                kind = self.server.kind  # type: ignore[attr-defined]
                self.request.settimeout(0.5)
                try:
                    self.request.recv(65536)  # the request (small: it fits)
                except OSError:
                    return
                outer.came[kind].append(time.monotonic())
                try:
                    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000:
                        if outer.stop.wait(1.0):
                            return
                        if kind == "trickle":
                            self.request.sendall(bytes([byte]))
                except OSError:
                    return  # cut off by the sender

        self.servers = {}
        for kind in ("trickle", "silent"):
            server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
            server.daemon_threads = True
            server.kind = kind  # type: ignore[attr-defined]
            threading.Thread(target=server.serve_forever, daemon=True).start()
            self.servers[kind] = server

    def url(self, kind: str) -> str:
        return f"http://127.0.0.1:{self.servers[kind].server_address[1]}/hook"

    def close(self) -> None:
        self.stop.set()
        for server in self.servers.values():
            server.shutdown()
            server.server_close()


class Healthy:
    """A receiver that answers 204 at once and notes when each request came."""

    def __init__(self) -> None:
        self.got: list[float] = []
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        self.sock = sock
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}/hook"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                self.got.append(time.monotonic())
                conn.sendall(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")

    def close(self) -> None:
        self.sock.close()


def run_senders(store, count: int, stop: threading.Event) -> list[threading.Thread]:
    """``count`` senders, each on its own repository, sending until ``stop``."""

    def run() -> None:
        repo = store.open_repository()
        sender = Sender(repo, timeout=DEADLINE, loopback=True)
        while not stop.is_set():
            sender.run_once()
            repo.close()
            stop.wait(0.1)
        sender.close()
        repo.close()

    threads = [threading.Thread(target=run, daemon=True) for _ in range(count)]
    for t in threads:
        t.start()
    return threads


@pytest.mark.parametrize("storage", ["sqlite", "postgresql"])
def test_a_trickling_and_a_silent_receiver_delay_no_other_stammtisch(storage, tmp_path, request):
    app = create_app(store_config(storage, tmp_path, request))
    store = app.extensions["schocken"].store
    slow, healthy, stop = SlowReceivers(), Healthy(), threading.Event()
    threads: list[threading.Thread] = []
    try:
        client = app.test_client()
        bad = make_table(client, "Zum Schneckentempo")
        hooks = {}
        for kind in ("trickle", "silent"):
            made = bad.post("/webhooks", {"url": slow.url(kind), "kinds": ["game_lost"]})
            hooks[kind] = made.json["id"]
            for _ in range(20):
                assert bad.post(f"/webhooks/{made.json['id']}/ping").status_code == 202
        good = make_table(client, "Zur Post")
        made = good.post("/webhooks", {"url": healthy.url, "kinds": ["game_lost"]})
        threads = run_senders(store, 2 if storage == "postgresql" else 1, stop)
        time.sleep(0.5)  # the slow receivers have their requests now
        assert good.post(f"/webhooks/{made.json['id']}/ping").status_code == 202
        pinged = time.monotonic()
        deadline = pinged + 20
        while not healthy.got and time.monotonic() < deadline:
            time.sleep(0.05)
        assert healthy.got, "the healthy receiver got nothing"
        assert healthy.got[0] - pinged < 3.0  # a few seconds at most, the sender's look included
        time.sleep(DEADLINE + 0.7)  # the first slow attempts are cut off by their deadline
        for kind, hook in hooks.items():
            log = bad.get(f"/webhooks/{hook}/deliveries?page_size=100", headers=bad.auth).json
            tried = [d for d in log["items"] if d["attempts"]]
            assert tried, kind
            assert all(d["state"] == "pending" for d in log["items"])
            failed = [d for d in tried if d["last_error"]]
            assert failed and failed[0]["last_error"].startswith("Keine Antwort innerhalb")
        for came in slow.came.values():  # one attempt per webhook at a time: the next one
            gaps = [b - a for a, b in zip(came, came[1:], strict=False)]  # after the cut-off
            assert len(came) >= 2 and min(gaps) > DEADLINE - 0.3, gaps
    finally:
        stop.set()
        slow.close()
        healthy.close()
        for t in threads:
            t.join(10)
        store.close()


@pytest.mark.parametrize("storage", ["sqlite", "postgresql"])
def test_more_slow_receivers_than_slots_still_leave_a_turn_for_the_others(
    storage, tmp_path, request
):
    """Three silent receivers with a backlog, a sender with two slots: the slots go to the
    least recently served webhook first, so the healthy one is sent to after one deadline at
    most, not after the slow ones' whole backlog."""
    app = create_app(store_config(storage, tmp_path, request))
    store = app.extensions["schocken"].store
    slow, healthy, stop = SlowReceivers(), Healthy(), threading.Event()
    try:
        client = app.test_client()
        bad = make_table(client, "Zum Schneckentempo")
        for _ in range(3):
            made = bad.post("/webhooks", {"url": slow.url("silent"), "kinds": ["game_lost"]})
            for _ in range(10):
                assert bad.post(f"/webhooks/{made.json['id']}/ping").status_code == 202
        good = make_table(client, "Zur Post")
        made = good.post("/webhooks", {"url": healthy.url, "kinds": ["game_lost"]})
        repo = store.open_repository()
        sender = Sender(repo, timeout=DEADLINE, loopback=True, slots=2)
        sender.step()  # both slots taken by slow receivers
        assert good.post(f"/webhooks/{made.json['id']}/ping").status_code == 202
        pinged = time.monotonic()
        while not healthy.got and time.monotonic() - pinged < 3 * DEADLINE + 2:
            sender.step()
            repo.close()
            sender.wait(0.05)
        assert healthy.got and healthy.got[0] - pinged < 2 * DEADLINE + 1.0
        sender.close()
        repo.close()
    finally:
        stop.set()
        slow.close()
        healthy.close()
        store.close()
