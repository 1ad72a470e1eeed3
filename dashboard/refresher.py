"""The statistics refresher of a server process: a daemon thread that, every
``STATS_REFRESH_SECONDS`` (default 0.5; 0: none, the default under ``TESTING``), refreshes the
Stammtische marked stale (:func:`dashboard.readmodel.refresh`). It only tries the
one-refresher lock: when another process (or a reader) is refreshing, it leaves the work to
it and looks again at its next tick. It starts with the first request of each process (so a
pre-forking server starts one per worker, none in the master). Closing the store stops it
(and waits for its round to end) before any connection is closed.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from flask import Flask

from .readmodel import refresh

log = logging.getLogger(__name__)
EXTENSION = "schocken_stats_refresher"
#: consecutive failures after which a refresher gives up (its store is gone, say)
MAX_FAILURES = 5


def run_once(store: Any) -> bool:
    """Refresh what is stale if this thread can take the lock; True when it did work."""
    repo = store.repository()
    try:
        if not repo.stale_stats():
            return False
        done = refresh(repo, wait=False)
        return bool(done and done.stammtische)
    finally:
        repo.close()


def adopt(store: Any) -> None:
    """Mark the Stammtische the read model has never seen (a database converted from the
    retired store, say) stale, so that the refresher computes them."""
    repo = store.repository()
    try:
        never = set(repo.stammtisch_ids()) - repo.stats_computed()
        if never:
            repo.mark_stats_stale(never)
    finally:
        repo.close()


def _loop(store: Any, interval: float) -> None:
    failures = 0
    try:
        adopt(store)
    except NotImplementedError:
        return  # a store without a read model (the retired DuckDB store)
    except Exception:  # noqa: BLE001 - the loop below reports what goes on failing
        log.exception("statistics: marking the never computed Stammtische failed")
    stopping: threading.Event = store.background.stopping
    while failures < MAX_FAILURES and not stopping.wait(interval):
        try:
            run_once(store)
            failures = 0
        except Exception:  # noqa: BLE001 - a refresher must not die of one bad moment
            failures += 1
            log.exception("statistics refresh failed (%d of %d)", failures, MAX_FAILURES)


def start(app: Flask) -> threading.Thread | None:
    """This process's refresher for ``app`` (started once per process)."""
    interval = float(app.config.get("STATS_REFRESH_SECONDS", 0 if app.testing else 0.5))
    state: dict[int, threading.Thread] = app.extensions[EXTENSION]
    if interval <= 0 or os.getpid() in state:
        return state.get(os.getpid())
    with app.extensions[EXTENSION + ".lock"]:
        if os.getpid() not in state:
            store = app.extensions["schocken"].store
            state[os.getpid()] = store.background.start(
                lambda: _loop(store, interval), "stats-refresher"
            )
    return state[os.getpid()]


def init_app(app: Flask) -> None:
    app.extensions[EXTENSION] = {}
    app.extensions[EXTENSION + ".lock"] = threading.Lock()
    app.before_request(lambda: (start(app), None)[1])
