"""API benchmark against `schocken serve`: the load comes from this (separate) process.

Run: ``python -m api.bench.api_bench [--turns 300] [--seconds 15] [--clients 8] [--servers
default,2] [--before TREE[:W]] [--rounds N]``. The "before" column is another source tree's
``schocken serve`` (e.g. an older main's), run by that tree's own virtualenv ``TREE/.venv``
when it has one (with the packages that tree depends on), else by this one::

    git worktree add --detach /tmp/before be3c487
    python3 -m venv /tmp/before/.venv && /tmp/before/.venv/bin/pip install -e /tmp/before
    python -m api.bench.api_bench --before /tmp/before --rounds 3

For every server set-up (``--servers default,4``: ``schocken serve`` with its defaults, or
with that many worker processes; ``--before``: the other tree's first) it starts the server on a fresh
SQLite file, gives every client its own Stammtisch with four players and plays
engine-simulated games over HTTP, one turn summary per request, over persistent HTTP/1.1
connections (a connection the server closes is opened again, inside the measured latency):

1. one client recording turns: p50 / p99 latency per turn (target p50 ≤ 10 ms);
2. ``--clients`` concurrent clients, each playing its own games, for ``--seconds``: turns/s
   and p99 (target ≥ 1,000 turns/s, p99 ≤ 50 ms on 2 cores);
3. the same two figures for ``GET /api/v1/health`` (the framework's floor; target: turns/s ≥
   0.40 × health/s);
4. server CPU per turn (all processes: gunicorn's master and workers, the statistics
   refresher, the webhook sender; each role's share printed below the sum) and per GET
   /health, the peak memory of the largest server process (VmHWM; target ≤ 200 MB per
   worker); the load average before and after each run.

The set-ups run one after the other (``--rounds``: alternating, that many times: the
machine's other load then falls on both) and are printed side by side.

The concurrent clients share this process's asyncio event loop, one connection each: no
client thread waits for another's turn at the interpreter lock, so the latencies are the
server's, not the load generator's.

PostgreSQL (``--postgres``: a throwaway cluster started here, as the tests' but durable:
``fsync=on``, ``synchronous_commit=on``, see :mod:`api.bench.pgserver`; or ``--database-url
URL``: a new database per run on that server) adds every set-up on PostgreSQL, and
``--processes 1,2`` (the default with PostgreSQL) runs 1 and 2 ``schocken serve`` processes
(each with its default workers, on ports of their own, the clients spread over them) on one
database: SQLite × 1, SQLite × 2, PG × 1, PG × 2 side by side in one run (target: 2 processes
≥ 1.4 × the turns/s of 1). The load generator's CPU (per turn and in % of a core: it shares
the cores) and PostgreSQL's (its backends) are printed beside the servers'::

    python -m api.bench.api_bench --postgres

``--profile DIR``: py-spy (``pip install py-spy``; not a dependency of the project) samples
every server process while the concurrent clients run (only while a thread holds the
interpreter lock: CPU, not waiting), writes each process's stacks to ``DIR`` and prints, per
role, where the CPU went (by package and by function, inclusive).

Figures depend on what else runs on the machine: the load average is printed with them
(before and after each run).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .loadgen import AsyncClient, Client, Player, free_port, percentile
from .pgserver import Server
from .procstat import (
    busy_percent,
    cpu_by_role,
    cpu_seconds,
    machine_ticks,
    peak_memory_mb,
    print_profile,
    spying,
)

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]


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


@dataclass
class Figures:
    """What one run measured: latencies in seconds, server CPU seconds per turn."""

    label: str = ""
    one: list[float] = field(default_factory=list)  # one client, turn latencies
    many: list[float] = field(default_factory=list)  # concurrent clients, turn latencies
    rate: int = 0  # concurrent clients, turns/s
    cpu_one: float = 0.0
    cpu_many: float = 0.0
    #: ``cpu_many`` by process role (``worker``, ``refresher``, ``sender``, ``master``)
    roles: dict[str, float] = field(default_factory=dict)
    cpu_load: float = 0.0  # this process (the clients), concurrent clients, per turn
    load_share: float = 0.0  # this process's CPU while the clients ran, % of one core
    busy: float = 0.0  # the machine's CPU while the clients ran, % of all cores (any process)
    cpu_db: float = float("nan")  # PostgreSQL's processes, concurrent clients, per turn
    floor_one: list[float] = field(default_factory=list)  # the same for GET /health
    floor_many: list[float] = field(default_factory=list)
    floor_rate: int = 0
    cpu_floor: float = 0.0  # server CPU per GET /health, concurrent clients
    peak: float = 0.0  # largest VmHWM of a server process, MB
    rss: float = 0.0  # largest RSS of a server process at the end, MB
    before: tuple[float, float, float] = (0.0, 0.0, 0.0)  # load average before the run
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)  # load average after the run


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300, help="turns for the one-client figure")
    parser.add_argument("--seconds", type=float, default=15.0, help="duration of concurrent runs")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument(
        "--servers",
        default="default",
        help="`schocken serve` set-ups to compare, comma-separated: a number of worker "
        "processes or `default` (its defaults; the default)",
    )
    parser.add_argument(
        "--before",
        metavar="TREE[:W]",
        help="first run `schocken serve` of another source tree (e.g. main, unpacked by `git "
        "archive`), with its defaults or that many worker processes",
    )
    parser.add_argument(
        "--rounds", type=int, default=1, help="run the set-ups this many times, alternating"
    )
    parser.add_argument(
        "--processes",
        help="`schocken serve` processes per set-up, comma-separated (each on its own port, the "
        "clients spread over them): default 1, with PostgreSQL 1,2",
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="also run every set-up on PostgreSQL: a throwaway cluster started here (initdb, "
        "unix socket, fsync=on, synchronous_commit=on)",
    )
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="sample every server process with py-spy while the clients run; stacks into DIR",
    )
    parser.add_argument(
        "--database-url",
        metavar="URL",
        help="also run every set-up on this PostgreSQL server (a new database per run)",
    )
    return parser.parse_args()


ROOT = Path(__file__).resolve().parents[2]


def start_server(
    port: int, db: Path | str, setup: str, url: str | None = None
) -> subprocess.Popen[bytes]:
    """The server on the SQLite file ``db`` or the PostgreSQL database ``url`` in a
    subprocess (not waiting for it to answer): ``W`` is ``schocken serve --workers W``,
    ``default`` ``schocken serve`` with its defaults; ``TREE`` or ``TREE:W``
    the same from another source tree."""
    # the rate limit counts every write, as by default, but never trips (one client here
    # records ~100 turns/s: no pub table does)
    env = {
        **os.environ,
        "SCHOCKEN_STORAGE": "sqlite",
        "SCHOCKEN_WRITE_RATE_PER_MINUTE": os.environ.get("SCHOCKEN_WRITE_RATE_PER_MINUTE", "1e9"),
        # every client of a benchmark has one address: no cap of streams per address
        "SCHOCKEN_EVENT_STREAMS_PER_CLIENT": os.environ.get(
            "SCHOCKEN_EVENT_STREAMS_PER_CLIENT", "1000000"
        ),
    }
    env.pop("SCHOCKEN_DATABASE_URL", None)
    source, _, shape = setup.rpartition(":") if ":" in setup else ("", "", setup)
    if not source and os.path.isdir(shape):
        source, shape = shape, "default"
    where = ["--database-url", url] if url else ["--db", str(db)]
    argv = ["-m", "api.cli", "serve", "--port", str(port), *where]
    if shape != "default":
        argv += ["--workers", str(int(shape))]
    cwd = Path(source) if source else ROOT
    env["PYTHONPATH"] = os.pathsep.join([str(cwd), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [interpreter(cwd), *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def interpreter(tree: Path) -> str:
    """The Python of a source tree: its own virtualenv's (``TREE/.venv``, with the packages
    that tree depends on), else this one's."""
    own = tree / ".venv" / "bin" / "python"
    return str(own) if tree != ROOT and own.exists() else sys.executable


