"""``schocken webhooks send [--watch]``: the webhook sender (api/domain/sender.py).

Without ``--watch`` it sends what is due now and ends. With ``--watch`` it goes on until
SIGTERM / Ctrl-C, or until the process ``--parent`` is gone: ``schocken serve``'s master runs it
so beside its workers (api/cli/serving.py), and starts it again should it end. On SQLite one
sender per database file works (a file lock; a second one waits for the lock); on PostgreSQL
the senders of several servers share the outbox (``FOR UPDATE SKIP LOCKED``, at most one
attempt per webhook in flight across all of them). Receivers on this machine's loopback only
where ``WEBHOOK_LOOPBACK`` allows them (api/config.py; unset: not on PostgreSQL).
"""

from __future__ import annotations

import logging
import sys
import threading
from datetime import timedelta
from typing import Any

import click

from .base import Group, stop_event
from .database import database_url_option, open_database, pick_url

webhooks = Group("webhooks", short_help="the webhook sender", help="Webhooks of the Stammtische.")

#: seconds between two looks for the lock another sender holds (SQLite)
LOCK_RETRY = 5.0


@webhooks.command("send", short_help="send the due webhook deliveries (--watch: keep sending)")
@click.option("--db", metavar="PATH", help="SQLite database file (default: the server's)")
@database_url_option
@click.option("--watch", is_flag=True, help="keep sending until SIGTERM / Ctrl-C")
@click.option("--interval", type=float, default=1.0, show_default=True, help="--watch: seconds")
@click.option("--parent", type=int, hidden=True, help="--watch: stop when this process ends")
@click.option("--lease", type=float, default=None, hidden=True, help="seconds a claim holds")
@click.option("--timeout", type=float, default=None, hidden=True, help="seconds per attempt")
def send_command(
    db: str | None,
    database_url: str | None,
    watch: bool,
    interval: float,
    parent: int | None,
    lease: float | None,
    timeout: float | None,
) -> int:
    """Send the webhook deliveries that are due (retries per the schedule of
    api/domain/sender.py); --watch: go on, looking every --interval seconds when idle."""
    from ..config import default_database, settings
    from ..domain.sender import TIMEOUT, Sender
    from ..domain.webhooks import loopback_allowed

    logging.basicConfig(level=logging.WARNING, format="webhooks: %(message)s")
    url = pick_url(database_url, db)
    store: Any = open_database(url, db or default_database())
    stopping = stop_event(parent) if watch else threading.Event()
    repo = store.repository()
    config = settings()
    sender = Sender(
        repo,
        timeout=TIMEOUT if timeout is None else timeout,
        lease=None if lease is None else timedelta(seconds=lease),
        loopback=loopback_allowed(
            config["WEBHOOK_LOOPBACK"], bool(url), config.get("TESTING", False)
        ),
    )
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
        store.close()


def _loop(sender: Any, repo: Any, watch: bool, interval: float, stopping: threading.Event) -> int:
    """Send until nothing is due (once) or until stopped (``watch``): slots are filled as they
    free up; when nothing is due the next look comes after ``interval``. Stopping lets the
    attempts in flight end (their deadline at the latest) and records them."""
    from ..domain.sender import POLL
    from ..storage import StorageUnavailable

    sent = 0
    try:
        while not stopping.is_set():
            try:
                started = sender.step()
            except StorageUnavailable as err:  # the database away for a moment: try again
                logging.getLogger(__name__).warning("%s", err)
                started = 0
            finally:
                repo.close()  # PostgreSQL: the connection back to the pool between rounds
            sent += started
            if not started and not sender.running:
                if not watch:
                    break
                sender.wait(interval)
            else:
                sender.wait(POLL)
    finally:
        try:
            sender.close()
        finally:
            repo.close()
    if not watch:
        print(f"{sent} Zustellung(en) versucht.", file=sys.stderr)
    return 0


COMMANDS = (webhooks,)
