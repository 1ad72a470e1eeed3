"""API benchmark against `schocken serve`: the load comes from this (separate) process.

Run: ``python -m api.bench.api_bench [--turns 300] [--seconds 15] [--clients 8]``.

It starts ``schocken serve`` on a fresh DuckDB file (one process, waitress threads, the default
configuration), gives every client its own Stammtisch with four players and plays
engine-simulated games over HTTP, one turn summary per request, over persistent HTTP/1.1
connections:

1. one client recording turns: p50 / p99 latency per turn (target p50 ≤ 10 ms);
2. ``--clients`` concurrent clients, each playing its own games, for ``--seconds``: turns/s
   and p99 (target ≥ 200 turns/s, p99 ≤ 100 ms);
3. the same two figures for ``GET /api/v1/health`` (the framework's floor);
4. the server's peak memory (VmHWM; target ≤ 200 MB).

The concurrent clients share this process's asyncio event loop, one connection each: no
client thread waits for another's turn at the interpreter lock, so the latencies are the
server's, not the load generator's.

Figures depend on what else runs on the machine: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
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
        """(status, body bytes, seconds from sending the request to its last byte)."""
        if self.streams is None or self.loop is not asyncio.get_running_loop():
            self.streams = await asyncio.open_connection("127.0.0.1", self.port)
            self.loop = asyncio.get_running_loop()  # a connection belongs to one event loop
        reader, writer = self.streams
        data = b"" if body is None else json.dumps(body).encode()
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n{self.auth}\r\n"
        )
        start = time.perf_counter()
        writer.write(head.encode("ascii") + data)
        status = int((await reader.readline()).split()[1])
        length = 0
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        raw = await reader.readexactly(length)
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


async def _health(client: AsyncClient) -> float:
    status, raw, elapsed = await client.call("GET", "/api/v1/health")
    assert status == 200, raw
    return elapsed


def run_clients(steps: list[Any], seconds: float) -> tuple[int, list[float]]:
    """Every step (an async callable returning a latency) is one client, calling it again and
    again until time is up; all of them concurrently in this process's event loop. Returns
    (calls per second, latencies)."""

    async def run() -> tuple[int, list[float]]:
        latencies: list[list[float]] = [[] for _ in steps]
        stop = time.perf_counter() + seconds

        async def client(i: int) -> None:
            while time.perf_counter() < stop:
                latencies[i].append(await steps[i]())

        start = time.perf_counter()
        await asyncio.gather(*(client(i) for i in range(len(steps))))
        elapsed = time.perf_counter() - start
        flat = [x for lat in latencies for x in lat]
        return int(len(flat) / elapsed), flat

    return asyncio.run(run())


async def _sequence(step: Any, n: int) -> list[float]:
    return [await step() for _ in range(n)]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (from /proc)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_memory_mb(pid: int) -> tuple[float, float]:
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return int(fields["VmHWM"].split()[0]) / 1024, int(fields["VmRSS"].split()[0]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300, help="turns for the one-client figure")
    parser.add_argument("--seconds", type=float, default=15.0, help="duration of concurrent runs")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--threads", type=int, default=8, help="waitress threads")
    args = parser.parse_args()

    root = Path(__file__).resolve().parents[2]
    work = Path(tempfile.mkdtemp(prefix="schocken-bench-"))
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "api.cli",
            "serve",
            "--port",
            str(port),
            "--db",
            str(work / "bench.duckdb"),
            "--threads",
            str(args.threads),
        ],  # fmt: skip
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(300):
            try:
                if Client(port).call("GET", "/api/v1/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.1)
        # 1. one client recording turns (after a warm-up of 20 turns)
        solo = Player(port, seed=1)
        asyncio.run(_sequence(solo.turn, 20))
        cpu0 = cpu_seconds(server.pid)
        one = asyncio.run(_sequence(solo.turn, args.turns))
        cpu_one = (cpu_seconds(server.pid) - cpu0) / len(one)

        # 2. concurrent clients, each its own games
        players = [Player(port, seed=100 + i) for i in range(args.clients)]
        cpu0 = cpu_seconds(server.pid)
        rate, many = run_clients([p.turn for p in players], args.seconds)
        cpu_many = (cpu_seconds(server.pid) - cpu0) / len(many)

        # 3. the framework's floor: a trivial endpoint of the same server
        health = functools.partial(_health, AsyncClient(port))
        floor_one = asyncio.run(_sequence(health, args.turns))
        floor_rate, floor_many = run_clients(
            [functools.partial(_health, AsyncClient(port)) for _ in range(args.clients)],
            args.seconds,
        )
        peak, rss = peak_memory_mb(server.pid)
    finally:
        server.terminate()
        server.wait(timeout=30)

    ms = 1000.0
    load = os.getloadavg()
    print(
        f"schocken serve (waitress, {args.threads} threads, DuckDB file); load from pid {os.getpid()}"
    )
    print(
        f"machine: {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print()
    print(f"{'':38} {'turns (POST …/turns)':>22} {'trivial (GET /health)':>22}")
    print(
        f"{'1 client   p50 latency':38} {percentile(one, 0.5) * ms:19.2f} ms "
        f"{percentile(floor_one, 0.5) * ms:19.2f} ms   target p50 ≤ 10 ms"
    )
    print(
        f"{'1 client   p99 latency':38} {percentile(one, 0.99) * ms:19.2f} ms "
        f"{percentile(floor_one, 0.99) * ms:19.2f} ms"
    )
    print(
        f"{f'{args.clients} clients throughput':38} {rate:16d} req/s "
        f"{floor_rate:16d} req/s   target ≥ 200 turns/s"
    )
    print(
        f"{f'{args.clients} clients p50 latency':38} {percentile(many, 0.5) * ms:19.2f} ms "
        f"{percentile(floor_many, 0.5) * ms:19.2f} ms"
    )
    print(
        f"{f'{args.clients} clients p99 latency':38} {percentile(many, 0.99) * ms:19.2f} ms "
        f"{percentile(floor_many, 0.99) * ms:19.2f} ms   target p99 ≤ 100 ms"
    )
    print(f"{'turns recorded (1 client + concurrent)':38} {len(one) + len(many):19d}")
    print(f"server peak memory (VmHWM) {peak:.1f} MB, RSS at end {rss:.1f} MB   target ≤ 200 MB")
    print(f"mean turn latency, 1 client: {statistics.mean(one) * ms:.2f} ms")
    print(
        f"server CPU per turn: {cpu_one * ms:.2f} ms (1 client), {cpu_many * ms:.2f} ms "
        f"({args.clients} clients)"
    )


if __name__ == "__main__":
    main()
