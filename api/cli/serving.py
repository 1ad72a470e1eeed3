"""``schocken serve`` runs the app in gunicorn: a pre-fork server, N worker processes with
threads each (``gthread``), all on one port.

The master process makes the app once before forking (it creates and migrates the database
and writes the instance folder's secret key and admin token, so that the workers do not race
for them) and closes its store again: no database connection crosses a fork. Each worker makes
its own app (``preload_app`` off) with its own connections. Nothing that correctness depends on
lives in one worker's memory (see api/domain/cache.py, api/http/idempotency.py,
api/http/ratelimit.py). SIGTERM (or Ctrl-C) stops gracefully: the workers finish the requests
they are on (up to ``GRACEFUL_SECONDS``), then exit.
"""

from __future__ import annotations

from typing import Any

from gunicorn.app.base import BaseApplication

#: how long a stopping worker may finish the requests it is on
GRACEFUL_SECONDS = 10


class Server(BaseApplication):  # type: ignore[misc]  # gunicorn has no type information
    """The app factory ``create_app(config)`` under gunicorn with the given settings."""

    def __init__(self, config: dict[str, Any], options: dict[str, Any]) -> None:
        self.app_config = config
        self.options = options
        super().__init__()

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


def run(config: dict[str, Any], host: str, port: int, workers: int, threads: int) -> None:
    """Serve until SIGTERM / SIGINT."""
    options = {
        "bind": f"{host}:{port}",
        "workers": workers,
        "threads": threads,
        "worker_class": "gthread",
        "graceful_timeout": GRACEFUL_SECONDS,
        "proc_name": "schocken",
        "loglevel": "warning",
    }
    Server(config, options).run()
