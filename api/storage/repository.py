"""The storage port: one interface (the union of the role ports of :mod:`.ports`), three
adapters (SQLite, the store of record by default; PostgreSQL, for a hosted service with
several servers, api/storage/postgres; an in-memory fake for tests).

Services talk only to :class:`Repository`; resources and the engine never see storage. All
writes of one use case run inside ``with repo.transaction():`` and are committed together or
not at all.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable

from ..startup import DatabaseFault
from .ports import Events, GameLog, SessionsAndLimits, Stammtische, Statistics, Transactions
from .webhook_port import WebhooksPort


class MigrationError(RuntimeError):
    """The database cannot be brought to this version's schema (any adapter)."""


class StorageConflict(Exception):
    """A write lost a race (for example two appends with the same sequence number)."""


class StorageUnavailable(DatabaseFault):
    """The database cannot write (or read) now: a full disk, a read-only file or folder, an
    I/O error. Nothing of the failed transaction was stored; trying again later may work.
    The message names the cause for the operator's log."""


class StorageUnreachable(StorageUnavailable):
    """The database server cannot be reached now (it is down, restarting, or refuses
    connections); nothing of the failed transaction was stored (or, when the connection broke
    at its commit, perhaps all of it: a retry with the same Idempotency-Key tells)."""


class RateLimited(Exception):
    """The client's rate-limit bucket ran dry between the request's check of it and its write
    transaction (where an adapter takes the token): the write is refused (429), ``wait``
    seconds until the next token."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"rate limited for {wait:.1f} s")
        self.wait = wait


#: the words of the database errors that mean "cannot write or read now", not "bad request"
UNAVAILABLE_WORDS = (
    "disk i/o error",
    "database or disk is full",
    "readonly database",
    "read-only",
    "unable to open database file",
    "no space left",
    "io error",
    "permission denied",
    "database has been invalidated",
)


#: below this many free bytes beside the database, /health calls the disk full
MIN_FREE_BYTES = 1 << 20


def file_fault(path: str) -> str | None:
    """Why the database file ``path`` cannot be written now, as far as the file system tells
    cheaply (a read-only file or folder, a full disk); None when nothing is wrong.
    SQLite writes its ``-wal`` and ``-shm`` files beside it, so the folder must be writable."""
    if not path or path == ":memory:":
        return None
    folder = os.path.dirname(os.path.abspath(path))
    for target in (path, folder):
        if os.path.exists(target) and not os.access(target, os.W_OK):
            return f"{target}: read-only (no write permission)"
    try:
        free = shutil.disk_usage(folder).free
    except OSError as exc:
        return f"{folder}: {exc}"
    if free < MIN_FREE_BYTES:
        return f"{folder}: disk full ({free} bytes free)"
    return None


def unavailable_cause(exc: BaseException) -> str | None:
    """The cause when ``exc`` says the database cannot write or read now, else None."""
    text = str(exc).lower()
    return str(exc) if any(word in text for word in UNAVAILABLE_WORDS) else None


class Background:
    """The threads a store's users run beside the requests (the statistics refresher): they
    wait on :attr:`stopping` between their rounds, and :meth:`stop` (called first by the
    store's ``close``) sets it and joins them, so no connection is closed under a thread that
    is still using it."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._guard = threading.Lock()

    def start(self, target: Callable[[], None], name: str) -> threading.Thread:
        thread = threading.Thread(target=target, name=name, daemon=True)
        with self._guard:
            self._threads.append(thread)
        thread.start()
        return thread

    def stop(self, timeout: float = 30.0) -> None:
        self.stopping.set()
        with self._guard:
            threads, self._threads = self._threads, []
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout)


class Repository(
    Transactions, Stammtische, GameLog, Events, Statistics, SessionsAndLimits, WebhooksPort
):
    """Persistence of Stammtische, players, games, their logs and derived facts: the union of
    the role ports (:mod:`.ports`), which every adapter implements."""
