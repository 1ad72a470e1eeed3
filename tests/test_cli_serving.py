"""The processes ``schocken serve`` keeps beside its workers (api/cli/serving.py): the
statistics refresher and the webhook sender, started, started again and stopped by gunicorn's
server hooks. Here the hooks are called as gunicorn's master calls them, on real child
processes; tests/test_api_serve.py and tests/test_webhooks_sender.py check them under a real
``schocken serve``."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from api.cli import serving
from api.storage import SQLiteStore


def until(check, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def running(pid: int) -> bool:
    """The process ``pid`` exists and has not ended (a zombie has ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def database(tmp_path: Path) -> str:
    db = tmp_path / "served.sqlite3"
    SQLiteStore(db).close()  # created and migrated, as `schocken serve` does before it forks
    return str(db)


def test_the_hooks_start_the_refresher_and_the_sender_and_stop_them_on_exit(database):
    background = serving.Background(serving.refresher(database, 0.2), serving.sender(database))
    hooks = background.hooks()
    assert set(hooks) == {"when_ready", "on_reload", "on_exit"}
    hooks["when_ready"](None)
    try:
        procs = [child.proc for child in background.children]
        assert all(p is not None and p.poll() is None for p in procs)
        lines = [" ".join(p.args) for p in procs]  # type: ignore[union-attr]
        assert "stats refresh --watch --interval 0.2" in lines[0]
        assert "webhooks send --watch" in lines[1]
        assert all(f"--parent {os.getpid()} --db {database}" in line for line in lines)
    finally:
        hooks["on_exit"](None)
    assert all(p.poll() is not None for p in procs)  # type: ignore[union-attr]
    assert background.watcher is not None and not background.watcher.is_alive()


def test_a_child_that_dies_is_started_again_but_not_sooner_than_restart_seconds(
    database, monkeypatch
):
    monkeypatch.setattr(serving, "RESTART_SECONDS", 1.5)
    monkeypatch.setattr(serving, "CHECK_SECONDS", 0.05)
    child = serving.refresher(database, 0.2)
    background = serving.Background(child)
    background.when_ready(None)
    try:
        first, started = child.proc, child.started
        assert first is not None
        os.kill(first.pid, signal.SIGKILL)
        assert until(lambda: child.proc is not first, 30)
        assert first.poll() is not None
        # the watcher looked every 0.05 s, and waited for RESTART_SECONDS after the start
        assert child.started - started >= serving.RESTART_SECONDS
        assert child.proc is not None and running(child.proc.pid)
    finally:
        background.on_exit(None)
    assert child.proc is None


def test_a_reload_starts_the_children_anew(database):
    child = serving.sender(database)
    background = serving.Background(child)
    background.when_ready(None)
    try:
        before = child.proc
        assert before is not None
        background.on_reload(None)  # SIGHUP: new workers, and new children with them
        assert before.poll() is not None
        assert child.proc is not None and child.proc is not before and running(child.proc.pid)
    finally:
        background.on_exit(None)


def test_the_database_url_reaches_a_child_in_its_environment_not_on_its_command_line(pg_url):
    child = serving.refresher(None, 0.5, pg_url)
    child.start()
    try:
        assert child.proc is not None
        proc = Path(f"/proc/{child.proc.pid}")
        assert until(lambda: (proc / "cmdline").read_bytes(), 10)  # empty until exec is done
        command = (proc / "cmdline").read_bytes().decode()
        environment = (proc / "environ").read_bytes().decode().split("\0")
        assert "stats\0refresh\0--watch" in command and pg_url not in command
        assert f"{serving.URL_VARIABLE}={pg_url}" in environment
    finally:
        child.stop()
        child.wait()


def test_without_a_database_or_interval_no_child_starts(database):
    background = serving.Background(serving.refresher(None, 1.0), serving.refresher(database, 0))
    background.when_ready(None)
    try:
        assert all(child.proc is None for child in background.children)
    finally:
        background.on_exit(None)


def test_serve_without_background_runs_only_the_workers(tmp_path):
    """``schocken serve --no-background``: the refresher and the sender run as services of
    their own (api/cli/HOSTING.md), the server starts neither."""
    from test_api_serve import Server, children

    server = Server(tmp_path / "data" / "web.sqlite3", 1, options=("--no-background",))
    try:
        commands = children(server.proc.pid).values()
        assert commands and not [
            c for c in commands if "stats refresh" in c or "webhooks send" in c
        ]
    finally:
        server.stop()
    assert server.proc.returncode == 0
