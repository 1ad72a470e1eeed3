"""A per-token rate limit on writes: a token bucket per Stammtisch token (per client address for
writes without one), in the process's memory.

``WRITE_RATE_PER_MINUTE`` tokens flow in per minute up to ``WRITE_RATE_BURST``; a write takes
one. An empty bucket answers 429 with ``Retry-After`` (whole seconds until the next token).
The default is generous (a pub table writes every few seconds; an import of years of paper
sheets a few per second); ``0`` switches the limit off. Only ``/api/`` is limited: the pub form
(``/``) is a human at a table. Tokens are kept only as their sha256.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections.abc import Callable

from flask import Flask, current_app, request
from werkzeug.exceptions import TooManyRequests

from .idempotency import WRITE_METHODS


class TokenBuckets:
    def __init__(
        self, per_minute: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = per_minute / 60.0
        self.burst = burst
        self.clock = clock
        self._buckets: dict[str, tuple[float, float]] = {}  # who -> (tokens, when)
        self._lock = threading.Lock()

    def take(self, who: str) -> float:
        """0 when the write may go ahead, else the seconds until it may."""
        now = self.clock()
        with self._lock:
            tokens, when = self._buckets.get(who, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - when) * self.rate)
            if tokens >= 1.0:
                self._buckets[who] = (tokens - 1.0, now)
                return 0.0
            self._buckets[who] = (tokens, now)
            if len(self._buckets) > 10000:  # forget full buckets (idle clients)
                full = [
                    k
                    for k, (t, w) in self._buckets.items()
                    if t + (now - w) * self.rate >= self.burst
                ]
                for k in full:
                    del self._buckets[k]
            wait: float = (1.0 - tokens) / self.rate
            return wait


def _client() -> str:
    header = request.headers.get("Authorization", "")
    if header:
        return "token:" + hashlib.sha256(header.encode("utf-8", "replace")).hexdigest()
    return "addr:" + (request.remote_addr or "?")


def _limit() -> None:
    if request.method not in WRITE_METHODS or not request.path.startswith("/api/"):
        return
    buckets: TokenBuckets | None = current_app.extensions.get("schocken_ratelimit")
    if buckets is None:
        return
    wait = buckets.take(_client())
    if wait > 0:
        seconds = max(1, math.ceil(wait))
        exc = TooManyRequests()
        exc.data = {  # type: ignore[attr-defined]
            "message": (
                f"Zu viele Einträge in kurzer Zeit mit diesem Schlüssel; bitte in {seconds} "
                "Sekunden noch einmal versuchen."
            ),
            "headers": {"Retry-After": str(seconds)},
        }
        raise exc


def init_rate_limit(app: Flask) -> None:
    per_minute = float(app.config.get("WRITE_RATE_PER_MINUTE", 0) or 0)
    if per_minute > 0:
        burst = int(app.config.get("WRITE_RATE_BURST", per_minute))
        app.extensions["schocken_ratelimit"] = TokenBuckets(per_minute, max(1, burst))
    app.before_request(_limit)
