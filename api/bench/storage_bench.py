"""CPU per SQL statement of the storage adapters, through the port only (so that
``PYTHONPATH=<other tree> python api/bench/storage_bench.py`` measures another checkout, e.g.
main, for a before/after).

Each case runs the same port calls many times on a fresh SQLite file (and on PostgreSQL with
``--postgres``) and prints the least process CPU of several rounds per call and per statement:
a read of one row (``get_stammtisch``), the version of a game (``game_version``) and a turn's
write (``append_entry`` with one fact row, in its transaction: BEGIN, two INSERTs, COMMIT).
The WAL's fsync is I/O, not CPU: it is left in but costs little CPU.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

NOW = datetime(2026, 11, 27, 19, 0)


def least_cpu(run: Callable[[], None], calls: int, rounds: int) -> float:
    """The least CPU seconds of ``rounds`` rounds of ``calls`` calls, per call."""
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        for _ in range(calls):
            run()
        best = min(best, (time.process_time() - started) / calls)
    return best


def cases(repo: Any) -> dict[str, tuple[Callable[[], None], int]]:
    """name → (one call, its statements)."""
    from api.storage import FactsWrite, GamePlayer, LogEntry, NewGame, Stammtisch

    st = repo.add_stammtisch(Stammtisch(0, "bench", "Bench", {}, False, "h", NOW))
    a, b = (repo.add_player(st.id, name, NOW).id for name in "AB")
    game = repo.add_game(NewGame(
        stammtisch_id=st.id, header={"players": ["A", "B"]}, rules={}, options={},
        played_at="2026-11-27T20:15:00+01:00", played_at_utc=NOW, played_local=NOW, year=2026,
        source="api", created_at=NOW,
        players=(GamePlayer(0, a, "A", True), GamePlayer(1, b, "B", False)),
    ))  # fmt: skip
    seq = [0]

    def write() -> None:
        seq[0] += 1
        entry = LogEntry(game, seq[0], "turn", {"player": "A", "dice": [1, 2, 3]}, NOW)
        repo.append_entry(entry, FactsWrite(game={"game_id": game, "status": "running",
                          "phase": "half1", "loser_id": None, "loser": None,
                          "blattschuss": False, "finalist1_id": None, "finalist2_id": None}))  # fmt: skip

    return {
        "get_stammtisch": (lambda: repo.get_stammtisch("bench") and None, 1),
        "game_version": (lambda: repo.game_version(game) and None, 1),
        "append_entry": (write, 4),
    }


def measure(label: str, repo: Any, calls: int, rounds: int) -> None:
    for name, (run, statements) in cases(repo).items():
        cpu = least_cpu(run, calls, rounds)
        print(f"{label:10} {name:15} {cpu * 1e6:7.1f} µs CPU per call, "
              f"{cpu * 1e6 / statements:6.1f} µs per statement")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="measure PostgreSQL too (a server of its own, api/bench/pgserver.py)",
    )
    args = parser.parse_args()

    import api
    from api.storage import open_store

    print(f"tree: {os.path.dirname(os.path.dirname(os.path.abspath(api.__file__)))}")
    with tempfile.TemporaryDirectory(prefix="schocken-storage-bench-") as folder:
        store = open_store("sqlite", f"{folder}/b.sqlite3")
        measure("sqlite", store.repository(), args.calls, args.rounds)
        store.close()
    if args.postgres:
        from api.bench.pgserver import Server

        with Server() as server:
            store = open_store("postgresql", server.fresh(migrate=False))
            measure("postgresql", store.repository(), args.calls, args.rounds)
            store.close()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
