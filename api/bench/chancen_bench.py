""" "Chancen" at the table (api/table/chancen.py): what the throw card's odds cost.

Prints, for random rounds of every preset (fixed seed), the time of :func:`advice` (the best
three decisions in German after a throw) and of :func:`throw_by_throw` (the card's context,
odds included) in process: the first call of a round's target (its solver built, cold) and
every later one (warm), p50 and p99; and the load average, as the machine is shared.

Run: ``python -m api.bench.chancen_bench [--rounds N]``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from api.rules import PRESETS, Game, parse_event
from api.table.chancen import advice
from api.table.entry import ThrowInput
from api.table.screen import throw_by_throw

from .loadgen import percentile


def rounds(count: int, seed: int = 27) -> list[tuple[Game, tuple[int, ...]]]:
    """Games whose round has one turn to beat, and the next player's first throw."""
    rng = random.Random(seed)
    out = []
    names = sorted(PRESETS)
    for i in range(count):
        rules = PRESETS[names[i % len(names)]]
        game = Game.start(rules, ("Anna", "Bert", "Clara"), "Anna")
        dice = [rng.randint(1, 6) for _ in range(rules.dice_count)]
        body = {"player": "Anna", "dice": dice, "throws": rng.randint(1, rules.max_throws)}
        game.apply(parse_event(body, rules))
        thrown = tuple(rng.randint(1, 6) for _ in range(rules.dice_count))
        out.append((game, thrown))
    return out


def forget_solvers() -> None:
    """Drop the kept solvers (api/rules/odds.py keeps them per ruleset, target and limit)."""
    module = importlib.import_module("api.rules.odds")
    for name in ("solver", "solver_for"):
        clear = getattr(getattr(module, name, None), "cache_clear", None)
        if clear is not None:
            clear()


def timed(run: Callable[[], Any]) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    found = rounds(args.rounds)
    cold: list[float] = []
    warm: list[float] = []
    card: list[float] = []
    for game, thrown in found:
        forget_solvers()
        cold.append(timed(partial(advice, game, None, thrown)))
        warm.extend(timed(partial(advice, game, None, thrown)) for _ in range(5))
        entered = ThrowInput(dice=[str(d) for d in thrown])
        card.append(timed(partial(throw_by_throw, game, None, "form", entered, True)))
    print(f"rounds: {len(found)} (every preset), in process")
    for name, values in (("advice cold", cold), ("advice warm", warm), ("card warm", card)):
        print(
            f"{name:12} p50 {percentile(values, 0.5):7.3f} ms   p99 {percentile(values, 0.99):7.3f} ms"
        )
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
