"""Crash check: record games while the server is killed with SIGKILL, again and again.

``python -m api.bench.crash_check [--kills 5] [--seed 1] [--workers 2] [--database-url URL]``
starts ``schocken serve --workers 2`` (two gunicorn worker processes) on a temporary SQLite
file, or on the empty PostgreSQL database URL (loopback only;
SIGKILL goes to the whole process group: master and workers) and records turns of simulated games from 16 threads
into 16 games (one Stammtisch each, like 16 pub tables) and from 4 threads racing on one
shared game (each reads the version, sends the next turn with ``If-Match``; the losers get
412 and read again). Every write carries an ``Idempotency-Key``; a write whose answer was lost
(the server died) is sent again with the same key and version once the server is back — the
way a phone retries.

After a random 0.5–1.2 s and 10 more acknowledged writes the server is killed (SIGKILL).
With the server down, a copy of the database (the file; on PostgreSQL ``CREATE DATABASE …
TEMPLATE``) is checked:

* every acknowledged (2xx) write is in the log, at its sequence number, with its body;
* each game's log is exactly a prefix of the game's planned turns: nothing twice (retries),
  nothing out of order, nothing half-applied;
* Deckel are conserved in every game (Mitte + stacks = the ruleset's Deckel while it runs);
* the stored facts equal a replay of the log (the ``schocken rebuild`` comparison);
* the statistics read model, its stale Stammtische refreshed, equals a full recomputation.

Then the server is restarted and the threads carry on. After the last kill the threads settle
their open writes, the server stops, and everything is checked once more; the server's
output must not contain a token. Prints the figures as JSON; exit status 1 on any violation.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from api.bench.crash_audit import (
    Figures,
    Table,
    check_acked,
    check_deckel,
    check_facts,
    check_logs,
    check_read_model,
)
from api.bench.loadgen import free_port

ROOT = Path(__file__).resolve().parents[2]
WRITES_BEFORE_KILL = 10  # acknowledged between a (re)start and the next kill, however slow
PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]


class Server:
    """``schocken serve --workers N`` in a subprocess of its own process group; ``kill`` is
    SIGKILL to the whole group (master and workers at once, as a power cut would)."""

    def __init__(self, db: Path, log: Path, workers: int = 2, url: str | None = None) -> None:
        self.db = db
        self.url = url
        self.log = log
        self.workers = workers
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.up = threading.Event()

    def start(self) -> None:
        where = ["--database-url", self.url] if self.url else ["--db", str(self.db)]
        storage = {} if self.url else {"SCHOCKEN_STORAGE": "sqlite"}
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "api.cli", "serve", "--host", "127.0.0.1"]
                + ["--port", str(self.port), *where]
                + ["--workers", str(self.workers)],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1", **storage},
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(self.log.read_text(errors="replace")[-3000:])
            try:
                with urllib.request.urlopen(self.base + "/api/v1/health", timeout=2):
                    self.up.set()
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server did not come up")

    def kill(self) -> None:
        self.up.clear()
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        deadline = time.monotonic() + 30  # the workers die with the group: wait for them
        while _group_alive(self.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.02)

    def stop(self) -> None:
        self.up.clear()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()  # gunicorn's master stops its workers gracefully
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


class Client:
    """A phone: retries a write with the same key until it gets an answer."""

    def __init__(self, server: Server, figures: Figures, stop: threading.Event) -> None:
        self.server = server
        self.figures = figures
        self.stop = stop

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any, dict[str, str]]:
        """One request, retried across connection failures and 429. Gives up (status 0)
        only when stopping and the server is down."""
        data = None if body is None else json.dumps(body).encode()
        while True:
            if not self.server.up.wait(timeout=0.2):
                if self.stop.is_set() and self.server.proc and self.server.proc.poll() is not None:
                    return 0, None, {}
                continue
            req = urllib.request.Request(self.server.base + path, data=data, method=method)
            req.add_header("Content-Type", "application/json")
            if token:
                req.add_header("Authorization", f"Bearer {token}")
            for k, v in (headers or {}).items():
                req.add_header(k, v)
            self.figures.add("requests")
            try:
                with urllib.request.urlopen(req, timeout=20) as resp:
                    return resp.status, json.loads(resp.read()), dict(resp.headers)
            except urllib.error.HTTPError as err:
                try:
                    payload = err.read()
                except (OSError, http.client.HTTPException):  # cut off mid-answer: retry
                    self.figures.add("retries")
                    continue
                finally:
                    err.close()
                if err.code == 429:
                    self.figures.add("throttled")
                    self.figures.add("retries")
                    time.sleep(float(err.headers.get("Retry-After", "1")))
                    continue
                try:
                    parsed = json.loads(payload)
                except ValueError:
                    parsed = payload.decode(errors="replace")
                return err.code, parsed, dict(err.headers)
            except (OSError, ValueError, http.client.HTTPException):  # refused, reset, cut off
                self.figures.add("retries")
                time.sleep(0.02)


class Run:
    def __init__(
        self, workdir: Path, kills: int, seed: int, solo: int, racers: int, workers: int = 2,
        url: str | None = None,
    ) -> None:  # fmt: skip
        self.workdir = workdir
        self.kills = kills
        self.rng = random.Random(seed)
        self.seed = seed
        self.solo = solo
        self.racers = racers
        self.db = workdir / "data" / "schocken.sqlite3"
        self.url = url
        self.server = Server(self.db, workdir / "server.log", workers, url)
        self.figures = Figures()
        self.stop = threading.Event()
        self.client = Client(self.server, self.figures, self.stop)
        self.acked: list[tuple[int, int, dict[str, Any]]] = []  # (game, seq, body)
        self.tables: list[Table] = []
        self._lock = threading.Lock()
        self._logs = self._simulated()

    def _simulated(self) -> Iterator[dict[str, Any]]:
        from api.rules import PRESETS
        from api.rules.simulate import simulate_logs

        return simulate_logs(PRESETS["standard"], 10_000, players=PLAYERS, seed=self.seed)

    def next_plan(self) -> dict[str, Any]:
        with self._lock:
            return dict(next(self._logs))

    # ------------------------------------------------------------------ setup
    def new_table(self, n: int) -> Table:
        status, st, _ = self.client.call(
            "POST",
            "/api/v1/stammtische",
            {"name": f"Tisch {n}"},
            headers={"Idempotency-Key": f"setup-st-{n}"},
        )
        assert status == 201, st
        table = Table(st["slug"], st["token"])
        for name in PLAYERS:
            status, body, _ = self.client.call(
                "POST",
                f"/api/v1/stammtische/{table.slug}/players",
                {"name": name},
                table.token,
                {"Idempotency-Key": f"setup-{n}-{name}"},
            )
            assert status == 201, body
        return table

    def new_game(self, table: Table) -> int:
        plan = self.next_plan()
        status, game, _ = self.client.call(
            "POST",
            f"/api/v1/stammtische/{table.slug}/games",
            {"players": PLAYERS, "starter": plan["starter"]},
            table.token,
            {"Idempotency-Key": uuid.uuid4().hex},
        )
        assert status == 201, game
        table.plans[game["id"]] = list(plan["events"])
        return int(game["id"])

    # ------------------------------------------------------------------ writers
    def _record(self, table: Table, game: int, seq: int, body: dict[str, Any]) -> int:
        """Send one turn with a fresh key and the version it builds on; 0: left unsettled."""
        status, answer, headers = self.client.call(
            "POST",
            f"/api/v1/stammtische/{table.slug}/games/{game}/turns",
            body,
            table.token,
            {"Idempotency-Key": uuid.uuid4().hex, "If-Match": f'"{seq}"'},
        )
        if status == 201:
            if headers.get("Idempotent-Replayed") == "true":
                self.figures.add("replayed")
            with self._lock:
                self.acked.append((game, int(answer["seq"]), body))
            self.figures.add("acknowledged")
        elif status == 412:
            self.figures.add("conflicts")
        elif status != 0:
            self.figures.unexpected.append(f"{status} {str(answer)[:200]}")
        return status

    def solo_writer(self, table: Table) -> None:
        game = self.new_game(table)
        seq = 0
        while not self.stop.is_set():
            plan = table.plans[game]
            if seq >= len(plan):
                game, seq = self.new_game(table), 0
                continue
            status = self._record(table, game, seq, plan[seq])
            if status == 201:
                seq += 1
            elif status != 0:  # alone on its game: nobody else can have moved it on
                self.figures.unexpected.append(f"solo {game}: {status}")
                return

    def racer(self, table: Table, game: int) -> None:
        plan = table.plans[game]
        while not self.stop.is_set():
            status, state, _ = self.client.call(
                "GET", f"/api/v1/stammtische/{table.slug}/games/{game}"
            )
            if status != 200:
                continue
            seq = int(state["seq"])
            if seq >= len(plan):
                return
            if self._record(table, game, seq, plan[seq]) not in (0, 201, 412):
                return

    # ------------------------------------------------------------------ checks
    def check(self, label: str, final: bool = False) -> None:
        """Check a copy of the database (the server is down)."""
        from api.app import create_app
        from api.http.context import services

        copy = self.workdir / f"check-{label}"
        if self.url:
            config = {"DATABASE_URL": pg_copy(self.url, f"check_{label}")}
        else:
            copy.mkdir()
            for path in self.db.parent.iterdir():
                if path.is_file():  # the database and its -wal (not its -instance folder)
                    shutil.copy2(path, copy / path.name)
            config = {"STORAGE": "sqlite", "DATABASE": str(copy / self.db.name)}
        app = create_app({**config, "WRITE_RATE_PER_MINUTE": 0})
        try:
            with app.app_context():
                svc = services()
                logs = {g: svc.repo.load_log(g) for g in svc.repo.game_ids()}
                with self._lock:
                    acked = list(self.acked)
                present = check_acked(self.figures, label, acked, logs)
                check_logs(self.figures, label, self.tables, logs)
                check_deckel(self.figures, label, self.tables, svc, logs)
                check_facts(self.figures, label, svc, logs)
                check_read_model(self.figures, label, svc.repo)
                if final:
                    self.figures.present = present
                    self.figures.lost = len(acked) - present
        finally:
            app.extensions["schocken"].store.close()
            shutil.rmtree(copy, ignore_errors=True)
            if self.url:
                pg_drop(self.url, f"check_{label}")

    # ------------------------------------------------------------------ the run
    def run(self) -> Figures:
        self.db.parent.mkdir(parents=True)
        self.server.start()
        self.tables = [self.new_table(n) for n in range(self.solo + 1)]
        shared = self.tables[-1]
        shared_game = self.new_game(shared)
        threads = [
            threading.Thread(target=self.solo_writer, args=(t,), name=f"solo-{i}")
            for i, t in enumerate(self.tables[:-1])
        ] + [
            threading.Thread(target=self.racer, args=(shared, shared_game), name=f"racer-{i}")
            for i in range(self.racers)
        ]
        for th in threads:
            th.daemon = True
            th.start()
        try:
            for k in range(self.kills):
                acknowledged = self.figures.acknowledged
                time.sleep(self.rng.uniform(0.5, 1.2))
                self.figures.wait_for_more(acknowledged, WRITES_BEFORE_KILL)
                self.server.kill()
                self.figures.kills += 1
                self.check(f"kill{k + 1}")
                self.server.start()
            time.sleep(0.3)
            self.stop.set()  # writers finish the write they are on (retrying it), then stop
            for th in threads:
                th.join(timeout=60)
        finally:
            self.stop.set()
            self.server.stop()
        self.check("final", final=True)
        tokens = [t.token for t in self.tables]
        output = self.server.log.read_text(errors="replace")
        if any(token in output for token in tokens):
            self.figures.violations.append("a token appears in the server's output")
        return self.figures


def _maintenance(url: str) -> Any:
    """A connection to the server's ``postgres`` database, and the name of ``url``'s."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = str(conninfo_to_dict(url)["dbname"])
    return psycopg.connect(make_conninfo(url, dbname="postgres"), autocommit=True), name


