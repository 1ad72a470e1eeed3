"""The load generator's clients of :mod:`api.bench.api_bench`: blocking and asyncio HTTP/1.1
connections, and a player recording simulated games turn by turn."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import time
from typing import Any

from api.rules import PRESETS
from api.rules.simulate import simulate_logs

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Client:
    """One keep-alive connection; ``call`` returns (status, parsed body, seconds)."""

    def __init__(self, port: int, token: str | None = None) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = {"Content-Type": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
        data = None if body is None else json.dumps(body)
        start = time.perf_counter()
        self.conn.request(method, path, body=data, headers=self.headers)
        resp = self.conn.getresponse()
        raw = resp.read()
        elapsed = time.perf_counter() - start
        return resp.status, json.loads(raw), elapsed


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def new_stammtisch(port: int, name: str) -> tuple[str, str]:
    """A Stammtisch with the four players: (token, slug)."""
    status, st, _ = Client(port).call("POST", "/api/v1/stammtische", {"name": name})
    assert status == 201, st
    admin = Client(port, st["token"])
    for player in PLAYERS:
        admin.call("POST", f"/api/v1/stammtische/{st['slug']}/players", {"name": player})
    return st["token"], st["slug"]


class AsyncClient:
    """One keep-alive HTTP/1.1 connection driven by asyncio: all concurrent clients run in this
    one process without threads, so none waits for another's turn at the interpreter lock."""

    def __init__(self, port: int, token: str | None = None) -> None:
        self.port = port
        self.auth = f"Authorization: Bearer {token}\r\n" if token else ""
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    async def call(self, method: str, path: str, body: Any = None) -> tuple[int, bytes, float]:
        """(status, body bytes, seconds from sending the request (or connecting, when the
        server closed the last connection) to its last byte)."""
        start = time.perf_counter()
        if self.streams is None or self.loop is not asyncio.get_running_loop():
            self.streams = await asyncio.open_connection("127.0.0.1", self.port)
            self.loop = asyncio.get_running_loop()  # a connection belongs to one event loop
        reader, writer = self.streams
        data = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n{self.auth}\r\n"
        )
        writer.write(head.encode("ascii") + data)
        status = int((await reader.readline()).split()[1])
        length, close = 0, False
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            name = name.lower()
            if name == "content-length":
                length = int(value)
            elif name == "connection":
                close = value.strip().lower() == "close"
        raw = await reader.readexactly(length)
        if close:  # the server ends the connection: the next call opens a new one
            writer.close()
            self.streams = None
        return status, raw, time.perf_counter() - start


class Player:
    """A client of its own Stammtisch (its own token, as at separate pub tables) playing
    simulated games turn by turn, a new game when one ends."""

    def __init__(self, port: int, seed: int) -> None:
        token, slug = new_stammtisch(port, f"Benchmark {seed}")
        self.client = AsyncClient(port, token)
        self.base = f"/api/v1/stammtische/{slug}/games"
        self.logs = iter(simulate_logs(PRESETS["standard"], 10_000, players=PLAYERS, seed=seed))
        self.events: list[dict[str, Any]] = []
        self.game = 0

    async def turn(self) -> float:
        if not self.events:
            log = next(self.logs)
            status, raw, _ = await self.client.call(
                "POST", self.base, {"players": PLAYERS, "starter": log["starter"]}
            )
            assert status == 201, raw
            self.game = json.loads(raw)["id"]
            self.events = list(log["events"])
        event = self.events.pop(0)
        status, raw, elapsed = await self.client.call(
            "POST", f"{self.base}/{self.game}/turns", event
        )
        assert status == 201, raw
        return elapsed
