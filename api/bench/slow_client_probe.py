"""Slow clients against a real ``schocken serve`` (its defaults): how long ``GET
/api/v1/health`` and a write (a recorded turn) take while connections stall.

Run: ``python -m api.bench.slow_client_probe [--stalled 8,100] [--rounds 10] [TREE]``
(``TREE``: another source tree's server, e.g. a worktree of an older commit).

For each count N: N connections are opened and stalled, half of them after part of a request
head (no blank line), half after a whole head of a write with ``Content-Length: 4096`` and 16
bytes of its body; then ``--rounds`` times, 0.2 s apart, a health check and a turn on new
connections, each given at most ``--timeout`` seconds. Printed: the median and the slowest
latency (or how many timed out), before any stall for comparison, and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path

from .api_bench import start_server, wait_ready
from .loadgen import AsyncClient, Player, free_port, percentile

#: a request head cut short (no blank line: the server waits for the rest)
HALF_HEAD = b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n"
#: a whole head of a write whose body is cut short
HALF_BODY = (
    b"POST /api/v1/stammtische HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n" + b'{"name": "slow ...'
)


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def stall(port: int, count: int) -> list[socket.socket]:
    """``count`` connections left hanging: half with part of a head, half with part of a
    body."""
    socks = []
    for index in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(HALF_HEAD if index % 2 == 0 else HALF_BODY)
        socks.append(sock)
    return socks


async def timed(call: object, timeout: float) -> float | None:
    """Seconds the awaitable took, None when it took longer than ``timeout``."""
    started = time.perf_counter()
    try:
        await asyncio.wait_for(call, timeout)  # type: ignore[arg-type]
    except (TimeoutError, OSError, AssertionError):
        return None
    return time.perf_counter() - started


async def health(port: int) -> None:
    status, _, _ = await AsyncClient(port).call("GET", "/api/v1/health")
    assert status == 200


async def rounds(
    port: int, player: Player, count: int, timeout: float
) -> dict[str, list[float | None]]:
    """``count`` health checks and turns on new connections, 0.2 s apart."""
    got: dict[str, list[float | None]] = {"health": [], "write": []}
    for _ in range(count):
        got["health"].append(await timed(health(port), timeout))
        player.client.streams = None  # a new connection for each write
        got["write"].append(await timed(player.turn(), timeout))
        await asyncio.sleep(0.2)
    return got


def summary(values: list[float | None], timeout: float) -> str:
    done = [v for v in values if v is not None]
    late = len(values) - len(done)
    if not done:
        return f"all {late} timed out (> {timeout:.0f} s)"
    text = f"median {percentile(done, 0.5) * 1000:7.1f} ms, max {max(done) * 1000:7.1f} ms"
    return text + (f", {late} timed out (> {timeout:.0f} s)" if late else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default="default", help="another source tree")
    parser.add_argument("--stalled", default="8,100", help="counts of stalled connections")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--timeout", type=float, default=10.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="slow-probe-"))
    print(f"server: {args.tree}; {load()}")
    for count in [0, *(int(c) for c in args.stalled.split(","))]:
        port = free_port()
        proc = start_server(port, work / f"data{count}" / "schocken.sqlite3", args.tree)
        try:
            wait_ready(port)
            player = Player(port, seed=count + 1)
            asyncio.run(rounds(port, player, 3, args.timeout))  # warm-up
            socks = stall(port, count)
            time.sleep(0.3)
            got = asyncio.run(rounds(port, player, args.rounds, args.timeout))
            for sock in socks:
                sock.close()
            print(f"{count:4d} stalled: /health {summary(got['health'], args.timeout)}")
            print(f"{'':14s} write   {summary(got['write'], args.timeout)}")
            print(f"{'':14s} {load()}")
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except Exception:  # noqa: BLE001 - a frozen server: killed
                proc.kill()
                proc.wait()
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
