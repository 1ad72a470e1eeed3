"""What one recorded turn passes through, in-process (Flask's test client, a SQLite file).

Run: ``python -m api.bench.turn_trace [--profile N] [--idempotent]``; another checkout (e.g.
today's main, for a before/after): ``PYTHONPATH=<tree> python api/bench/turn_trace.py``. A Stammtisch with four
players and a game are made first; then one ``POST …/games/<id>/turns`` (a turn summary) is
traced and printed:

* the modules of the packages ``api``, ``schemas`` and ``dashboard`` whose code runs during the
  turn (``sys.setprofile``: every Python call, by its code's module), and their packages;
* how often ``Repository.transaction()`` is entered (nested entries too), the function calls
  made and the SQL statements run (``--sql``: printed);
* ``--profile N``: a cProfile of N more turns (the top functions by own and by cumulative
  time); ``--turns N``: the wall-clock and CPU time per turn of N more turns.

The load average is printed with the figures: the machine may be shared.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import os
import pstats
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

PACKAGES = ("api", "schemas", "dashboard")
PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]


def _module_of(frame: FrameType, root: str) -> str | None:
    path = frame.f_code.co_filename
    if not path.startswith(root):
        return None
    rel = Path(path).relative_to(root).with_suffix("")
    if not rel.parts or rel.parts[0] not in PACKAGES or rel.parts[:2] == ("api", "bench"):
        return None
    parts = rel.parts[:-1] if rel.parts[-1] == "__init__" else rel.parts
    return ".".join(parts)


@contextlib.contextmanager
def traced(root: str, calls: list[int]) -> Iterator[set[str]]:
    """The modules (of :data:`PACKAGES` below ``root``) whose code runs inside the block;
    ``calls[0]``: the Python and C function calls made in it (a measure of work that the
    machine's other load does not change)."""
    seen: set[str] = set()

    def hook(frame: FrameType, event: str, _arg: Any) -> None:
        if event in ("call", "c_call"):
            calls[0] += 1
        if event == "call":
            module = _module_of(frame, root)
            if module is not None:
                seen.add(module)

    sys.setprofile(hook)
    try:
        yield seen
    finally:
        sys.setprofile(None)


@contextlib.contextmanager
def counted_transactions(repo_class: Any) -> Iterator[list[int]]:
    """How often ``repo_class.transaction`` is entered inside the block: ``[all, from outside
    api/storage]`` (the storage's methods enter it again inside a caller's transaction)."""
    count = [0, 0]
    original = repo_class.transaction
    storage = os.sep + os.path.join("api", "storage") + os.sep

    def transaction(self: Any, *args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        if storage not in sys._getframe(1).f_code.co_filename:  # noqa: SLF001 - who enters
            count[1] += 1
        return original(self, *args, **kwargs)

    repo_class.transaction = transaction
    try:
        yield count
    finally:
        repo_class.transaction = original


class Table:
    """One Stammtisch, its token and a game, played by an engine-simulated sequence."""

    def __init__(self, client: Any, idempotent: bool) -> None:
        r = client.post("/api/v1/stammtische", json={"name": "Zur Messung"})
        assert r.status_code == 201, r.json
        self.client = client
        self.base = f"/api/v1/stammtische/{r.json['slug']}"
        self.auth = {"Authorization": f"Bearer {r.json['token']}"}
        self.idempotent = idempotent
        self.n = 0
        for name in PLAYERS:
            assert client.post(f"{self.base}/players", json={"name": name},
                               headers=self.auth).status_code == 201  # fmt: skip
        self.new_game()

    def new_game(self) -> None:
        r = self.client.post(f"{self.base}/games", json={"players": PLAYERS, "starter": "Anna"},
                             headers=self.auth)  # fmt: skip
        assert r.status_code == 201, r.json
        self.game = r.json

    def turn(self) -> None:
        """One turn summary: the player whose turn it is, three dice, within the limit."""
        turn = self.game["game"]["turn"] if "game" in self.game else self.game["turn"]
        if turn is None:
            self.new_game()
            turn = self.game["turn"]
        self.n += 1
        dice = [(self.n % 6) + 1, ((self.n * 7) % 6) + 1, ((self.n * 5) % 6) + 1]
        body = {"player": turn["player"], "dice": dice, "throws": 1}
        headers = dict(self.auth)
        if self.idempotent:
            headers["Idempotency-Key"] = f"turn-{self.n}"
        game_id = (self.game.get("game") or self.game)["id"]
        r = self.client.post(f"{self.base}/games/{game_id}/turns", json=body, headers=headers)
        assert r.status_code == 201, r.json
        self.game = r.json


def trace_one(table: Table, root: str, repo_class: Any, sql: bool) -> None:
    """Trace one turn: the modules crossed, function calls, SQL statements, transactions."""
    calls: list[int] = [0]
    statements: list[str] = []
    for conn in gc.get_objects():  # every connection of the store: its statements
        if isinstance(conn, sqlite3.Connection):
            conn.set_trace_callback(statements.append)
    with counted_transactions(repo_class) as entered, traced(root, calls) as seen:
        table.turn()
    for conn in gc.get_objects():
        if isinstance(conn, sqlite3.Connection):
            conn.set_trace_callback(None)
    packages = sorted({m.rsplit(".", 1)[0] if "." in m else m for m in seen})
    print(f"modules crossed by one recorded turn: {len(seen)} in {len(packages)} packages")
    for module in sorted(seen):
        print(f"  {module}")
    print(f"packages: {', '.join(packages)}")
    print(f"function calls: {calls[0]} (the test client's included)")
    print(f"SQL statements: {len(statements)}")
    for statement in statements if sql else ():
        print(f"  {' '.join(statement.split())[:150]}")
    print(f"Repository.transaction() entered: {entered[0]} ({entered[1]} outside "
          f"api/storage, {entered[0] - entered[1]} nested inside the storage's methods)")  # fmt: skip


def timed(table: Table, profile: int, top: int, turns: int) -> None:
    """``profile``: a cProfile of that many turns; ``turns``: their CPU, the least of batches."""
    if profile:
        profiler = cProfile.Profile()
        started = time.perf_counter()
        profiler.enable()
        for _ in range(profile):
            table.turn()
        profiler.disable()
        spent = time.perf_counter() - started
        print(f"\n{profile} turns in-process (profiled): {spent / profile * 1e3:.2f} "
              "ms per turn")  # fmt: skip
        stats = pstats.Stats(profiler)
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)
    if turns:
        batches = []  # the least CPU of batches of 100: the machine may be shared
        for _ in range(max(1, turns // 100)):
            started, cpu = time.perf_counter(), time.process_time()
            for _ in range(100):
                table.turn()
            batches.append((time.process_time() - cpu, time.perf_counter() - started))
        cpu, wall = min(batches)
        print(f"{len(batches) * 100} turns in-process (test client included), the least of "
              f"batches of 100: CPU {cpu * 10:.2f} ms per turn (wall {wall * 10:.2f} ms)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", type=int, default=0, help="profile that many more turns")
    parser.add_argument("--idempotent", action="store_true", help="send an Idempotency-Key")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--sql", action="store_true", help="print the SQL statements")
    parser.add_argument("--turns", type=int, default=0, help="time that many more turns")
    args = parser.parse_args()

    import api
    from api.app import create_app
    from api.storage import SQLiteRepository

    # the tree whose ``api`` is imported (``PYTHONPATH=<other tree> python
    # api/bench/turn_trace.py`` traces another checkout, e.g. main, for a before/after)
    root = str(Path(api.__file__).resolve().parents[1]) + os.sep
    print(f"tree: {root}")
    with tempfile.TemporaryDirectory(prefix="schocken-trace-") as folder:
        app = create_app({"TESTING": True, "DATABASE": f"{folder}/t.sqlite3",
                          "SECRET_KEY": "x", "WRITE_RATE_PER_MINUTE": 10**9,
                          "WRITE_RATE_BURST": 10**9})  # fmt: skip
        client = app.test_client()
        table = Table(client, args.idempotent)
        for _ in range(5):  # warm: the game cached, every lazy import done
            table.turn()
        trace_one(table, root, SQLiteRepository, args.sql)
        timed(table, args.profile, args.top, args.turns)
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
