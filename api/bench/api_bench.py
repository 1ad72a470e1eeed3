"""API benchmark against `schocken serve`: the load comes from this (separate) process.

Run: ``python -m api.bench.api_bench [--turns 300] [--seconds 15] [--clients 8] [--servers
default,2x2] [--before TREE[:WxT]] [--rounds N]``. The "before" column is another source tree's
``schocken serve`` (e.g. main's, with the same virtualenv)::

    mkdir /tmp/main && git archive main | tar -x -C /tmp/main
    python -m api.bench.api_bench --before /tmp/main --rounds 2

For every server set-up (``--servers default,2x4``: ``schocken serve`` with its defaults, or
with WORKERS × THREADS; ``--before``: the other tree's first) it starts the server on a fresh
SQLite file, gives every client its own Stammtisch with four players and plays
engine-simulated games over HTTP, one turn summary per request, over persistent HTTP/1.1
connections (a connection the server closes is opened again, inside the measured latency):

1. one client recording turns: p50 / p99 latency per turn (target p50 ≤ 10 ms);
2. ``--clients`` concurrent clients, each playing its own games, for ``--seconds``: turns/s
   and p99 (target ≥ 1,000 turns/s, p99 ≤ 50 ms on 2 cores);
3. the same two figures for ``GET /api/v1/health`` (the framework's floor; target: turns/s ≥
   0.30 × health/s);
4. server CPU per turn (all processes), the peak memory of the largest server process
   (VmHWM; target ≤ 200 MB per worker); the load average after each run.

The set-ups run one after the other (``--rounds``: alternating, that many times: the
machine's other load then falls on both) and are printed side by side.

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
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
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


def tree(pid: int) -> list[int]:
    """The process and its children (gunicorn's master and its workers)."""
    found = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
            for child in fh.read().split():
                found += tree(int(child))
    except OSError:
        pass
    return found


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and its children so far (from /proc)."""
    total = 0.0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat", encoding="ascii") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def peak_memory_mb(pid: int) -> tuple[float, float]:
    """The largest VmHWM and VmRSS of one process of the tree (a worker), in MB."""
    peak = rss = 0.0
    for p in tree(pid):
        fields = {}
        try:
            with open(f"/proc/{p}/status", encoding="ascii") as fh:
                for line in fh:
                    key, _, value = line.partition(":")
                    fields[key] = value.strip()
        except OSError:
            continue
        peak = max(peak, int(fields["VmHWM"].split()[0]) / 1024)
        rss = max(rss, int(fields["VmRSS"].split()[0]) / 1024)
    return peak, rss


@dataclass
class Figures:
    """What one run measured: latencies in seconds, server CPU seconds per turn."""

    label: str = ""
    one: list[float] = field(default_factory=list)  # one client, turn latencies
    many: list[float] = field(default_factory=list)  # concurrent clients, turn latencies
    rate: int = 0  # concurrent clients, turns/s
    cpu_one: float = 0.0
    cpu_many: float = 0.0
    cpu_load: float = 0.0  # this process (the clients), concurrent clients, per turn
    floor_one: list[float] = field(default_factory=list)  # the same for GET /health
    floor_many: list[float] = field(default_factory=list)
    floor_rate: int = 0
    peak: float = 0.0  # largest VmHWM of a server process, MB
    rss: float = 0.0  # largest RSS of a server process at the end, MB
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)  # load average after the run


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300, help="turns for the one-client figure")
    parser.add_argument("--seconds", type=float, default=15.0, help="duration of concurrent runs")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--servers",
        default="default",
        help="`schocken serve` set-ups to compare, comma-separated: WORKERSxTHREADS or "
        "`default` (its defaults; the default)",
    )
    parser.add_argument(
        "--before",
        metavar="TREE[:WxT]",
        help="first run `schocken serve` of another source tree (e.g. main, unpacked by `git "
        "archive`), with its defaults or WORKERSxTHREADS",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="run the set-ups this many times, alternating"
    )
    return parser.parse_args()


ROOT = Path(__file__).resolve().parents[2]


def start_server(port: int, db: Path, setup: str) -> subprocess.Popen[bytes]:
    """The server on ``db`` in a subprocess (not waiting for it to answer): ``WxT`` is
    ``schocken serve --workers W --threads T``, ``default`` ``schocken serve`` with its
    defaults; ``TREE`` or ``TREE:WxT`` the same from another source tree."""
    # the rate limit counts every write, as by default, but never trips (one client here
    # records ~100 turns/s: no pub table does)
    env = {
        **os.environ,
        "SCHOCKEN_STORAGE": "sqlite",
        "SCHOCKEN_WRITE_RATE_PER_MINUTE": os.environ.get("SCHOCKEN_WRITE_RATE_PER_MINUTE", "1e9"),
    }
    source, _, shape = setup.rpartition(":") if ":" in setup else ("", "", setup)
    if not source and os.path.isdir(shape):
        source, shape = shape, "default"
    argv = ["-m", "api.cli", "serve", "--port", str(port), "--db", str(db)]
    if shape != "default":
        workers, threads = shape.split("x")
        argv += ["--workers", workers, "--threads", threads]
    cwd = Path(source) if source else ROOT
    env["PYTHONPATH"] = os.pathsep.join([str(cwd), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_ready(port: int) -> None:
    """Until the server answers its health check (at most ~30 s)."""
    for _ in range(300):
        try:
            if Client(port).call("GET", "/api/v1/health")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)


def measure_one_client(figures: Figures, port: int, pid: int, turns: int) -> None:
    """1. one client recording turns (after a warm-up of 20 turns)."""
    solo = Player(port, seed=1)
    asyncio.run(_sequence(solo.turn, 20))
    cpu0 = cpu_seconds(pid)
    figures.one = asyncio.run(_sequence(solo.turn, turns))
    figures.cpu_one = (cpu_seconds(pid) - cpu0) / len(figures.one)


def measure_clients(figures: Figures, port: int, pid: int, clients: int, seconds: float) -> None:
    """2. concurrent clients, each its own games."""
    players = [Player(port, seed=100 + i) for i in range(clients)]
    cpu0, own0 = cpu_seconds(pid), time.process_time()
    figures.rate, figures.many = run_clients([p.turn for p in players], seconds)
    figures.cpu_many = (cpu_seconds(pid) - cpu0) / len(figures.many)
    figures.cpu_load = (time.process_time() - own0) / len(figures.many)


def measure_floor(figures: Figures, port: int, turns: int, clients: int, seconds: float) -> None:
    """3. the framework's floor: a trivial endpoint of the same server."""
    health = functools.partial(_health, AsyncClient(port))
    figures.floor_one = asyncio.run(_sequence(health, turns))
    figures.floor_rate, figures.floor_many = run_clients(
        [functools.partial(_health, AsyncClient(port)) for _ in range(clients)],
        seconds,
    )


ROWS: list[tuple[str, Any]] = [
    ("1 client p50 turn (ms)", lambda f: percentile(f.one, 0.5) * 1000),
    ("1 client p99 turn (ms)", lambda f: percentile(f.one, 0.99) * 1000),
    ("8 clients turns/s", lambda f: f.rate),
    ("8 clients p50 turn (ms)", lambda f: percentile(f.many, 0.5) * 1000),
    ("8 clients p99 turn (ms)", lambda f: percentile(f.many, 0.99) * 1000),
    ("8 clients GET /health/s", lambda f: f.floor_rate),
    ("turns/s ÷ health/s", lambda f: f.rate / max(1, f.floor_rate)),
    ("server CPU per turn, 1 client (ms)", lambda f: f.cpu_one * 1000),
    ("server CPU per turn, 8 clients (ms)", lambda f: f.cpu_many * 1000),
    ("load generator CPU per turn (ms)", lambda f: f.cpu_load * 1000),
    ("peak memory per process (MB)", lambda f: f.peak),
    ("load average (1 min) after", lambda f: f.load[0]),
]


def print_table(runs: list[Figures], clients: int) -> None:
    """The runs side by side (targets: ≥ 1,000 turns/s, p99 ≤ 50 ms, ratio ≥ 0.30, ≤ 200 MB)."""
    print(f"{os.cpu_count()} cores; {clients} clients; SQLite file; load from pid {os.getpid()}")
    print(f"{'':38}" + "".join(f"{f.label:>20}" for f in runs))
    for name, value in ROWS:
        name = name.replace("8 clients", f"{clients} clients")
        cells = "".join(
            f"{value(f):20.2f}" if isinstance(value(f), float) else f"{value(f):20d}" for f in runs
        )
        print(f"{name:38}{cells}")


def measure(setup: str, label: str, args: argparse.Namespace) -> Figures:
    """One server set-up, from a fresh database: every figure."""
    work = Path(tempfile.mkdtemp(prefix="schocken-bench-"))
    port = free_port()
    server = start_server(port, work / "bench.sqlite3", setup)
    figures = Figures(label=label)
    try:
        wait_ready(port)
        measure_one_client(figures, port, server.pid, args.turns)
        measure_clients(figures, port, server.pid, args.clients, args.seconds)
        measure_floor(figures, port, args.turns, args.clients, args.seconds)
        figures.peak, figures.rss = peak_memory_mb(server.pid)
        figures.load = os.getloadavg()
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    return figures


def main() -> None:
    args = parse_args()
    runs = []
    setups = [(s, f"serve {s}" if s != "default" else "serve (defaults)")
              for s in args.servers.split(",")]  # fmt: skip
    if args.before:
        tree, _, shape = args.before.partition(":")
        shape = shape or "default"
        setups.insert(0, (f"{tree}:{shape}", f"before {shape}"))
    for _ in range(args.rounds):
        for setup, label in setups:
            runs.append(measure(setup, label, args))
    print_table(runs, args.clients)


if __name__ == "__main__":
    main()