def wait_ready(port: int) -> None:
    """Until the server answers its health check (at most ~30 s)."""
    for _ in range(300):
        try:
            if Client(port).call("GET", "/api/v1/health")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)


@dataclass
class Servers:
    """The running ``schocken serve`` processes of one run (and PostgreSQL's main process)."""

    ports: list[int]
    pids: list[int]
    database: int | None = None  # PostgreSQL's postmaster: its backends are its children


def measure_one_client(figures: Figures, on: Servers, turns: int) -> None:
    """1. one client recording turns (after a warm-up of 20 turns)."""
    solo = Player(on.ports[0], seed=1)
    asyncio.run(_sequence(solo.turn, 20))
    cpu0 = cpu_seconds(*on.pids)
    figures.one = asyncio.run(_sequence(solo.turn, turns))
    figures.cpu_one = (cpu_seconds(*on.pids) - cpu0) / len(figures.one)


def measure_clients(
    figures: Figures, on: Servers, clients: int, seconds: float, profile: Path | None = None
) -> None:
    """2. concurrent clients, each its own games, spread over the servers' ports
    (``profile``: sampled by py-spy, see :func:`spying`)."""
    players = [Player(on.ports[i % len(on.ports)], seed=100 + i) for i in range(clients)]
    db = [on.database] if on.database else []
    spies = spying(on.pids, seconds, profile) if profile else []
    roles0, own0, db0 = cpu_by_role(*on.pids), time.process_time(), cpu_seconds(*db, reaped=True)
    started, ticks = time.perf_counter(), machine_ticks()
    figures.rate, figures.many = run_clients([p.turn for p in players], seconds)
    figures.busy = busy_percent(ticks, machine_ticks())
    wall, own = time.perf_counter() - started, time.process_time() - own0
    roles = cpu_by_role(*on.pids)
    n = len(figures.many)
    figures.roles = {role: (roles[role] - roles0.get(role, 0.0)) / n for role in roles}
    figures.cpu_many = sum(figures.roles.values())
    figures.cpu_load = own / len(figures.many)
    figures.load_share = 100 * own / wall
    if db:
        figures.cpu_db = (cpu_seconds(*db, reaped=True) - db0) / len(figures.many)
    for spy in spies:
        spy.wait()


