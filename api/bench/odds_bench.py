"""The odds of a turn (api/rules/odds.py, POST /api/v1/rules/odds): time per position.

Prints, for random positions of every preset (fixed seed):

* in process: the first answer of a new ruleset/target/limit (the whole turn solved, cold) and
  every later answer (warm, the solver kept), p50 and p99;
* over HTTP: ``schocken serve`` on a fresh SQLite file, one keep-alive client, after a
  warm-up round of the same positions, p50 and p99 of the whole request.

Targets (issue 27): ≤ 1 ms p50 in process, ≤ 5 ms p50 over HTTP after warm-up.
Run: ``python -m api.bench.odds_bench [--positions N]``.
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from api.rules import PRESETS
from api.rules.odds import Target, odds, solver_for

from .api_bench import start_server, wait_ready
from .loadgen import Client, free_port, percentile


def positions(count: int, seed: int = 27) -> list[dict[str, Any]]:
    """Random legal positions as request bodies, spread over the presets."""
    rng = random.Random(seed)
    out = []
    names = sorted(PRESETS)
    for i in range(count):
        name = names[i % len(names)]
        rules = PRESETS[name]
        limit = rng.randint(1, rules.max_throws)
        throws = rng.randint(1, limit)
        kept = 0 if throws == 1 else rng.randint(0, rules.dice_count - 1)
        aside = [1 if rules.ones_only_aside else rng.randint(1, 6) for _ in range(kept)]
        dice = [rng.randint(1, 6) for _ in range(rules.dice_count - kept)]
        # a round's result to beat: one of a few per preset (a table asks about one round's
        # target again and again; the solvers kept are the last 256)
        target_rng = random.Random(rng.randint(0, 9))
        target = {
            "dice": [target_rng.randint(1, 6) for _ in range(rules.dice_count)],
            "throws": target_rng.randint(1, limit),
            "hand": target_rng.random() < 0.3,
        }
        body = {"rules": {"preset": name}, "aside": aside, "dice": dice, "throws": throws}
        out.append({**body, "limit": limit, "target": target})
    return out


def _ms(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 0.5) * 1000:.3f} ms, p99 {percentile(values, 0.99) * 1000:.3f} ms"
    )


def in_process(bodies: list[dict[str, Any]]) -> None:
    solver_for.cache_clear()
    cold: list[float] = []
    warm: list[float] = []
    for body in bodies + bodies:
        t = body["target"]
        args = (
            PRESETS[body["rules"]["preset"]],
            tuple(body["aside"]),
            tuple(body["dice"]),
            body["throws"],
            body["limit"],
            Target(tuple(t["dice"]), t["throws"], t["hand"]),
        )
        misses = solver_for.cache_info().misses
        start = time.perf_counter()
        odds(*args)
        elapsed = time.perf_counter() - start
        (cold if solver_for.cache_info().misses > misses else warm).append(elapsed)
    print(f"in process, cold (a new ruleset/target/limit, {len(cold)}): {_ms(cold)}")
    print(f"in process, warm ({len(warm)}):                         {_ms(warm)}")


def over_http(bodies: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory(prefix="odds-bench-") as tmp:
        port = free_port()
        server = start_server(port, Path(tmp) / "bench.sqlite3", "default")
        try:
            wait_ready(port)
            client = Client(port)
            for body in bodies:  # warm-up: every solver made once in the answering worker(s)
                client.call("POST", "/api/v1/rules/odds", body)
            times = []
            for body in bodies:
                status, answer, elapsed = client.call("POST", "/api/v1/rules/odds", body)
                assert status == 200, answer
                times.append(elapsed)
            print(f"over HTTP after warm-up ({len(times)}):               {_ms(times)}")
        finally:
            server.terminate()
            server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--positions", type=int, default=700)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    bodies = positions(args.positions)
    in_process(bodies)
    over_http(bodies)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
