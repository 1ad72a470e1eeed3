"""A per-token rate limit on writes: a token bucket per Stammtisch token (per client address for
writes without one), shared by every server process through the database.

``WRITE_RATE_PER_MINUTE`` tokens flow in per minute up to ``WRITE_RATE_BURST``; a write takes
one. An empty bucket answers 429 with ``Retry-After`` (whole seconds until the next token).
The default is generous (a pub table writes every few seconds; an import of years of paper
sheets a few per second); ``0`` switches the limit off. Only ``/api/`` is limited: the pub form
(``/``) is a human at a table. Tokens are kept only as their sha256.

The buckets live in the database (``Repository.take_token``; on SQLite the bucket is read when
the request starts, and the token taken by the first statement of the request's own write
transaction, see api/storage/sqlite/counters.py), so a client cannot get N times the rate by
landing on N processes. Should the bucket run dry in between (the client's other requests),
that transaction is refused with the same 429. An adapter without counters (the in-memory
store) falls back to buckets in this process's memory.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from typing import Any

from flask import Flask, current_app, request
from werkzeug.exceptions import TooManyRequests

from ..storage.sqlite.counters import RateLimited
from .context import services
from .idempotency import WRITE_METHODS


class TokenBuckets:
    """Buckets in this process's memory (for adapters that keep no counters)."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}  # who -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, who: str, now: float, per_second: float, burst: int) -> float:
        """0 when the write may go ahead, else the seconds until it may."""
        with self._lock:
            tokens, when = self._buckets.get(who, (float(burst), now))
            tokens = min(float(burst), tokens + max(0.0, now - when) * per_second)
            granted = tokens >= 1.0
            self._buckets[who] = (tokens - granted, now)
            if len(self._buckets) > 10000:  # forget full buckets (idle clients)
                full = [k for k, (t, w) in self._buckets.items() if w < now - burst / per_second]
                for k in full:
                    del self._buckets[k]
            return 0.0 if granted else (1.0 - tokens) / per_second


class Limits:
    """The configured rate, and when the stored buckets were last purged (per process)."""

    def __init__(self, per_minute: float, burst: int) -> None:
        self.per_second = per_minute / 60.0
        self.burst = burst
        self.local = TokenBuckets()
        self.purged = time.time()

    def take(self, who: str, now_too: bool = False) -> float:
        """0 when ``who`` may write (``now_too``: its token is written at once, not by the
        request's write transaction), else the seconds until it may."""
        repo = services().repo
        now = time.time()
        try:
            wait = repo.take_token(who, now, self.per_second, self.burst)
        except NotImplementedError:
            return self.local.take(who, now, self.per_second, self.burst)
        if now_too and hasattr(repo, "counters"):
            repo.counters.settle()
        if now - self.purged > 3600:  # once an hour per process: forget full buckets
            self.purged = now
            repo.purge_tokens(now - self.burst / self.per_second)
        return wait


def _client() -> str:
    header = request.headers.get("Authorization", "")
    if header:
        return "token:" + hashlib.sha256(header.encode("utf-8", "replace")).hexdigest()
    return "addr:" + (request.remote_addr or "?")


def _too_many(wait: float) -> TooManyRequests:
    seconds = max(1, math.ceil(wait))
    exc = TooManyRequests()
    exc.data = {  # type: ignore[attr-defined]
        "message": (
            f"Zu viele Einträge in kurzer Zeit mit diesem Schlüssel; bitte in {seconds} "
            "Sekunden noch einmal versuchen."
        ),
        "headers": {"Retry-After": str(seconds)},
    }
    return exc


def _limit() -> None:
    if request.method not in WRITE_METHODS or not request.path.startswith("/api/"):
        return
    limits: Limits | None = current_app.extensions.get("schocken_ratelimit")
    if limits is None:
        return
    # the admin endpoints write no rows (a backup reads them all): their token is taken
    # before, not after, what they do
    wait = limits.take(_client(), (request.endpoint or "").startswith("admin."))
    if wait > 0:
        raise _too_many(wait)


def _refused(error: RateLimited) -> Any:
    """The write transaction found the bucket empty (after the request's start found a token)."""
    return current_app.extensions["schocken_api"].handle_http_exception(_too_many(error.wait))


def init_rate_limit(app: Flask) -> None:
    per_minute = float(app.config.get("WRITE_RATE_PER_MINUTE", 0) or 0)
    if per_minute > 0:
        burst = int(app.config.get("WRITE_RATE_BURST", per_minute))
        app.extensions["schocken_ratelimit"] = Limits(per_minute, max(1, burst))
    app.before_request(_limit)
    app.register_error_handler(RateLimited, _refused)