def measure_floor(figures: Figures, on: Servers, turns: int, clients: int, seconds: float) -> None:
    """3. the framework's floor: a trivial endpoint of the same servers."""
    health = functools.partial(_health, AsyncClient(on.ports[0]))
    figures.floor_one = asyncio.run(_sequence(health, turns))
    cpu0 = cpu_seconds(*on.pids)
    figures.floor_rate, figures.floor_many = run_clients(
        [functools.partial(_health, AsyncClient(on.ports[i % len(on.ports)]))
         for i in range(clients)],
        seconds,
    )  # fmt: skip
    figures.cpu_floor = (cpu_seconds(*on.pids) - cpu0) / len(figures.floor_many)


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
    ("  of which the workers", lambda f: f.roles.get("worker", 0.0) * 1000),
    ("  of which the statistics refresher", lambda f: f.roles.get("refresher", 0.0) * 1000),
    ("  of which the webhook sender", lambda f: f.roles.get("sender", 0.0) * 1000),
    ("  of which gunicorn's master", lambda f: f.roles.get("master", 0.0) * 1000),
    ("server CPU per GET /health, 8 clients (ms)", lambda f: f.cpu_floor * 1000),
    ("PostgreSQL CPU per turn, 8 clients (ms)", lambda f: f.cpu_db * 1000),
    ("load generator CPU per turn (ms)", lambda f: f.cpu_load * 1000),
    ("load generator CPU (% of 1 core)", lambda f: f.load_share),
    ("CPU-bound ceiling (turns/s)", lambda f: ceiling(f)),
    ("machine CPU busy, 8 clients (% of all)", lambda f: f.busy),
    ("peak memory per process (MB)", lambda f: f.peak),
    ("load average (1 min) before", lambda f: f.before[0]),
    ("load average (1 min) after", lambda f: f.load[0]),
]


def ceiling(f: Figures) -> float:
    """The turns/s the cores allow if every one of them worked for the turns only: cores ÷
    (server + PostgreSQL + load generator CPU per turn, with 8 clients)."""
    per_turn = f.cpu_many + f.cpu_load + (0.0 if f.cpu_db != f.cpu_db else f.cpu_db)
    return (os.cpu_count() or 1) / per_turn if per_turn else 0.0


