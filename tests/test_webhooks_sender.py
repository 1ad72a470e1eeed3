"""A real ``schocken webhooks send --watch`` killed with SIGKILL while a receiver holds one
request resumes from the outbox: the held delivery (never answered) comes again after its
lease, with the same ``webhook-id``; every delivery the receiver answered is never sent twice.
On SQLite and PostgreSQL; on SQLite a second sender of the same file steps back."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections import Counter
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
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                message = self.headers["webhook-id"]
                receiver.got.append(message)
                if message == hold and not receiver.release.is_set():
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


def sender(where: list[str], *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "api.cli", "webhooks", "send", *where, *extra]
    quiet = subprocess.PIPE if "--watch" not in extra else None
    return subprocess.Popen(command, cwd=ROOT, stderr=quiet, text=True)


def wait_for(check, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.parametrize("storage", ["sqlite", "postgresql"])
def test_a_killed_sender_resumes_from_the_outbox_without_duplicates(storage, tmp_path, request):
    if storage == "sqlite":
        config = {"DATABASE": str(tmp_path / "hooks.sqlite3")}
        where = ["--db", config["DATABASE"]]
    else:
        url = request.getfixturevalue("pg_url")
        config, where = {"DATABASE_URL": url}, ["--database-url", url]
    app = create_app({**config, "TESTING": True})
    try:
        table = make_table(app.test_client(), "Zum Anker")
        table.add_players(["Anna", "Bert"])
        made = table.post("/webhooks", {"url": "http://127.0.0.1:1/", "kinds": ["game_started",
                                                                              "turn_recorded"]})  # fmt: skip
        receiver = HoldingReceiver(hold=f"{made.json['id']}-3-0")
        table.patch(f"/webhooks/{made.json['id']}", {"url": receiver.url})
        game = table.start(["Anna", "Bert"], starter="Anna")
        for player in ("Anna", "Bert", "Anna", "Bert"):  # positions 2-5
            assert table.turn(game, player, [2, 3, 5], 1).status_code == 201

        def states() -> Counter:
            r = table.get(f"/webhooks/{made.json['id']}/deliveries", headers=table.auth)
            return Counter(d["state"] for d in r.json["items"])

        watch = ["--watch", "--interval", "0.1", "--lease", "2"]
        first = sender(where, *watch)
        try:
            wait_for(lambda: receiver.held.is_set() and states()["delivered"] == 4)
            if storage == "sqlite":  # one sender per file: another one steps back
                other = sender(where)
                _, said = other.communicate(timeout=30)
                assert other.returncode == 2 and "anderer Sender" in said
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(10)
        receiver.release.set()  # the answer goes nowhere: the kill came before it
        assert states() == Counter({"delivered": 4, "pending": 1})

        second = sender(where, *watch)
        try:
            wait_for(lambda: states()["delivered"] == 5)
        finally:
            second.terminate()
            assert second.wait(10) == 0
        counts = Counter(receiver.got)
        assert counts.pop(f"{made.json['id']}-3-0") == 2  # never answered: sent again
        assert sorted(counts.values()) == [1, 1, 1, 1]  # answered: never again
        log = table.get(f"/webhooks/{made.json['id']}/deliveries", headers=table.auth).json
        held = next(d for d in log["items"] if d["position"] == 3)
        assert held["attempts"] == 2 and held["last_status"] == 204
        receiver.close()
    finally:
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
