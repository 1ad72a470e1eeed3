"""The odds against the dice: a Monte Carlo agreement table (api/rules/odds.py).

For every preset and a few targets, the engine itself plays ``--turns`` turns throw by throw
with random dice (fixed seed), always taking the advised decision
(:func:`~api.rules.odds.play_advised`), against the target thrown earlier in the round by the
round's opener; the round's outcome, as the engine decides it, is counted. Printed beside the
exact probabilities at the start of the turn: the simulated share, its standard error and the
difference in standard errors (z). Run: ``python -m api.bench.odds_mc [--turns N]``.
"""

from __future__ import annotations

import argparse
import os
import random

from api.rules import PRESETS, Game, RoundLost, parse_event
from api.rules.odds import Target, play_advised, solver

TARGETS = ("1-1-4", "2-2-2", "6-5-3")


def agreement(name: str, target: str, turns: int, seed: int) -> tuple[float, float, int, int]:
    """(exact p_beat, exact p_tie, turns beating, turns tying) of one preset and target."""
    rules = PRESETS[name]
    limit = rules.max_throws
    dice = tuple(int(p) for p in target.split("-"))
    aim = Target(dice, limit, False)
    start = Game.start(rules, ["Anna", "Bert"], "Anna")
    turn = {"player": "Anna", "dice": list(dice), "throws": limit, "hand": limit == 1}
    start.apply(parse_event(turn, rules))
    rng = random.Random(seed)
    solve = solver(rules, aim, limit)
    beat = tie = 0
    for _ in range(turns):
        events = play_advised(
            start.copy(), "Bert", lambda n: tuple(rng.randint(1, 6) for _ in range(n)), solve
        )
        lost = [e.data.player for e in events if isinstance(e.data, RoundLost)]
        beat += lost == ["Anna"]
        tie += not lost
    p_beat, p_tie = solve.start()
    return p_beat, p_tie, beat, tie


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000, help="per preset and target")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    n = args.turns
    print(f"load average before: {os.getloadavg()[0]:.2f}; {n} turns per preset and target")
    print(
        f"{'preset':<10} {'target':<6} {'exact p_beat':>12} {'simulated':>10} {'z':>6}"
        f" {'exact p_tie':>12} {'simulated':>10} {'z':>6}"
    )
    worst = 0.0
    for name in sorted(PRESETS):
        for target in TARGETS:
            p_beat, p_tie, beat, tie = agreement(name, target, n, args.seed)
            zs = []
            for p, k in ((p_beat, beat), (p_tie, tie)):
                error = max((p * (1 - p) / n) ** 0.5, 1 / n)
                zs.append((k / n - p) / error)
            worst = max(worst, *(abs(z) for z in zs))
            print(
                f"{name:<10} {target:<6} {p_beat:>12.6f} {beat / n:>10.6f} {zs[0]:>6.2f}"
                f" {p_tie:>12.6f} {tie / n:>10.6f} {zs[1]:>6.2f}"
            )
    print(f"largest |z|: {worst:.2f} (agreement: every |z| ≤ 4)")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
