"""What the webhooks' transactional outbox adds to the cost of a turn write (target ≤ 10 %).

Run: ``python -m api.bench.outbox_bench [--turns 600] [--round 25] [--postgres | --database-url
URL] [--no-sqlite]``.

One database per store (a SQLite file; PostgreSQL: a throwaway cluster started here, durable
as in :mod:`api.bench.pgserver`), three Stammtische in it: one with no webhook, one with 1 and
one with 3, each webhook choosing **every** event kind (the most rows: every event of every
turn becomes a delivery per webhook). The sender does not run, so only the outbox write is
measured. Each Stammtisch plays engine-simulated games turn by turn (one turn summary per
``POST …/turns``, in process through the app's test client: the request's full write path —
parsing, the engine, the log, the facts, the event row and now the deliveries, the commit
and its fsync — without a network's noise). The three take turns in rounds of ``--round``
turns, so the machine's other load falls on all of them alike; printed side by side: mean, p50
and p99 per turn, the ratio to no webhook, the deliveries written, with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from api.app import create_app
from api.domain.webhooks import KINDS
from api.rules import PRESETS
from api.rules.simulate import simulate_logs

from .loadgen import percentile
from .pgserver import Server

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
HOOKS = (0, 1, 3)


class Table:
    """One Stammtisch with ``hooks`` webhooks, playing simulated games turn by turn."""

    def __init__(self, client: Any, hooks: int, seed: int) -> None:
        r = client.post("/api/v1/stammtische", json={"name": f"Outbox {hooks} {seed}"})
        self.client, self.auth = client, {"Authorization": f"Bearer {r.json['token']}"}
        self.base = f"/api/v1/stammtische/{r.json['slug']}"
        for name in PLAYERS:
            self.post("/players", {"name": name})
        for i in range(hooks):
            self.post("/webhooks", {"url": f"https://hook{i}.example/", "kinds": list(KINDS)})
        self.hooks, self.times, self.rounds = hooks, list[float](), list[float]()
        self.logs = iter(simulate_logs(PRESETS["standard"], 10_000, players=PLAYERS, seed=seed))
        self.turns: Iterator[dict[str, Any]] = iter(())
        self.game = 0

    def post(self, path: str, body: Any) -> Any:
        r = self.client.post(self.base + path, json=body, headers=self.auth)
        assert r.status_code in (201, 202), r.json
        return r.json

    def play(self, turns: int) -> None:
        for _ in range(turns):
            turn = next(self.turns, None)
            if turn is None:  # a new game (its start is not timed)
                log = next(self.logs)
                self.game = self.post("/games", {"players": PLAYERS, "starter": log["starter"]})[
                    "id"
                ]
                self.turns, turn = iter(log["events"][1:]), log["events"][0]
            started = time.perf_counter()
            self.post(f"/games/{self.game}/turns", turn)
            self.times.append(time.perf_counter() - started)

    def deliveries(self) -> int:
        hooks = self.client.get(self.base + "/webhooks", headers=self.auth).json
        return sum(
            self.client.get(f"{self.base}/webhooks/{h['id']}/deliveries?page_size=1",
                            headers=self.auth).json["total"]
            for h in hooks
        )  # fmt: skip


def measure(config: dict[str, Any], turns: int, rounds_of: int) -> list[Table]:
    unlimited = {"WRITE_RATE_PER_MINUTE": 1e9, "WRITE_RATE_BURST": 10**9}
    app = create_app({**config, **unlimited, "TESTING": True})
    try:
        client = app.test_client()
        tables = [Table(client, hooks, seed) for seed, hooks in enumerate(HOOKS, start=1)]
        for table in tables:  # warm-up: caches, the first game, the JIT-less interpreter
            table.play(20)
            table.times.clear()
        for _ in range(turns // rounds_of):
            for table in tables:
                before = len(table.times)
                table.play(rounds_of)
                table.rounds.append(statistics.fmean(table.times[before:]))
        for table in tables:
            table.made = table.deliveries()  # type: ignore[attr-defined]
        return tables
    finally:
        app.extensions["schocken"].store.close()


def report(store: str, tables: list[Table]) -> None:
    base = statistics.fmean(tables[0].times)
    print(f"\n{store}: {len(tables[0].times)} turns per column (load {load()})")
    print(
        f"{'webhooks':>10} {'mean ms':>9} {'p50 ms':>8} {'p99 ms':>8} {'mean vs 0':>10} "
        f"{'p50 vs 0':>9} {'paired':>8} {'deliveries':>11}"
    )
    p50 = percentile(tables[0].times, 0.5)
    for t in tables:
        mean, mid = statistics.fmean(t.times), percentile(t.times, 0.5)
        paired = statistics.median(a / b for a, b in zip(t.rounds, tables[0].rounds, strict=True))
        print(
            f"{t.hooks:>10} {mean * 1e3:>9.3f} {mid * 1e3:>8.3f} "
            f"{percentile(t.times, 0.99) * 1e3:>8.3f} {(mean / base - 1) * 100:>+9.1f}% "
            f"{(mid / p50 - 1) * 100:>+8.1f}% {(paired - 1) * 100:>+7.1f}% "
            f"{t.made:>11}"  # type: ignore[attr-defined]
        )
    print(
        "(paired: the median over the rounds of a round's mean over the same round's mean "
        "without webhooks; the rounds alternate, so other load falls on all alike)"
    )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=600, help="timed turns per Stammtisch")
    parser.add_argument("--round", type=int, default=25, help="turns per Stammtisch per round")
    parser.add_argument("--postgres", action="store_true", help="also on a throwaway cluster")
    parser.add_argument("--database-url", help="also on this PostgreSQL server")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    args = parser.parse_args()
    print(f"outbox_bench: load average before {load()}, {os.cpu_count()} cores")
    if not args.no_sqlite:
        with tempfile.TemporaryDirectory() as folder:
            config = {"STORAGE": "sqlite", "DATABASE": str(Path(folder) / "outbox.sqlite3")}
            report("SQLite", measure(config, args.turns, args.round))
    if args.postgres or args.database_url:
        with Server(args.database_url) as server:
            url = server.fresh()
            try:
                tables = measure({"DATABASE_URL": url}, args.turns, args.round)
                report(f"PostgreSQL ({server.described})", tables)
            finally:
                server.drop(url)
    print(f"\nload average after {load()}")


if __name__ == "__main__":
    main()
