"""`schocken serve`: gunicorn worker processes on one SQLite file.

Every accepted entry survives a kill -9 of the whole server; and nothing correctness depends on
lives in one process's memory: two servers (two processes, two ports) on one database file
stand for the two workers a request may land on, so each check below is sure to cross
processes: two phones on one game, an idempotent retry, a game moved on by the other process,
a Stammtisch made private there, the rate limit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.bench.loadgen import free_port

ROOT = Path(__file__).resolve().parents[1]
TURNS = [
    {"player": "Anna", "dice": [1, 1, 4], "throws": 2, "hand": False},
    {"player": "Bert", "dice": [6, 3, 2], "throws": 1},
]


def call(base, method, path, body=None, token=None):
    """(status, parsed body); a new connection per call."""
    return request(base, method, path, body, token)[:2]


def serve(db: Path, port: int) -> subprocess.Popen:
    """``schocken serve`` on ``db`` and ``port`` with its defaults, once it answers."""
    log = db.parent.parent / f"serve-{time.monotonic_ns()}.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--db", str(db)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if call(f"http://127.0.0.1:{port}", "GET", "/api/v1/health")[0] == 200:
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    proc.wait()
    raise AssertionError(log.read_text())


def request(base, method, path, body=None, token=None, headers=None):
    """(status, parsed body, response headers); a new connection per call."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    for name, value in (headers or {}).items():
        req.add_header(name, value)
    try:
        with urllib.request.urlopen(req, timeout=20) as resp:
            return resp.status, json.loads(resp.read()), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read()), dict(err.headers)


