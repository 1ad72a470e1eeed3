"""``schocken serve`` runs the app in gunicorn: a pre-fork server, N worker processes with
threads each (``gthread``), all on one port.

The master process makes the app once before forking (it creates and migrates the database
and writes the instance folder's secret key and admin token, so that the workers do not race
for them) and closes its store again: no database connection crosses a fork. Each worker makes
its own app (``preload_app`` off) with its own connections. Nothing that correctness depends on
lives in one worker's memory (see api/domain/cache.py, api/http/idempotency.py,
api/http/ratelimit.py). SIGTERM (or Ctrl-C) stops gracefully: the workers finish the requests
they are on (up to ``GRACEFUL_SECONDS``), then exit.

Beside the workers the master runs one statistics refresher, ``schocken stats refresh --watch``
(dashboard/refresher.py), a process of its own: the workers run none (a round of statistics in
a worker held its interpreter lock for tens of ms while requests waited; two workers took
turns at the one-refresher lock). The master starts it, starts it again should it end (at
most once per :data:`RESTART_SECONDS`), and stops it when it stops; the refresher also ends
by itself when the master is gone (a SIGKILL).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter

#: how long a stopping worker may finish the requests it is on
GRACEFUL_SECONDS = 10
#: the statistics refresher is started again at most this often
RESTART_SECONDS = 10.0


class Refresher:
    """The master's child ``schocken stats refresh --watch`` on the server's database."""

    def __init__(self, database: str | None, interval: float) -> None:
        self.database, self.interval = database, interval
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = 0.0

    def start(self) -> None:
        if not self.database or self.interval <= 0:
            return
        self.started = time.monotonic()
        command = [sys.executable, "-m", "api.cli", "stats", "refresh", "--watch"]
        command += ["--db", self.database, "--interval", str(self.interval)]
        self.proc = subprocess.Popen([*command, "--parent", str(os.getpid())])

    def check(self) -> None:
        """Start it again if it ended (gunicorn's reaping of children may have collected it:
        then ``poll`` finds it gone as well)."""
        if self.proc is not None and self.proc.poll() is not None:
            if time.monotonic() - self.started >= RESTART_SECONDS:
                self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()

    def wait(self) -> None:
        if self.proc is not None:
            try:
                self.proc.wait(GRACEFUL_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class ServerArbiter(Arbiter):  # type: ignore[misc]  # gunicorn has no type information
    """gunicorn's master, which also keeps the statistics refresher running."""

    refresher: Refresher

    def start(self) -> None:
        super().start()
        self.refresher.start()

    def manage_workers(self) -> None:
        super().manage_workers()
        self.refresher.check()

    def halt(self, reason: Any = None, exit_status: int = 0) -> None:
        self.refresher.stop()  # it ends its round while the workers finish their requests
        try:
            super().halt(reason, exit_status)
        finally:
            self.refresher.wait()


class Server(BaseApplication):  # type: ignore[misc]  # gunicorn has no type information
    """The app factory ``create_app(config)`` under gunicorn with the given settings."""

    def __init__(
        self, config: dict[str, Any], options: dict[str, Any], refresher: Refresher | None = None
    ) -> None:
        self.app_config = config
        self.options = options
        self.refresher = refresher or Refresher(None, 0)
        super().__init__()

    def run(self) -> None:
        arbiter = ServerArbiter(self)
        arbiter.refresher = self.refresher
        arbiter.run()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from ..app import create_app

        app = create_app(self.app_config)
        settle_garbage_collector()
        return app


def settle_garbage_collector() -> None:
    """A long-running server: what exists after start-up (modules, the app, the caches'
    tables) lives as long as the process, so the collector stops walking it, and it runs
    less often (a full collection of a busy server stops every thread for tens of ms)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


def run(
    config: dict[str, Any], host: str, port: int, workers: int, threads: int, refresh: float = 0
) -> None:
    """Serve until SIGTERM / SIGINT, with a statistics refresher every ``refresh`` seconds (0:
    none) in a process of its own; the workers run none."""
    options = {
        "bind": f"{host}:{port}",
        "workers": workers,
        "threads": threads,
        "worker_class": "gthread",
        "graceful_timeout": GRACEFUL_SECONDS,
        "proc_name": "schocken",
        "loglevel": "warning",
    }
    refresher = Refresher(config.get("DATABASE"), refresh)
    Server({**config, "STATS_REFRESH_SECONDS": 0}, options, refresher).run()