def pg_copy(url: str, suffix: str) -> str:
    """A copy of the PostgreSQL database ``url`` (``CREATE DATABASE … TEMPLATE``; the killed
    server's sessions are ended first); its conninfo."""
    from psycopg.conninfo import make_conninfo

    conn, name = _maintenance(url)
    with conn:
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [name]
        )
        conn.execute(f'CREATE DATABASE "{name}_{suffix}" TEMPLATE "{name}"')
    return make_conninfo(url, dbname=f"{name}_{suffix}")


def pg_drop(url: str, suffix: str) -> None:
    conn, name = _maintenance(url)
    with conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}_{suffix}" WITH (FORCE)')


def run(
    kills: int = 5, seed: int = 1, solo: int = 16, racers: int = 4, workers: int = 2,
    database_url: str | None = None,
) -> dict[str, Any]:  # fmt: skip
    """The check on a temporary SQLite file, or on the empty PostgreSQL ``database_url``."""
    workdir = Path(tempfile.mkdtemp(prefix="schocken-crash-"))
    started = time.monotonic()
    try:
        figures = Run(workdir, kills, seed, solo, racers, workers, database_url).run()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result = figures.to_dict()
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--solo", type=int, default=16, help="threads with a game each")
    parser.add_argument("--racers", type=int, default=4, help="threads on one shared game")
    parser.add_argument("--workers", type=int, default=2, help="server worker processes")
    parser.add_argument("--database-url", help="an empty PostgreSQL database instead of SQLite")
    args = parser.parse_args(argv)
    result = run(args.kills, args.seed, args.solo, args.racers, args.workers, args.database_url)
    print(json.dumps(result, indent=1, ensure_ascii=False))
    ok = not result["violations"] and not result["unexpected"] and result["lost"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
