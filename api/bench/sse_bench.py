"""Live events benchmark against a real ``schocken serve`` (its defaults): the clients are
this one process (asyncio, raw sockets).

Run: ``python -m api.bench.sse_bench [--watchers 200] [--turns 80] [--interval 0.05]
[--idle 1000] [--postgres]``.

1. **Latency**: one game watched by ``--watchers`` SSE clients (``GET …/games/{id}/events``);
   turns written through the API one after the other (every ``--interval`` s); for every turn
   and watcher, the time from the write's acknowledgement (its answer received) to the
   watcher receiving the event (its ``id:`` line): p50 / p95 / p99 / max (target p99 ≤ 100 ms;
   negative: the event came before the answer, as on SQLite, where a commit is visible before
   the writer's fsync of the WAL ends and it answers), the server's CPU in that phase, and the
   load average.
2. **Idle streams**: ``--idle`` SSE connections held open on one server: the resident memory
   (RSS) of all its processes before and after, and per connection.

``--postgres`` runs both on SQLite and on PostgreSQL (a throwaway durable cluster,
:mod:`api.bench.pgserver`), side by side. The load average is printed before and after each
phase: the figures depend on what else runs on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from api.rules import PRESETS
from api.rules.simulate import simulate_logs

from .api_bench import start_server, wait_ready
from .loadgen import PLAYERS, AsyncClient, free_port, new_stammtisch, percentile
from .pgserver import Server as Postgres
from .procstat import cpu_seconds, tree


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def rss_mb(pid: int) -> float:
    """Resident memory of the process and its children (the master and its workers), MB."""
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/status", encoding="ascii") as fh:
                for line in fh:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


class Watcher:
    """One SSE connection: when each ``id:`` arrived (perf_counter), by id."""

    def __init__(self) -> None:
        self.arrived: dict[int, float] = {}
        self.status = 0
        self.writer: asyncio.StreamWriter | None = None

    async def open(self, port: int, path: str) -> None:
        reader, self.writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        self.writer.write(
            f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        self.status = int(head.split()[1])
        self.reader = reader

    async def follow(self) -> None:
        """Note the arrival of every id until the connection ends."""
        pending = b""
        while chunk := await self.reader.read(65536):
            now = time.perf_counter()
            pending += chunk
            lines, _, pending = pending.rpartition(b"\n")
            for line in lines.split(b"\n"):
                if line.startswith(b"id: "):
                    self.arrived.setdefault(int(line[4:]), now)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def longest_game(turns: int) -> tuple[str, list[dict[str, Any]]]:
    """A simulated game of the four players with at least ``turns`` turns (or the longest)."""
    logs = simulate_logs(PRESETS["standard"], 200, players=PLAYERS, seed=11)
    log = max(logs, key=lambda lg: len(lg["events"]))
    return log["starter"], log["events"][:turns]


async def latency(
    port: int, watchers: int, turns: int, interval: float, pid: int
) -> dict[str, Any]:
    """Phase 1: ``watchers`` on one game, ``turns`` written; the delays ack → event."""
    token, slug = new_stammtisch(port, f"SSE {time.time_ns()}")
    writer = AsyncClient(port, token)
    base = f"/api/v1/stammtische/{slug}/games"
    starter, plan = longest_game(turns)
    status, raw, _ = await writer.call("POST", base, {"players": PLAYERS, "starter": starter})
    assert status == 201, raw
    game = json.loads(raw)["id"]
    crowd = [Watcher() for _ in range(watchers)]
    await asyncio.gather(*(w.open(port, f"{base}/{game}/events") for w in crowd))
    assert all(w.status == 200 for w in crowd), [w.status for w in crowd]
    tasks = [asyncio.create_task(w.follow()) for w in crowd]
    await asyncio.sleep(0.5)  # every stream in its hub
    acked: dict[int, float] = {}
    cpu0, load0 = cpu_seconds(pid), load()
    for seq, turn in enumerate(plan, start=1):
        status, raw, _ = await writer.call("POST", f"{base}/{game}/turns", turn)
        acked[seq] = time.perf_counter()
        assert status == 201, raw
        await asyncio.sleep(interval)
    deadline = time.perf_counter() + 5
    while time.perf_counter() < deadline and any(len(w.arrived) < len(plan) for w in crowd):
        await asyncio.sleep(0.05)
    cpu = cpu_seconds(pid) - cpu0
    for w in crowd:
        w.close()
    for task in tasks:
        task.cancel()
    delays = [w.arrived[s] - acked[s] for w in crowd for s in acked if s in w.arrived]
    missing = len(crowd) * len(acked) - len(delays)
    return {
        "deliveries": len(delays),
        "missing": missing,
        "early": sum(d < 0 for d in delays),
        "p50": percentile(delays, 0.50) * 1000,
        "p95": percentile(delays, 0.95) * 1000,
        "p99": percentile(delays, 0.99) * 1000,
        "max": max(delays) * 1000,
        "cpu_ms_per_turn": cpu / len(acked) * 1000,
        "load_before": load0,
        "load_after": load(),
    }


async def idle(port: int, count: int, pid: int) -> dict[str, Any]:
    """Phase 2: ``count`` idle streams on one server; its memory before and after."""
    _, slug = new_stammtisch(port, f"Idle {time.time_ns()}")
    await asyncio.sleep(1)
    before = rss_mb(pid)
    crowd = [Watcher() for _ in range(count)]
    for start in range(0, count, 100):  # in batches: the listen backlog
        await asyncio.gather(
            *(
                w.open(port, f"/api/v1/stammtische/{slug}/events")
                for w in crowd[start : start + 100]
            )
        )
    await asyncio.sleep(2)
    after = rss_mb(pid)
    statuses = [w.status for w in crowd]
    for w in crowd:
        w.close()
    return {
        "open": statuses.count(200),
        "refused": count - statuses.count(200),
        "rss_before": before,
        "rss_after": after,
        "kb_per_stream": (after - before) * 1024 / max(1, statuses.count(200)),
        "load": load(),
    }


def run_on(label: str, db: str | None, url: str | None, args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    proc = start_server(port, db or "", "default", url)
    try:
        wait_ready(port)
        figures = {"label": label}
        figures.update(
            asyncio.run(latency(port, args.watchers, args.turns, args.interval, proc.pid))
        )
        figures.update(asyncio.run(idle(port, args.idle, proc.pid)))
        return figures
    finally:
        proc.terminate()
        proc.wait(30)


ROWS = [
    ("deliveries (turns × watchers)", "deliveries", "{:.0f}"),
    ("missing", "missing", "{:.0f}"),
    ("event before the ack", "early", "{:.0f}"),
    ("ack → event p50 (ms)", "p50", "{:.1f}"),
    ("ack → event p95 (ms)", "p95", "{:.1f}"),
    ("ack → event p99 (ms)  [≤ 100]", "p99", "{:.1f}"),
    ("ack → event max (ms)", "max", "{:.1f}"),
    ("server CPU per turn (ms)", "cpu_ms_per_turn", "{:.1f}"),
    ("idle streams open", "open", "{:.0f}"),
    ("idle streams refused", "refused", "{:.0f}"),
    ("RSS before (MB, all processes)", "rss_before", "{:.1f}"),
    ("RSS with them (MB)", "rss_after", "{:.1f}"),
    ("RSS per idle stream (KB)", "kb_per_stream", "{:.1f}"),
]


def print_table(runs: list[dict[str, Any]]) -> None:
    width = 34
    print("".ljust(width) + "".join(r["label"].rjust(14) for r in runs))
    for title, key, fmt in ROWS:
        print(title.ljust(width) + "".join(fmt.format(r[key]).rjust(14) for r in runs))
    for r in runs:
        print(f"{r['label']}: latency phase {r['load_before']} → {r['load_after']}; "
              f"idle phase {r['load']}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--turns", type=int, default=80)
    parser.add_argument("--interval", type=float, default=0.05)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--postgres", action="store_true")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = args.idle + args.watchers + 100
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(need, soft)), hard))
    print(f"{os.cpu_count()} cores, {load()}")
    folder = Path(tempfile.mkdtemp(prefix="schocken-sse-"))
    runs = []
    try:
        runs.append(run_on("SQLite", str(folder / "bench.sqlite3"), None, args))
        if args.postgres:
            with Postgres() as pg:
                url = pg.fresh()
                runs.append(run_on("PostgreSQL", str(folder / "none"), url, args))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print_table(runs)


if __name__ == "__main__":
    main()