def print_table(runs: list[Figures], clients: int, database: str) -> None:
    """The runs side by side (targets: ≥ 1,000 turns/s, p99 ≤ 50 ms, ratio ≥ 0.40, ≤ 200 MB;
    2 processes ≥ 1.4 × the turns/s of 1)."""
    print(f"{os.cpu_count()} cores; {clients} clients; load from pid {os.getpid()}")
    print(
        "SQLite: a file, WAL, synchronous=NORMAL + an fdatasync of the WAL after every "
        f"commit, before the answer. {database}"
    )
    print(f"{'':40}" + "".join(f"{f.label:>18}" for f in runs))
    for name, value in ROWS:
        name = name.replace("8 clients", f"{clients} clients")
        cells = "".join(
            f"{'–':>18}" if value(f) != value(f)  # nan: not measured
            else f"{value(f):18.2f}" if isinstance(value(f), float) else f"{value(f):18d}"
            for f in runs
        )  # fmt: skip
        print(f"{name:40}{cells}")
    last: dict[str, Figures] = {}  # the latest run of each label: pairs within a round
    for f in runs:
        last[f.label] = f
        one = last.get(f.label.replace("× 2", "× 1"))
        if "× 2" in f.label and one is not None and one.rate:
            print(f"{f.label}: {f.rate / one.rate:.2f} × the turns/s of 1 process "
                  f"(target ≥ 1.4)")  # fmt: skip


@dataclass
class Target:
    """One set-up to measure: a ``schocken serve`` shape, processes, the store."""

    setup: str
    label: str
    processes: int = 1
    postgres: Server | None = None


def measure(target: Target, args: argparse.Namespace) -> Figures:
    """One server set-up, from a fresh database: every figure."""
    work = Path(tempfile.mkdtemp(prefix="schocken-bench-"))
    url = target.postgres.fresh() if target.postgres else None
    ports = [free_port() for _ in range(target.processes)]
    figures = Figures(label=target.label, before=os.getloadavg())
    started: list[subprocess.Popen[bytes]] = []
    on = Servers(ports, [], target.postgres.postmaster_pid() if target.postgres else None)
    try:
        for port in ports:  # one after the other: the first creates the SQLite file
            started.append(start_server(port, work / "bench.sqlite3", target.setup, url))
            on.pids.append(started[-1].pid)
            wait_ready(port)
        measure_one_client(figures, on, args.turns)
        profile = Path(args.profile) / target.label.replace(" ", "") if args.profile else None
        measure_clients(figures, on, args.clients, args.seconds, profile)
        measure_floor(figures, on, args.turns, args.clients, args.seconds)
        figures.peak, figures.rss = peak_memory_mb(*on.pids)
        figures.load = os.getloadavg()
    finally:
        for server in started:
            server.terminate()
        for server in started:
            server.wait(timeout=30)
        if target.postgres and url:
            target.postgres.drop(url)
        shutil.rmtree(work, ignore_errors=True)
    return figures


def targets(args: argparse.Namespace, postgres: Server | None) -> list[Target]:
    """The set-ups of ``args``: each shape × store (SQLite, PostgreSQL) × processes."""
    shapes = [(s, "defaults" if s == "default" else s) for s in args.servers.split(",")]
    found = []
    if args.before:
        tree, _, shape = args.before.partition(":")
        found.append(Target(f"{tree}:{shape or 'default'}", f"before {shape or 'default'}"))
    counts = [int(n) for n in (args.processes or ("1,2" if postgres else "1")).split(",")]
    stores: list[tuple[str, Server | None]] = [("SQLite", None)]
    if postgres:
        stores.append(("PG", postgres))
    for store, server in stores:
        for setup, shown in shapes:
            for n in counts:
                label = f"{store} {shown} × {n}" if shown != "defaults" else f"{store} × {n}"
                found.append(Target(setup, label, n, server))
    return found


def main() -> None:
    args = parse_args()
    postgres = None
    if args.postgres or args.database_url:
        postgres = Server(args.database_url)
    try:
        runs = []
        for _ in range(args.rounds):
            for target in targets(args, postgres):
                runs.append(measure(target, args))
                print(f"  measured {target.label}: {runs[-1].rate} turns/s", flush=True)
        print_table(runs, args.clients, postgres.described if postgres else "")
        for folder in sorted(Path(args.profile).glob("*")) if args.profile else ():
            print(f"\n== profile of {folder.name} (8 clients; py-spy, CPU only)")
            print_profile(folder)
    finally:
        if postgres:
            postgres.stop()


if __name__ == "__main__":
    main()
