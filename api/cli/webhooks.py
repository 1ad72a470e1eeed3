"""``schocken webhooks send [--watch]``: the webhook sender (api/domain/sender.py).

Without ``--watch`` it sends what is due now and ends. With ``--watch`` it goes on until
SIGTERM / Ctrl-C, or until the process ``--parent`` is gone: ``schocken serve``'s master runs it
so beside its workers (api/cli/serving.py), and starts it again should it end. On SQLite one
sender per database file works (a file lock; a second one waits for the lock); on PostgreSQL
the senders of several servers share the outbox (``FOR UPDATE SKIP LOCKED``).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from datetime import timedelta
from typing import Any

import click

from .base import Group
from .database import database_url_option, pick_url

webhooks = Group("webhooks", short_help="the webhook sender", help="Webhooks of the Stammtische.")

#: seconds between two looks for the lock another sender holds (SQLite)
LOCK_RETRY = 5.0


@webhooks.command("send", short_help="send the due webhook deliveries (--watch: keep sending)")
@click.option("--db", metavar="PATH", help="SQLite database file (default: the server's)")
@database_url_option
@click.option("--watch", is_flag=True, help="keep sending until SIGTERM / Ctrl-C")
@click.option("--interval", type=float, default=1.0, show_default=True, help="--watch: seconds")
@click.option("--parent", type=int, hidden=True, help="--watch: stop when this process ends")
@click.option("--lease", type=float, default=60.0, hidden=True, help="seconds a claim holds")
@click.option("--timeout", type=float, default=10.0, hidden=True, help="seconds per send")
def send_command(
    db: str | None,
    database_url: str | None,
    watch: bool,
    interval: float,
    parent: int | None,
    lease: float,
    timeout: float,
) -> int:
    """Send the webhook deliveries that are due (retries per the schedule of
    api/domain/sender.py); --watch: go on every --interval seconds."""
    from ..config import default_database
    from ..domain.sender import Sender
    from ..storage import PostgresStore, SQLiteStore

    logging.basicConfig(level=logging.WARNING, format="webhooks: %(message)s")
    url = pick_url(database_url, db)
    store: Any = PostgresStore(url, pool_size=2) if url else SQLiteStore(db or default_database())
    stopping = threading.Event()
    if watch:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stopping.set())
        if parent is not None:
            threading.Thread(target=_orphaned, args=(parent, stopping), daemon=True).start()
    repo = store.repository()
    sender = Sender(repo, timeout=timeout, lease=timedelta(seconds=lease))
    try:
        with repo.sender_lock() as mine:
            if mine:
                return _loop(sender, repo, watch, interval, stopping)
        if not watch:
            print("Ein anderer Sender arbeitet schon an dieser Datenbank.", file=sys.stderr)
            return 2
        while not stopping.wait(LOCK_RETRY):  # until the other one ends
            with repo.sender_lock() as mine:
                if mine:
                    return _loop(sender, repo, watch, interval, stopping)
        return 0
    finally:
        sender.close()
        store.close()


def _loop(sender: Any, repo: Any, watch: bool, interval: float, stopping: threading.Event) -> int:
    """Send until nothing is due (once) or until stopped (``watch``)."""
    from ..storage import StorageUnavailable

    sent = 0
    while not stopping.is_set():
        try:
            done = sender.run_once()
        except StorageUnavailable as err:  # the database away for a moment: try again
            logging.getLogger(__name__).warning("%s", err)
            done = 0
        finally:
            repo.close()  # PostgreSQL: the connection back to the pool between rounds
        sent += done
        if not done:
            if not watch:
                break
            stopping.wait(interval)
    if not watch:
        print(f"{sent} Zustellung(en) versucht.", file=sys.stderr)
    return 0


def _orphaned(parent: int, stopping: threading.Event) -> None:
    """Set ``stopping`` once ``parent`` is gone (a SIGKILL of the server's master, say)."""
    while not stopping.wait(1.0):
        if os.getppid() != parent:
            stopping.set()


COMMANDS = (webhooks,)
