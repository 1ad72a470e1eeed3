"""A real ``schocken webhooks send --watch`` killed with SIGKILL while a receiver holds one
request resumes from the outbox: the held delivery (never answered) comes again after its
short lease, with the same ``webhook-id``; every delivery the receiver answered is never sent
twice, and nothing was claimed that had not started. On SQLite and PostgreSQL; on SQLite a
second sender of the same file steps back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import make_table

from api.app import create_app

ROOT = Path(__file__).resolve().parents[1]


class HoldingReceiver:
    """Answers 204 at once, except the request with the id ``hold``: that one waits until
    :attr:`release` is set (its answer then goes to a sender that is gone)."""

    def __init__(self, hold: str) -> None:
        self.got: list[str] = []
        self.held, self.release = threading.Event(), threading.Event()
        self.hold_all = False
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                message = self.headers["webhook-id"]
                receiver.got.append(message)
                if (message == hold or receiver.hold_all) and not receiver.release.is_set():
                    receiver.held.set()
                    receiver.release.wait(30)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def sender(where: list[str], env: dict[str, str], *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "api.cli", "webhooks", "send", *where, *extra]
    quiet = subprocess.PIPE if "--watch" not in extra else None
    return subprocess.Popen(command, cwd=ROOT, stderr=quiet, text=True, env=env)


def wait_for(check, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def setup(storage, tmp_path, request, hold="", turns=4):
    """An app on ``storage`` with a Stammtisch whose webhook (every kind of a turn) points to a
    :class:`HoldingReceiver`, and ``turns`` turns recorded (positions 2…); the sender's
    arguments for that database and its environment (loopback allowed on PostgreSQL too)."""
    env = {**os.environ, "SCHOCKEN_WEBHOOK_LOOPBACK": "1"}
    if storage == "sqlite":
        config = {"DATABASE": str(tmp_path / "hooks.sqlite3")}
        where = ["--db", config["DATABASE"]]
    else:
        url = request.getfixturevalue("pg_url")
        config, where = {"DATABASE_URL": url}, ["--database-url", url]
    app = create_app({**config, "TESTING": True})
    table = make_table(app.test_client(), "Zum Anker")
    table.add_players(["Anna", "Bert"])
    made = table.post("/webhooks", {"url": "http://127.0.0.1:1/", "kinds": ["game_started",
                                                                          "turn_recorded"]})  # fmt: skip
    receiver = HoldingReceiver(hold=hold.format(id=made.json["id"]))
    table.patch(f"/webhooks/{made.json['id']}", {"url": receiver.url})
    game = table.start(["Anna", "Bert"], starter="Anna")
    for player in (["Anna", "Bert"] * turns)[:turns]:
        assert table.turn(game, player, [2, 3, 5], 1).status_code == 201
    return app, table, made.json["id"], receiver, where, env


@pytest.mark.parametrize("storage", ["sqlite", "postgresql"])
def test_a_killed_sender_resumes_from_the_outbox_without_duplicates(storage, tmp_path, request):
    """One attempt in flight per webhook: while the receiver holds position 3, positions 4 and
    5 wait (not claimed); killed then, only position 3 is sent again, after the short lease."""
    app, table, hook, receiver, where, env = setup(storage, tmp_path, request, "{id}-3-0")
    try:

        def states() -> Counter:
            r = table.get(f"/webhooks/{hook}/deliveries", headers=table.auth)
            return Counter((d["state"], d["attempts"]) for d in r.json["items"])

        watch = ["--watch", "--interval", "0.1", "--timeout", "4", "--lease", "5"]
        first = sender(where, env, *watch)
        try:
            # killed at once: its attempt's 4 s deadline must not pass first (a busy machine
            # took longer than that to start the other sender below, here before)
            wait_for(lambda: receiver.held.is_set())
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(10)
        receiver.release.set()  # the answer goes nowhere: the kill came before it
        # 1 and 2 delivered, 3 in flight when killed, 4 and 5 never claimed
        assert states() == Counter({("delivered", 1): 2, ("pending", 1): 1, ("pending", 0): 2})

        second = sender(where, env, *watch)
        try:
            wait_for(lambda: states()[("delivered", 1)] == 4)
            if storage == "sqlite":  # one sender per file: another one steps back
                other = sender(where, env)
                _, said = other.communicate(timeout=30)
                assert other.returncode == 2 and "anderer Sender" in said
        finally:
            second.terminate()
            assert second.wait(10) == 0
        counts = Counter(receiver.got)
        assert counts.pop(f"{hook}-3-0") == 2  # never answered: sent again
        assert sorted(counts.values()) == [1, 1, 1, 1]  # answered: never again
        log = table.get(f"/webhooks/{hook}/deliveries", headers=table.auth).json
        held = next(d for d in log["items"] if d["position"] == 3)
        assert held["attempts"] == 2 and held["last_status"] == 204
        receiver.close()
    finally:
        app.extensions["schocken"].store.close()


@pytest.mark.parametrize("storage", ["sqlite", "postgresql"])
def test_a_killed_sender_left_nothing_claimed_that_it_had_not_started(storage, tmp_path, request):
    """The receiver holds every request: the sender has one attempt in flight (one per
    webhook) and claimed nothing else. Killed, that one is due again within the attempt's
    deadline and a margin (15 s), not after a minute; the rest is due at once."""
    app, table, hook, receiver, where, env = setup(storage, tmp_path, request, "{id}", turns=7)
    receiver.hold_all = True
    try:
        first = sender(where, env, "--watch", "--interval", "0.1")
        try:
            wait_for(lambda: receiver.held.is_set())
            time.sleep(0.5)  # a sender with a batch would have claimed more by now
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(10)
        items = table.get(f"/webhooks/{hook}/deliveries", headers=table.auth).json["items"]
        claimed = [d for d in items if d["attempts"]]
        assert len(items) == 8 and len(claimed) == 1 == len(receiver.got)
        (held,) = claimed
        lease = datetime.fromisoformat(held["next_attempt_at"]) - datetime.fromisoformat(
            held["last_attempt_at"]
        )
        assert lease.total_seconds() <= 15  # sender.TIMEOUT + sender.LEASE_MARGIN
        due = [datetime.fromisoformat(d["next_attempt_at"]) for d in items if not d["attempts"]]
        assert max(due) <= datetime.now(UTC)  # due now: the next sender takes them at once
    finally:
        receiver.close()
        app.extensions["schocken"].store.close()


def test_send_once_reports_and_ends(tmp_path):
    db = str(tmp_path / "once.sqlite3")
    app = create_app({"DATABASE": db, "TESTING": True})
    app.extensions["schocken"].store.close()
    done = subprocess.run(
        [sys.executable, "-m", "api.cli", "webhooks", "send", "--db", db],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and "0 Zustellung(en) versucht." in done.stderr


def test_one_sender_runs_beside_the_workers_and_stops_with_them(tmp_path):
    from test_api_serve import Server, children

    server = Server(tmp_path / "data" / "served.sqlite3", workers=1)
    try:
        senders = [p for p, cmd in children(server.proc.pid).items() if "webhooks send" in cmd]
        assert len(senders) == 1
    finally:
        server.stop()
    assert server.proc.returncode == 0
    wait_for(lambda: not Path(f"/proc/{senders[0]}").exists(), 15)
