"""Live events from real ``schocken serve`` processes (gevent workers: each stream a greenlet
fed by the process's stream hub): nothing is lost when another server process writes (two
servers on one SQLite file; two on one PostgreSQL database), resume on the other server,
heartbeats, the caps (503 per process, 429 per client address), vanished clients freed, the
graceful stop, and the cap at a low open-files limit."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pgcluster import Cluster
from test_api_events import messages
from test_api_serve import Server, Tisch, request, served_pair

#: short heartbeats, so that a test sees them
ENV = {"SCHOCKEN_EVENT_HEARTBEAT_SECONDS": "0.5", "SCHOCKEN_WRITE_RATE_PER_MINUTE": "0"}


class Sse:
    """A raw SSE client: the answer's head and every message as it comes (``raw``: the body,
    its chunked framing taken off)."""

    def __init__(
        self, base: str, path: str, headers: dict[str, str] | None = None, method: str = "GET"
    ) -> None:
        host, port = base.removeprefix("http://").split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=10)
        lines = [f"{method} {path} HTTP/1.1", f"Host: {host}", "Accept: text/event-stream"]
        lines.append("Connection: close")  # an error answer ends at once
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.raw = b""
        self.ended = False
        self.chunked = False
        self.framed = b""  # received, not yet unframed
        self.read_until(lambda: b"\r\n\r\n" in self.raw)
        head, _, self.raw = self.raw.partition(b"\r\n\r\n")
        self.status = int(head.split()[1])
        self.headers = dict(
            line.split(": ", 1) for line in head.decode().split("\r\n")[1:] if ": " in line
        )
        if self.headers.get("Transfer-Encoding") == "chunked":
            self.chunked, self.framed, self.raw = True, self.raw, b""
            self.unframe()

    def unframe(self) -> None:
        """Move the complete chunks received into ``raw`` (the last one ends the body)."""
        while b"\r\n" in self.framed:
            size_line, _, rest = self.framed.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if len(rest) < size + 2:
                return
            self.raw += rest[:size]
            self.framed = rest[size + 2 :]
            if size == 0:
                self.ended = True
                return

    def read_until(self, done: Any, seconds: float = 10) -> None:
        deadline = time.monotonic() + seconds
        while not done() and not self.ended:
            assert time.monotonic() < deadline, self.raw[-500:]
            chunk = self.sock.recv(65536)
            self.ended = not chunk
            if self.chunked:
                self.framed += chunk
                self.unframe()
            else:
                self.raw += chunk

    def messages(self) -> list[dict[str, Any]]:
        return messages(self.raw.decode().rpartition("\n\n")[0] + "\n\n")

    def ids(self) -> list[int]:
        return [int(m["id"]) for m in self.messages() if "id" in m]

    def wait_for_id(self, ident: int, seconds: float = 10) -> None:
        self.read_until(lambda: f"\nid: {ident}\n".encode() in self.raw, seconds)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture(scope="module")
def sqlite_pair(tmp_path_factory: Any) -> Iterator[tuple[Server, Server]]:
    """Two servers (2 processes each) on one SQLite file."""
    db = tmp_path_factory.mktemp("sse") / "data" / "schocken.sqlite3"
    yield from served_pair(db, 2, ENV, background=False)


def write_turns(tisch: Tisch, bases: tuple[str, ...], count: int) -> None:
    for seq in range(count):
        answer = request(
            bases[seq % len(bases)], "POST", tisch.game + "/turns", tisch.plan[seq], tisch.token
        )
        assert answer[0] == 201, answer


def no_loss(a: Server, b: Server) -> None:
    """Streams on ``a`` (the Stammtisch, the game) get every turn written through ``b`` and
    ``a`` in order, once; a client that reconnects to ``b`` with its last id gets the rest."""
    tisch = Tisch(a.base)
    whole = Sse(a.base, tisch.url + "/events?last_event_id=0")
    game = Sse(a.base, tisch.game + "/events")  # only new ones
    assert whole.status == game.status == 200
    assert whole.headers["Content-Type"].startswith("text/event-stream")
    assert whole.headers["X-Accel-Buffering"] == "no"
    write_turns(tisch, (b.base, a.base, b.base), 12)
    whole.wait_for_id(13)  # the start (position 1), then the 12 entries
    game.wait_for_id(12)
    assert whole.ids() == list(range(1, 14))
    assert game.ids() == list(range(1, 13))
    assert [m["data"]["seq"] for m in game.messages() if "id" in m] == list(range(1, 13))
    assert whole.raw.startswith(b"retry: 3000\n\n")
    game.close()
    whole.close()
    # resume on the other server from the stored log
    again = Sse(b.base, tisch.url + "/events?last_event_id=1", {"Last-Event-ID": "9"})
    again.wait_for_id(13)
    assert again.ids() == [10, 11, 12, 13]
    again.close()


def test_no_event_is_lost_when_another_server_writes_sqlite(sqlite_pair):
    no_loss(*sqlite_pair)


def test_heartbeats_and_a_private_stammtisch(sqlite_pair):
    a, _ = sqlite_pair
    status, st, _ = request(
        a.base, "POST", "/api/v1/stammtische", {"name": "Geheim", "private": True}
    )
    assert status == 201
    url = f"/api/v1/stammtische/{st['slug']}/events"
    hidden = Sse(a.base, url)
    hidden.read_until(lambda: False, 2)  # the answer ends
    assert hidden.status == 404 and hidden.ended
    assert json.loads(hidden.raw)["code"] == "stammtisch_not_found"
    hidden.close()
    ok = Sse(a.base, url, {"Authorization": f"Bearer {st['token']}"})
    ok.read_until(lambda: ok.raw.count(b": ping\n\n") >= 2, 3)
    assert ok.status == 200
    ok.close()


def test_the_cap_answers_503_and_a_vanished_client_frees_its_place(tmp_path):
    env = {**ENV, "SCHOCKEN_EVENT_STREAMS_PER_PROCESS": "2"}
    server = Server(tmp_path / "data" / "cap.sqlite3", 1, env, background=False)
    try:
        tisch = Tisch(server.base)
        for _ in range(3):  # a HEAD is answered as usual (no body) and takes no place
            head = Sse(server.base, tisch.url + "/events", method="HEAD")
            head.read_until(lambda: False, 2)
            assert head.status == 200 and head.ended and head.raw == b""
            head.close()
        first, second = (
            Sse(server.base, tisch.url + "/events"),
            Sse(server.base, tisch.game + "/events"),
        )
        assert first.status == second.status == 200
        full = Sse(server.base, tisch.url + "/events")
        full.read_until(lambda: False, 2)
        assert full.status == 503 and full.headers["Retry-After"] == "5"
        assert json.loads(full.raw)["code"] == "too_many_streams"
        full.close()
        first.close()  # the hub sees the close at once
        deadline = time.monotonic() + 3
        while (again := Sse(server.base, tisch.url + "/events")).status != 200:
            assert time.monotonic() < deadline
            again.close()
            time.sleep(0.05)
        # the graceful stop closes the streams (their clients reconnect elsewhere)
        started = time.monotonic()
        server.proc.terminate()
        for client in (second, again):
            client.read_until(lambda: False, 8)
            assert client.ended
        assert time.monotonic() - started < 8
        server.proc.wait(timeout=15)
        again.close()
        second.close()
    finally:
        server.kill()


def test_no_event_is_lost_when_another_server_writes_postgresql(pg_cluster: Cluster, tmp_path):
    url = pg_cluster.fresh_url()
    servers: list[Server] = []
    try:
        for _ in range(2):
            servers.append(Server(tmp_path / "data" / "none", 2, ENV, url=url, background=False))
        no_loss(*servers)
    finally:
        for server in servers:
            server.stop()
        pg_cluster.drop(url)


def test_streams_hold_no_worker(tmp_path):
    """One worker: more streams than a threaded worker had threads, and requests are still
    answered; each stream gets what is written."""
    server = Server(tmp_path / "data" / "many.sqlite3", 1, ENV, background=False)
    try:
        tisch = Tisch(server.base)
        crowd = [Sse(server.base, tisch.game + "/events") for _ in range(40)]
        assert [c.status for c in crowd] == [200] * 40
        write_turns(tisch, (server.base,), 2)
        for client in crowd:
            client.wait_for_id(2)
            assert client.ids() == [1, 2]
            client.close()
    finally:
        server.stop()
