"""API benchmark against `schocken serve`: the load comes from processes of its own.

Run: ``python -m api.bench.api_bench [--turns 300] [--seconds 15] [--clients 8]``.

It starts ``schocken serve`` on a fresh DuckDB file (one process, waitress threads, the default
configuration), gives every client its own Stammtisch with four players and plays
engine-simulated games over HTTP, one turn summary per request, over persistent HTTP/1.1
connections:

1. one client recording turns: p50 / p99 latency per turn (target p50 ≤ 10 ms);
2. ``--clients`` concurrent clients, each a process of its own playing its own games, for
   ``--seconds``: turns/s and p99 (target ≥ 200 turns/s, p99 ≤ 100 ms);
3. the same two figures for ``GET /api/v1/health`` (the framework's floor);
4. the server's peak memory (VmHWM; target ≤ 200 MB).

Figures depend on what else runs on the machine: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import functools
import http.client
import json
import multiprocessing
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


class Player:
    """A client of its own Stammtisch (its own token, as at separate pub tables) playing
    simulated games turn by turn, a new game when one ends."""

    def __init__(self, port: int, seed: int) -> None:
        token, slug = new_stammtisch(port, f"Benchmark {seed}")
        self.client = Client(port, token)
        self.base = f"/api/v1/stammtische/{slug}/games"
        self.logs = iter(simulate_logs(PRESETS["standard"], 10_000, players=PLAYERS, seed=seed))
        self.events: list[dict[str, Any]] = []
        self.game = 0

    def turn(self) -> float:
        if not self.events:
            log = next(self.logs)
            status, body, _ = self.client.call(
                "POST", self.base, {"players": PLAYERS, "starter": log["starter"]}
            )
            assert status == 201, body
            self.game = body["id"]
            self.events = list(log["events"])
        event = self.events.pop(0)
        status, body, elapsed = self.client.call("POST", f"{self.base}/{self.game}/turns", event)
        assert status == 201, body
        return elapsed


def _client_process(make_step: Any, i: int, start: Any, stop_at: Any, out: Any) -> None:
    """One client in a process of its own: ``make_step(i)`` builds it (its Stammtisch, its
    games), then it steps from the common start until the common deadline."""
    step = make_step(i)
    start.wait()
    latencies = []
    while time.perf_counter() < stop_at.value:
        latencies.append(step())
    out.put(latencies)


def _health(client: Client) -> float:
    return client.call("GET", "/api/v1/health")[2]


def run_parallel(clients: int, seconds: float, make_step: Any) -> tuple[int, list[float]]:
    """``clients`` concurrent clients, each a process of its own (as separate phones or apps
    are: no client waits for another's interpreter), each calling the step that
    ``make_step(i)`` returns (it returns a latency) until time is up. Returns (calls per
    second, latencies)."""
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(clients + 1)
    stop_at = ctx.Value("d", 0.0)
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_client_process, args=(make_step, i, start, stop_at, out))
        for i in range(clients)
    ]
    for proc in procs:
        proc.start()
    stop_at.value = time.perf_counter() + 3600  # set for real once every client is ready
    start.wait(timeout=600)
    began = time.perf_counter()
    stop_at.value = began + seconds
    flat = [x for _ in procs for x in out.get(timeout=seconds + 120)]
    elapsed = time.perf_counter() - began
    for proc in procs:
        proc.join(timeout=30)
    return int(len(flat) / elapsed), flat


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
        # 1. one client recording turns
        solo = Player(port, seed=1)
        for _ in range(20):  # warm-up
            solo.turn()
        cpu0 = cpu_seconds(server.pid)
        one = [solo.turn() for _ in range(args.turns)]
        cpu_one = (cpu_seconds(server.pid) - cpu0) / len(one)

        # 2. concurrent clients, each its own games (the server's CPU is measured from the
        # start of the run: setting up the clients costs it a little too)
        cpu0 = cpu_seconds(server.pid)
        rate, many = run_parallel(
            args.clients, args.seconds, lambda i: Player(port, seed=100 + i).turn
        )
        cpu_many = (cpu_seconds(server.pid) - cpu0) / len(many)

        # 3. the framework's floor: a trivial endpoint of the same server
        health = Client(port)
        floor_one = [health.call("GET", "/api/v1/health")[2] for _ in range(args.turns)]
        floor_rate, floor_many = run_parallel(
            args.clients,
            args.seconds,
            lambda i: functools.partial(_health, Client(port)),
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
        f"({args.clients} clients, one process each)"
    )


if __name__ == "__main__":
    main()
