"""The statistics refresher: every ``STATS_REFRESH_SECONDS`` (default 1; 0: none, the default
under ``TESTING``) it refreshes the Stammtische marked stale (:func:`dashboard.readmodel.refresh`).
It only tries the one-refresher lock: when another process (or a reader) is refreshing, it
leaves the work to it and looks again at its next tick.

Two ways to run it:

* ``schocken stats refresh --watch`` (:func:`watch`): a process of its own. ``schocken serve``
  starts one beside its workers (api/cli/serving.py) and stops it with them: a round of
  statistics (DuckDB plans and runs ten queries: tens of ms of CPU) then never holds a
  worker's interpreter lock while requests wait for it, and there is one refresher per server,
  not one per worker taking turns at the lock. The process lowers its scheduling priority
  (:data:`NICE`): on a saturated machine the requests come first, the statistics a moment later
  (a read never computes: it shows what is stored, marked stale, until this catches up).
* a daemon thread of an app outside ``schocken serve`` (:func:`start`, e.g. ``flask run``): it
  starts with the first request of each process. Closing the store stops it (and waits for its
  round to end) before any connection is closed.

After a round that did work, the next one waits at least :data:`PAUSE_FACTOR` times as long as
that round took, and :data:`CPU_PAUSE_FACTOR` times the CPU it used (:func:`pause_after`): on a
busy server a refresh round costs more and more rounds find work, and this keeps the
refresher's share of the machine bounded (a finished game then shows in the read model a little
later; a read of it never waits for the refresher). The CPU counts, not only the time: DuckDB
runs a round's queries on two threads, so a round of 0.1 s can use 0.2 s of CPU, and on a
saturated machine (where this process yields to the requests) the CPU is what the requests
lose. It is the process's CPU: in a process of its own (``--watch``) the round's; in a thread
of an app (:func:`start`) it also counts the requests' meanwhile, which only lengthens the
pause.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from flask import Flask

from api.storage import StorageUnavailable

from .readmodel import refresh

if TYPE_CHECKING:
    from api.storage import Store

log = logging.getLogger(__name__)
EXTENSION = "schocken_stats_refresher"
#: consecutive failures after which a refresher gives up (its store is gone, say)
MAX_FAILURES = 5
#: seconds between rounds, unless configured (``STATS_REFRESH_SECONDS``)
INTERVAL = 1.0
#: after a round that did work, the next waits at least this many times as long as it took
PAUSE_FACTOR = 4.0
#: … and this many times the CPU it used: the refresher's share of a core stays at most
#: 1 / (1 + 20), about 5 % (a small round, about 50 ms of CPU, still waits about 1 s)
CPU_PAUSE_FACTOR = 20.0
#: the niceness a ``--watch`` process adds to its own (background work: requests first)
NICE = 10


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


def pause_after(interval: float, worked: bool, took: float, cpu: float) -> float:
    """Seconds before the next round, after one that took ``took`` seconds and used ``cpu``
    seconds of CPU (see the module's text); a round without work: ``interval``."""
    if not worked:
        return interval
    return max(interval, PAUSE_FACTOR * took, CPU_PAUSE_FACTOR * cpu)


def _loop(store: Any, interval: float, stopping: threading.Event | None = None) -> None:
    failures = 0
    try:
        adopt(store)
    except NotImplementedError:
        return  # a store without a read model (the retired DuckDB store)
    except Exception:  # noqa: BLE001 - the loop below reports what goes on failing
        log.exception("statistics: marking the never computed Stammtische failed")
    stopping = stopping or store.background.stopping
    pause = interval
    while failures < MAX_FAILURES and not stopping.wait(pause):
        started, cpu = time.monotonic(), time.process_time()
        try:
            worked = run_once(store)
            failures = 0
        except Exception as err:  # noqa: BLE001 - a refresher must not die of one bad moment
            worked = False
            failures += 1
            log.error(  # a database out of reach: its cause in one line, no traceback
                "statistics refresh failed (%d of %d): %s", failures, MAX_FAILURES, err,
                exc_info=not isinstance(err, StorageUnavailable),
            )  # fmt: skip
        took, used = time.monotonic() - started, time.process_time() - cpu
        pause = pause_after(interval, worked, took, used)


def watch(store: Store, stopping: threading.Event, interval: float = INTERVAL) -> None:
    """``schocken stats refresh --watch``: refresh the database of ``store`` (SQLite or
    PostgreSQL; closed at the end) every ``interval`` seconds until ``stopping`` is set
    (api/cli/base.py: SIGTERM, SIGINT, the server that started it died); a round under way
    ends first."""
    try:
        os.nice(NICE)
    except OSError:
        pass
    try:
        _loop(store, interval, stopping)
    finally:
        store.close()


def interval_of(app: Flask) -> float:
    """The configured seconds between rounds (0: no refresher)."""
    return float(app.config.get("STATS_REFRESH_SECONDS", 0 if app.testing else INTERVAL))


def start(app: Flask) -> threading.Thread | None:
    """This process's refresher for ``app`` (started once per process)."""
    interval = interval_of(app)
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
    if interval_of(app) > 0:  # none (`schocken serve`'s workers, tests): no hook per request
        app.before_request(lambda: (start(app), None)[1])
