"""Locks across the processes that share one SQLite file (the statistics refresher, the webhook
sender): an exclusive ``flock`` of a file beside the database, held while a ``with`` block
runs and given back when it ends or the process dies."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def file_lock(path: str, wait: bool | float) -> Iterator[bool]:
    """The exclusive flock of the file ``path`` (created if missing): waiting for it (True),
    not (False) or up to ``wait`` seconds; yields whether it was taken."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if not _flock(fd, wait):
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _flock(fd: int, wait: bool | float) -> bool:
    """Take the exclusive flock of ``fd``: waiting (True), not (False) or up to ``wait``
    seconds; whether it was taken."""
    if wait is True:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True
    deadline = time.monotonic() + float(wait)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
