"""Benchmark of the luck figures (api/rules/luck.py, dashboard/luck.py) on the demo Stammtisch.

    python -m api.bench.luck_bench            # the demo: ten years, about 44,000 turns

1. ``schocken demo`` into a new SQLite file (its refresh computes the luck figures once).
2. **From scratch**: every luck row deleted, the odds' solvers forgotten, then
   :func:`~dashboard.luck.update_luck` for the Stammtisch (each finished game replayed and
   rated), and a full refresh of its statistics after the same reset.
3. **One finished game more**: a simulated game imported (the Stammtisch marked stale), then
   the incremental refresh the refresher runs, timed with the luck step and, for the same game,
   without it (today's refresh); ``--games`` times, medians printed.
4. The Glückspilz and the Pechvogel of each year, with their figures.

Prints figures (with the load average); asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from api.domain import GameCache, Services
from api.rules import PRESETS, simulate_game, to_log
from api.rules.odds import solver_for
from api.storage import SQLiteStore
from dashboard import readmodel
from dashboard.demo import create_demo
from dashboard.luck import update_luck
from dashboard.readmodel import ReadModel, refresh

from .procstat import loadavg


def _timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def _ms(values: list[float]) -> str:
    return f"median {statistics.median(values) * 1000:.1f} ms (min {min(values) * 1000:.1f})"


def _print_years(model: ReadModel, stammtisch_id: int) -> None:
    """The Glückspilz, the Pechvogel and who gave away the most, per year."""
    for y in sorted(r["year"] for r in model.years(stammtisch_id)):
        luck = model.collect(stammtisch_id, y)["luck"]
        top, bottom = luck[0], luck[-1]
        given = max(luck, key=lambda r: r["given_away"])
        print(
            f"{y}: Glückspilz {top['name']} {top['luck']:+.2f} in {top['split']} split "
            f"turns (survived {top['survived']} of {top['turns']}, expected "
            f"{top['expected']:.1f}); Pechvogel {bottom['name']} {bottom['luck']:+.2f} in "
            f"{bottom['split']} (survived {bottom['survived']} of {bottom['turns']}, "
            f"expected {bottom['expected']:.1f}); most given away {given['name']} "
            f"{given['given_away']:.2f} in {given['split']}"
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10, help="finished games added one by one")
    args = parser.parse_args(argv)
    print(f"load average at the start: {loadavg()}")
    with tempfile.TemporaryDirectory(prefix="luck-bench-") as folder:
        store = SQLiteStore(Path(folder) / "demo.sqlite3")
        try:
            demo = create_demo(store)
            repo = store.repository()
            st = repo.get_stammtisch(demo["slug"])
            assert st is not None  # noqa: S101 - just created
            print(f"demo: {demo['games']} games, {demo['turns']} turns, {demo['years']}")

            def reset() -> None:
                with repo.transaction():
                    repo.write_luck({g: [] for g in repo.game_ids()})
                solver_for.cache_clear()

            reset()
            took = _timed(lambda: update_luck(repo, [st.id]))
            print(f"from scratch, luck figures of every game: {took:.2f} s")
            reset()
            repo.mark_stats_stale([st.id])
            took = _timed(lambda: refresh(repo))
            print(f"from scratch, full refresh with the luck figures: {took:.2f} s")

            svc = Services(repo, GameCache(4))
            rng = random.Random(3)
            names = ["Anna", "Bert", "Clara", "Dieter", "Elke", "Heinz"]
            with_luck: list[float] = []
            without: list[float] = []
            for i in range(args.games):
                for measure, skip in ((with_luck, False), (without, True)):
                    game = simulate_game(
                        PRESETS["standard"], names, names[i % 6], rng, detail=True,
                        played_at=f"2025-12-{10 + i:02d}T20:00:00+01:00",
                    )  # fmt: skip
                    svc.import_game(st, to_log(game))
                    if skip:  # today's incremental refresh: the game's luck already there
                        update_luck(repo, [st.id])
                    measure.append(_timed(lambda: refresh(repo)))
            print(f"one finished game, incremental refresh with its luck: {_ms(with_luck)}")
            print(f"one finished game, incremental refresh without it:   {_ms(without)}")
            extra = statistics.median(with_luck) - statistics.median(without)
            print(f"the luck step adds: {extra * 1000:.1f} ms (median against median)")

            _print_years(ReadModel(repo), st.id)
        finally:
            store.close()
    print(f"load average at the end: {loadavg()}  (readmodel.SMALL = {readmodel.SMALL})")


if __name__ == "__main__":
    main()