class Server:
    """``schocken serve`` in a process group of its own (master and workers)."""

    def __init__(
        self,
        db: Path,
        workers: int,
        env: dict[str, str] | None = None,
        url: str | None = None,
        limit_files: int | tuple[int, int] | None = None,
        options: tuple[str, ...] = (),
        background: bool = True,
    ) -> None:
        """On the SQLite file ``db``, or on the PostgreSQL database ``url`` (its log beside
        ``db`` all the same); ``limit_files``: the open-files limit of the server's processes
        (soft and hard: one number for both); ``options``: more of ``schocken serve``;
        ``background=False``: without the statistics refresher and the webhook sender (two
        processes fewer to start, for a test that needs neither)."""
        self.db, self.workers, self.env, self.url = db, workers, env, url
        self.limit_files = limit_files
        self.options = options if background else (*options, "--no-background")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = db.parent.parent / f"serve-{self.port}.log"
        self.start()

    def start(self) -> None:
        """Start it (again, after a kill or stop: on the same port, database and settings),
        and wait until it answers."""
        db, url = self.db, self.url
        with open(self.log, "a") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "api.cli", "serve", "--port", str(self.port)]
                + (["--database-url", url] if url else ["--db", str(db)])
                + ["--workers", str(self.workers), *self.options],
                cwd=ROOT,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, "SCHOCKEN_STORAGE": "sqlite", **(self.env or {})},
                start_new_session=True,
                preexec_fn=self._limit,  # noqa: PLW1509 - only setrlimit, before exec
            )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if request(self.base, "GET", "/api/v1/health")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        self.kill()
        raise AssertionError(self.log.read_text())

    def _limit(self) -> None:
        if self.limit_files is not None:
            import resource

            limit = self.limit_files
            resource.setrlimit(
                resource.RLIMIT_NOFILE, limit if isinstance(limit, tuple) else (limit, limit)
            )

    def revive(self) -> None:
        """Started again if it is down: a module's server after a test that killed it and
        failed before it started it again."""
        if self.proc.poll() is not None:
            self.start()

    def kill(self) -> None:
        """SIGKILL to master and workers at once."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM: gunicorn stops its workers gracefully."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def served(
    db: Path, workers: int, env: dict[str, str] | None = None, **kw: Any
) -> Iterator[Server]:
    """A fixture's body (``yield from served(…)``): :class:`Server` on ``db`` (``kw``: its
    other settings), stopped after."""
    server = Server(db, workers, env, **kw)
    try:
        yield server
    finally:
        server.stop()


def served_pair(
    db: Path, workers: int, env: dict[str, str] | None = None, **kw: Any
) -> Iterator[tuple[Server, Server]]:
    """A fixture's body: two servers on one database file (requests to each run in processes
    of their own; ``kw``: their other settings), stopped after."""
    a = Server(db, workers, env, **kw)
    try:
        b = Server(db, workers, env, **kw)
    except BaseException:
        a.stop()
        raise
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


class Tisch:
    """A Stammtisch with Anna and Bert, and a game of them, made through ``base``; ``plan``:
    the turns of a simulated game of theirs (the game starts with Anna)."""

    def __init__(self, base: str) -> None:
        from api.rules import PRESETS
        from api.rules.simulate import simulate_logs

        logs = simulate_logs(PRESETS["standard"], 50, players=["Anna", "Bert"], seed=3)
        self.plan = next(log for log in logs if log["starter"] == "Anna")["events"]
        status, st, _ = request(
            base, "POST", "/api/v1/stammtische", {"name": uuid.uuid4().hex[:12]}
        )
        assert status == 201, st
        self.slug, self.token = st["slug"], st["token"]
        self.url = f"/api/v1/stammtische/{self.slug}"
        for name in ("Anna", "Bert"):
            assert (
                request(base, "POST", self.url + "/players", {"name": name}, self.token)[0] == 201
            )
        status, game, _ = request(
            base, "POST", self.url + "/games",
            {"players": ["Anna", "Bert"], "starter": "Anna"}, self.token,
        )  # fmt: skip
        assert status == 201, game
        self.game = self.url + f"/games/{game['id']}"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """Two servers on one SQLite file: requests to ``a`` and to ``b`` run in two processes.
    The rate limit: 20 writes at once per token, then one a second."""
    db = tmp_path_factory.mktemp("pair") / "data" / "schocken.sqlite3"
    env = {"SCHOCKEN_WRITE_RATE_PER_MINUTE": "60", "SCHOCKEN_WRITE_RATE_BURST": "20"}
    for a, b in served_pair(db, 1, env, background=False):
        yield a.base, b.base


def test_the_server_keeps_every_accepted_entry_across_a_hard_kill(tmp_path):
    db = tmp_path / "data" / "schocken.sqlite3"
    server = Server(db, workers=2)
    try:
        base = server.base
        tisch = Tisch(base)
        for body in TURNS:
            assert request(base, "POST", tisch.game + "/turns", body, tisch.token)[0] == 201
        status, before, _ = request(base, "GET", tisch.game)
        assert before["outcome"]["state"]["stacks"]["Bert"] == 4
        with urllib.request.urlopen(base + "/docs", timeout=10) as docs:
            assert docs.status == 200 and b"swagger-ui" in docs.read()
    finally:
        server.kill()
    assert db.exists()
    server = Server(db, workers=2)
    try:
        status, after, _ = request(server.base, "GET", tisch.game)
        assert status == 200 and after == before
        body = {"player": "Bert", "dice": [1, 1, 1], "throws": 1}
        assert request(server.base, "POST", tisch.game + "/turns", body, tisch.token)[0] == 201
    finally:
        server.stop()
    assert server.proc.returncode == 0  # SIGTERM: a graceful stop


def test_a_game_moved_on_by_the_other_process_is_replayed_not_refused(pair):
    a, b = pair
    tisch = Tisch(a)
    assert request(a, "GET", tisch.game)[1]["seq"] == 0  # a caches the game's state at 0
    assert request(b, "POST", tisch.game + "/turns", TURNS[0], tisch.token)[0] == 201
    one_turn = request(b, "GET", tisch.game)[1]
    status, answer, _ = request(a, "POST", tisch.game + "/turns", TURNS[1], tisch.token)
    assert status == 201 and answer["seq"] == 2, answer  # not 409 "gleichzeitig geändert"
    assert request(b, "POST", tisch.game + "/undo", {}, tisch.token)[0] == 201
    game = request(a, "GET", tisch.game)[1]
    assert game["seq"] == 3 and game["outcome"] == one_turn["outcome"]


def both_at_once(send: Any, bases: tuple[str, str]) -> list[Any]:
    """``send(base)`` for both servers from two threads released at one moment."""
    barrier = threading.Barrier(2)
    answers: list[Any] = []

    def phone(base: str) -> None:
        barrier.wait()
        answers.append(send(base))

    threads = [threading.Thread(target=phone, args=(base,)) for base in bases]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return answers


def one_of_two_phones_wins(tisch: Tisch, pair: tuple[str, str], turns: int) -> None:
    """``turns`` times, two phones send the game's next turn on the version they read, at
    once, one through each base: one 201, one 412, and the game is one entry further."""
    a, b = pair
    for _ in range(turns):
        seq = request(b, "GET", tisch.game)[1]["seq"]

        def send(base: str, seq: int = seq) -> int:
            headers = {"If-Match": f'"{seq}"', "Idempotency-Key": uuid.uuid4().hex}
            body = tisch.plan[seq]
            return request(base, "POST", tisch.game + "/turns", body, tisch.token, headers)[0]

        assert sorted(both_at_once(send, pair)) == [201, 412]
        assert request(a, "GET", tisch.game)[1]["seq"] == seq + 1


def test_two_phones_on_one_game_in_two_processes_one_201_one_412(pair):
    one_of_two_phones_wins(Tisch(pair[0]), pair, 4)


def test_an_idempotent_retry_on_the_other_process_gets_the_first_answer(pair):
    a, b = pair
    tisch = Tisch(a)
    key = {"Idempotency-Key": uuid.uuid4().hex}
    first = request(a, "POST", tisch.game + "/turns", TURNS[0], tisch.token, key)
    again = request(b, "POST", tisch.game + "/turns", TURNS[0], tisch.token, key)
    assert first[0] == again[0] == 201 and first[1] == again[1]
    assert again[2].get("Idempotent-Replayed") == "true"
    # the same key sent to both at once: one records, the other waits and replays
    key = {"Idempotency-Key": uuid.uuid4().hex}
    answers = both_at_once(
        lambda base: request(base, "POST", tisch.game + "/turns", TURNS[1], tisch.token, key),
        pair,
    )
    assert [s for s, _, _ in answers] == [201, 201] and answers[0][1] == answers[1][1]
    assert sorted(h.get("Idempotent-Replayed", "-") for _, _, h in answers) == ["-", "true"]
    assert request(a, "GET", tisch.game)[1]["seq"] == 2


def test_a_stammtisch_made_private_in_one_process_is_private_in_the_other(pair):
    a, b = pair
    tisch = Tisch(a)
    assert request(b, "GET", tisch.url)[0] == 200  # b has read it while public
    assert request(a, "PATCH", tisch.url, {"private": True}, tisch.token)[0] == 200
    assert request(b, "GET", tisch.url)[0] == 404  # private: hidden


def test_the_rate_limit_holds_across_processes(pair):
    a, b = pair
    tisch = Tisch(a)  # 3 writes of its token so far
    statuses = [
        request((a, b)[i % 2], "POST", tisch.url + "/players", {"name": f"P{i}"}, tisch.token)[0]
        for i in range(30)
    ]
    granted = statuses.count(201)
    # 20 at once minus the 3 of the set-up, plus about one a second: far below 2 × 20
    assert 17 <= granted <= 17 + 5, statuses
    assert statuses.count(429) == 30 - granted
    assert {(a, b)[i % 2] for i, s in enumerate(statuses) if s == 429} == {a, b}


def children(pid: int) -> dict[int, str]:
    """The child processes of ``pid``: their command lines."""
    found = {}
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as fh:
        for child in map(int, fh.read().split()):
            with open(f"/proc/{child}/cmdline", "rb") as cmd:
                found[child] = cmd.read().replace(b"\0", b" ").decode()
    return found


def test_one_statistics_refresher_runs_beside_the_workers_and_stops_with_them(tmp_path):
    """``schocken serve`` runs one ``schocken stats refresh --watch`` of its own (the workers
    none); a finished game reaches the read model without anyone reading the statistics."""
    from api.rules import PRESETS
    from api.rules.simulate import simulate_logs
    from api.storage import SQLiteStore

    db = tmp_path / "data" / "schocken.sqlite3"
    server = Server(db, workers=2)
    try:
        refreshers = [p for p, cmd in children(server.proc.pid).items() if "stats refresh" in cmd]
        assert len(refreshers) == 1
        tisch = Tisch(server.base)
        log = next(simulate_logs(PRESETS["standard"], 1, players=["Anna", "Bert"], seed=5))
        assert request(server.base, "POST", tisch.url + "/imports", log, tisch.token)[0] == 201
        store = SQLiteStore(db)
        repo = store.open_repository()
        deadline = time.monotonic() + 15
        while repo.stale_stats() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert repo.stale_stats() == {} and repo.stats_computed()
        store.close()
    finally:
        server.stop()
    assert server.proc.returncode == 0
    assert not os.path.exists(f"/proc/{refreshers[0]}")


def test_the_token_is_taken_by_the_write_transaction_or_at_the_end_of_the_request(tmp_path):
    """A write request's token is read at its start and taken by its own write transaction;
    spent meanwhile by another request (another process), that transaction is refused; a
    request that writes nothing, or rolls back, has it taken at its end."""
    from api.storage import RateLimited, SQLiteStore

    store = SQLiteStore(tmp_path / "s.sqlite3")
    a, b, c = (store.open_repository() for _ in range(3))
    try:
        now, rate = time.time(), 1 / 3600  # one token an hour: none comes back in the test
        assert a.take_token("x", now, rate, 2) == 0.0  # both see tokens
        assert b.take_token("x", now, rate, 2) == 0.0
        assert c.take_token("x", now, rate, 2) == 0.0
        with b.transaction():
            pass  # b's write takes one
        with a.transaction():
            pass  # a's the other
        with pytest.raises(RateLimited) as refused, c.transaction():
            pass
        assert refused.value.wait > 3000
        for repo in (a, b, c):
            repo.close()
            assert repo.take_token("x", now, rate, 2) > 0  # empty for everyone
            repo.close()
        assert a.take_token("y", now, rate, 3) == 0.0
        a.close()  # wrote nothing: its token is taken now (2 left)
        assert b.take_token("y", now, rate, 3) == 0.0
        with pytest.raises(RuntimeError), b.transaction():
            raise RuntimeError("took one, rolled back")
        b.close()  # so it is taken now (1 left)
        assert c.take_token("y", now, rate, 3) == 0.0
        with c.transaction():
            pass  # the last one
        c.close()
        assert a.take_token("y", now, rate, 3) > 0
    finally:
        store.close()
