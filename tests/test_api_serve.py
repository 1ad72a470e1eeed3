"""`schocken serve`: waitress with the SQLite file; every accepted entry survives a kill -9."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(base, method, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def serve(db: Path, port: int) -> subprocess.Popen:
    log = db.parent.parent / f"serve-{time.monotonic_ns()}.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--db", str(db)],
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if call(f"http://127.0.0.1:{port}", "GET", "/api/v1/health")[0] == 200:
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    proc.wait()
    raise AssertionError(log.read_text())


def test_the_server_keeps_every_accepted_entry_across_a_hard_kill(tmp_path):
    db = tmp_path / "data" / "schocken.sqlite3"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = serve(db, port)
    try:
        status, st = call(base, "POST", "/api/v1/stammtische", {"name": "Zur Post"})
        assert status == 201
        token = st["token"]
        for name in ("Anna", "Bert"):
            assert (
                call(base, "POST", "/api/v1/stammtische/zur-post/players", {"name": name}, token)[0]
                == 201
            )
        status, game = call(
            base, "POST", "/api/v1/stammtische/zur-post/games",
            {"players": ["Anna", "Bert"], "starter": "Anna"}, token,
        )  # fmt: skip
        url = f"/api/v1/stammtische/zur-post/games/{game['id']}"
        for body in (
            {"player": "Anna", "dice": [1, 1, 4], "throws": 2, "hand": False},
            {"player": "Bert", "dice": [6, 3, 2], "throws": 1},
        ):
            assert call(base, "POST", url + "/turns", body, token)[0] == 201
        status, before = call(base, "GET", url)
        assert before["outcome"]["state"]["stacks"]["Bert"] == 4
        with urllib.request.urlopen(base + "/docs", timeout=10) as docs:
            assert docs.status == 200 and b"swagger-ui" in docs.read()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    assert db.exists()
    proc = serve(db, port)
    try:
        status, after = call(base, "GET", url)
        assert status == 200 and after == before
        status, _ = call(
            base, "POST", url + "/turns", {"player": "Bert", "dice": [1, 1, 1], "throws": 1}, token
        )
        assert status == 201
    finally:
        proc.terminate()
        proc.wait(timeout=10)
