"""Engine benchmark: evaluations/s, simulated games/s, replayed game logs/s — on one core.

Run: ``python -m api.bench.engine_bench [--games 2000] [--repeat 5]``. Prints figures; the
targets of the engine issue are ≥ 1,000,000 evaluations/s, ≥ 1,000 complete random 4-player
games/s simulated and ≥ 1,000 complete game logs/s replayed with full validation.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from api.rules import PRESETS, Ruleset, evaluate, evaluation_table, replay_log
from api.rules.simulate import simulate_game, simulate_logs

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]


def measure(fn: Callable[[], int], repeat: int) -> tuple[float, float]:
    """Run ``fn`` (returns the number of operations) ``repeat`` times: best and median ops/s."""
    rates = []
    for _ in range(repeat):
        start = time.perf_counter()
        n = fn()
        rates.append(n / (time.perf_counter() - start))
    return max(rates), statistics.median(rates)


Workload = tuple[str, Callable[[], int], str]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--preset", default="standard", choices=sorted(PRESETS))
    return parser.parse_args()


def random_throws(count: int) -> list[tuple[tuple[int, int, int], bool]]:
    """``count`` seeded random throws, every other one from the hand."""
    rng = random.Random(1)
    return [
        (
            (int(rng.random() * 6) + 1, int(rng.random() * 6) + 1, int(rng.random() * 6) + 1),
            i % 2 == 0,
        )
        for i in range(count)
    ]


def evaluation_workloads(rules: Ruleset) -> list[Workload]:
    """Throw evaluation: by ``evaluate()`` and by look-up in the precomputed table."""
    throws = random_throws(200_000)
    table = evaluation_table(rules)

    def run_evaluate() -> int:
        for dice, hand in throws:
            evaluate(dice, hand, rules)
        return len(throws)

    def run_table() -> int:
        for (a, b, c), hand in throws:
            table[(a, b, c, hand)]
        return len(throws)

    return [
        ("evaluate() calls", run_evaluate, "evaluations/s"),
        ("table look-ups", run_table, "evaluations/s"),
    ]


def simulation_workload(rules: Ruleset, games: int) -> Workload:
    def run_simulate() -> int:
        sim_rng = random.Random(7)
        for _ in range(games):
            simulate_game(rules, PLAYERS, "Anna", sim_rng)
        return games

    return ("simulated games", run_simulate, "games/s")


def replay_workloads(logs: list[dict[str, Any]]) -> list[Workload]:
    """Replaying complete game logs with full validation, as dicts and as JSON text."""
    texts = [json.dumps(log) for log in logs]

    def run_replay() -> int:
        for log in logs:
            replay_log(log)
        return len(logs)

    def run_replay_text() -> int:
        for text in texts:
            replay_log(json.loads(text))
        return len(texts)

    return [
        ("replayed game logs (dicts, full validation)", run_replay, "logs/s"),
        ("replayed game logs (JSON text, full validation)", run_replay_text, "logs/s"),
    ]


def main() -> None:
    args = parse_args()
    games: int = args.games
    repeat: int = args.repeat
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core
    rules = PRESETS[args.preset]
    logs = list(simulate_logs(rules, games, players=PLAYERS, seed=11))
    turns = sum(len(log["events"]) for log in logs)
    workloads = [
        *evaluation_workloads(rules),
        simulation_workload(rules, games),
        *replay_workloads(logs),
    ]
    print(
        f"preset {args.preset}, 4 players, {games} games "
        f"({turns / len(logs):.1f} turns per game), best / median of {repeat} runs, one core"
    )
    for label, fn, unit in workloads:
        best, median = measure(fn, repeat)
        print(f"  {label:50s} {best:>12,.0f} {unit} (median {median:,.0f})")


if __name__ == "__main__":
    main()
