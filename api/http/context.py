"""The request's context: its use cases, who asks, what they may do and how often.

**The request's use cases**: one :class:`~api.domain.Services` (one repository) per request,
made on first use and closed at its end (:func:`services`).

**Who asks** (:func:`caller`): the Stammtisch's write token from ``Authorization: Bearer …``
(the server's admin token for administration), looked up and hashed once per request.

Writes need the Stammtisch's token; reads are public unless the Stammtisch is private. The
decorators run before the body is parsed, so an unauthorised request learns nothing about its
body (401/403/404 first). The token check itself is a use case (``api/domain/stammtische.py``).

**Rate limits**, shared by every server process through the database, keyed on who is asking,
never on what a client chooses to send:

* **writes of a Stammtisch** (``/api/`` with a valid key for the Stammtisch in the path): one
  token bucket per Stammtisch (``WRITE_RATE_PER_MINUTE`` refilled continuously up to
  ``WRITE_RATE_BURST``). The key is checked first, so a made-up ``Authorization`` header, or
  a valid key written with extra spaces, does not open a fresh bucket;
* **every other write** (no key, a wrong one, the admin's) in the bucket of the **client
  address**, at the same rate;
* **creating a Stammtisch** (``POST /api/v1/stammtische`` and the form's ``POST /stammtisch``):
  a stricter bucket per client address (``CREATE_RATE_PER_HOUR``, ``CREATE_RATE_BURST``);
* **logging in with a key** in the form: a bucket per client address
  (``LOGIN_RATE_PER_MINUTE``), and an **exponential back-off per Stammtisch** after wrong
  keys: the first ``FREE_FAILURES`` are free, then each wrong key doubles the wait before the
  next attempt (1, 2, 4 … up to ``MAX_BACKOFF`` seconds), whoever sends it, from whatever
  address; a right key clears it. (The cap keeps someone who sends wrong keys on purpose from
  locking a Stammtisch's regulars out for long; keys are 256 random bits, so guessing is
  hopeless anyway: the back-off is against the load.)

An empty bucket answers 429 with ``Retry-After`` (whole seconds) and a German message. The
client address is the connection's, or, behind ``TRUSTED_PROXIES`` reverse proxies, the one
they forward (werkzeug's ``ProxyFix``; never a header a client could set itself).

The buckets and failure counts live in the database (``Repository.take_token``,
``Repository.failed_attempts``), so a client cannot get N times the rate by landing on N
processes. On SQLite the bucket is read when the request starts (on the request's own
connection) and the token taken by the first statement of the request's own write transaction (no write of its own; should the
bucket run dry in between, that transaction is refused with the same 429), or at the request's
end when it writes nothing; see api/storage/sqlite/repository.py. Keys are kept only as Stammtisch ids,
addresses as they are. flask-limiter was considered: its storages are memory, Redis,
Memcached and MongoDB, none of them the database every process already shares.
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from flask import Flask, current_app, g, request
from werkzeug.exceptions import TooManyRequests
from werkzeug.middleware.proxy_fix import ProxyFix

from ..domain import Forbidden, Services, Unauthorized
from ..domain.backup import stored_admin_token
from ..domain.stammtische import Caller
from ..domain.webhooks import loopback_allowed
from ..storage import RateLimited

F = TypeVar("F", bound=Callable[..., Any])

#: the methods that write: they need a token, and the rate limit counts them
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: writes: the Stammtisch's token
BEARER: list[dict[str, list[str]]] = [{"bearerAuth": []}]
#: reads: public, but a private Stammtisch needs its token
OPTIONAL_BEARER: list[dict[str, list[str]]] = [{}, {"bearerAuth": []}]


def services() -> Services:
    """The request's :class:`~api.domain.Services` (its repository is opened on first use;
    the same object for the whole request, so a write it opens is seen by every use case)."""
    svc: Services | None = g.get("services")
    if svc is None:
        state = current_app.extensions["schocken"]
        g.repo = state.store.repository()
        svc = g.services = Services(g.repo, state.cache, loopback=current_app.extensions[_LOOPBACK])
    return svc


def close_repository(_exc: BaseException | None = None) -> None:
    g.pop("services", None)
    repo = g.pop("repo", None)
    if repo is not None:
        repo.close()


_LOOPBACK = "schocken_webhook_loopback"


def init_context(app: Flask) -> None:
    config = app.config
    hosted = config["STORAGE"] == "postgresql"
    app.extensions[_LOOPBACK] = loopback_allowed(
        config["WEBHOOK_LOOPBACK"], hosted, config.get("TESTING", False)
    )
    app.teardown_appcontext(close_repository)


def _bearer(header: str) -> str | None:
    """The token of an ``Authorization: Bearer …`` header; None for another scheme."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def bearer_token() -> str | None:
    """The token of ``Authorization: Bearer …``; a header of another scheme is a 401."""
    header = request.headers.get("Authorization")
    if not header:
        return None
    token = _bearer(header)
    if token is None:
        raise Unauthorized("Erwartet wird „Authorization: Bearer <Schlüssel>“.")
    return token


def caller(slug: str) -> Caller:
    """The request's Stammtisch (of ``slug``) and whether its bearer token is the
    Stammtisch's key: looked up and hashed once per request (kept in the request's environ;
    the rate limit, the access check and the idempotent write share it). A header of another
    scheme is a 401 (:func:`bearer_token`)."""
    known: Caller | None = request.environ.get("schocken.caller")
    if known is None or known.slug != slug:
        known = request.environ["schocken.caller"] = services().caller(slug, bearer_token())
    return known


def admin_token(app: Flask) -> str:
    """The server's admin token: configured (``ADMIN_TOKEN``), else the one generated once
    into the instance folder."""
    token = app.config.get("ADMIN_TOKEN")
    if token:
        return str(token)
    token = stored_admin_token(Path(app.instance_path), create=True) or ""
    app.config["ADMIN_TOKEN"] = token
    return token


def check_admin() -> None:
    """Server administration (a backup of every Stammtisch) needs the admin token."""
    token = _bearer(request.headers.get("Authorization", ""))
    if token is None:
        raise Unauthorized("Dafür braucht es den Admin-Schlüssel des Servers (Bearer-Token).")
    if not hmac.compare_digest(token.encode(), admin_token(current_app).encode()):
        raise Forbidden("Das ist nicht der Admin-Schlüssel dieses Servers.")


def write_access(func: F) -> F:
    """Outermost decorator of a write: the Stammtisch's token first (401/403/404), then the
    body is parsed. The Stammtisch is left on ``g.stammtisch``."""

    @functools.wraps(func)
    def view(*args: Any, **kwargs: Any) -> Any:
        g.stammtisch = caller(kwargs["slug"]).writable()
        return func(*args, **kwargs)

    return view  # type: ignore[return-value]  # same signature, wrapped


def read_access(func: F) -> F:
    """Outermost decorator of a read below a Stammtisch (private ones need the token)."""

    @functools.wraps(func)
    def view(*args: Any, **kwargs: Any) -> Any:
        g.stammtisch = caller(kwargs["slug"]).readable()
        return func(*args, **kwargs)

    return view  # type: ignore[return-value]  # same signature, wrapped


# ---------------------------------------------------------------------------- rate limits

#: wrong keys for a Stammtisch before the back-off starts
FREE_FAILURES = 3
#: the longest back-off after wrong keys (seconds)
MAX_BACKOFF = 60.0
#: the API's endpoint that creates a Stammtisch (the form's view asks itself)
CREATE_ENDPOINTS = frozenset({"stammtische.Stammtische"})


@dataclass(frozen=True)
class Bucket:
    """A rate: ``per_second`` tokens flow in, up to ``burst``."""

    per_second: float
    burst: int

    @classmethod
    def of(cls, app: Flask, rate: str, burst: str, per: float) -> Bucket | None:
        amount = float(app.config.get(rate, 0) or 0)
        if amount <= 0:
            return None
        return cls(amount / per, max(1, int(app.config.get(burst, amount))))


class Limits:
    """The configured rates, and when the stored buckets were last purged (per process)."""

    def __init__(self, app: Flask) -> None:
        self.write = Bucket.of(app, "WRITE_RATE_PER_MINUTE", "WRITE_RATE_BURST", 60.0)
        self.create = Bucket.of(app, "CREATE_RATE_PER_HOUR", "CREATE_RATE_BURST", 3600.0)
        self.login = Bucket.of(app, "LOGIN_RATE_PER_MINUTE", "LOGIN_RATE_BURST", 60.0)
        self.purged = time.time()

    def take(self, who: str, bucket: Bucket, now_too: bool = False) -> float:
        """0 when ``who`` may go ahead, else the seconds until it may. The token is taken
        by the request's write transaction (on SQLite: its first statement, so that it costs
        no write of its own) or at the request's end; ``now_too``: at once."""
        repo = services().repo
        now = time.time()
        try:
            wait = repo.take_token(who, now, bucket.per_second, bucket.burst)
        except NotImplementedError:  # a read-only copy keeps no counters (and takes no writes)
            return 0.0
        if now_too:
            repo.settle_tokens()
        if now - self.purged > 3600:  # once an hour per process: forget full buckets
            self.purged = now
            slowest = min(b.per_second for b in (self.write, self.create, self.login) if b)
            repo.purge_tokens(now - 3600 - 1 / slowest)
        return wait


def _limits() -> Limits:
    limits: Limits = current_app.extensions["schocken_ratelimit"]
    return limits


def client_address() -> str:
    return request.remote_addr or "?"


def _writer() -> str:
    """Whose bucket a write under /api/ takes from: its Stammtisch's when the key in the
    header is the key of the Stammtisch in the path, else the client address's."""
    slug = (request.view_args or {}).get("slug")
    if slug and request.headers.get("Authorization"):
        try:
            known = caller(slug)  # the request's one look-up and hash of its key
        except Unauthorized:
            pass
        else:
            if known.keyed and known.stammtisch is not None:
                return f"st:{known.stammtisch.id}"
    return "addr:" + client_address()


def retry_seconds(wait: float) -> int:
    return max(1, math.ceil(wait))


def wait_message(wait: float, what: str) -> str:
    """ "Zu viele … ; bitte in 3 Sekunden noch einmal versuchen." (one: "einer Sekunde")."""
    seconds = retry_seconds(wait)
    when = "einer Sekunde" if seconds == 1 else f"{seconds} Sekunden"
    return f"Zu viele {what} in kurzer Zeit; bitte in {when} noch einmal versuchen."


def too_many(wait: float, what: str) -> TooManyRequests:
    exc = TooManyRequests()
    exc.data = {  # type: ignore[attr-defined]
        "message": wait_message(wait, what),
        "headers": {"Retry-After": str(retry_seconds(wait))},
    }
    return exc


def address_wait(kind: str) -> float:
    """Take a token of this client address's bucket for ``kind`` ("create": a new
    Stammtisch, "login": a key tried in the form): 0, or the seconds to wait."""
    limits = _limits()
    bucket = limits.create if kind == "create" else limits.login
    if bucket is None:
        return 0.0
    return limits.take(f"{kind}:{client_address()}", bucket, now_too=True)


def backoff_wait(stammtisch_id: int) -> float:
    """Before checking a key for this Stammtisch in the form: 0, or the seconds left of its
    back-off after wrong keys."""
    now = time.time()
    try:
        failures, last = services().repo.failed_attempts(f"login:{stammtisch_id}", now, None)
    except NotImplementedError:
        return 0.0
    if failures < FREE_FAILURES:
        return 0.0
    backoff = min(MAX_BACKOFF, 2.0 ** (failures - FREE_FAILURES))
    return max(0.0, last + backoff - now)


def login_outcome(stammtisch_id: int, right: bool) -> None:
    """Note a right key (clears the back-off) or a wrong one (lengthens it)."""
    with contextlib.suppress(NotImplementedError):
        services().repo.failed_attempts(f"login:{stammtisch_id}", time.time(), right)


def _limit() -> None:
    if request.method not in WRITE_METHODS or not request.path.startswith("/api/"):
        return
    limits = _limits()
    if request.endpoint in CREATE_ENDPOINTS:
        wait = address_wait("create")
        if wait > 0:
            raise too_many(wait, "neue Stammtische von dieser Adresse")
    if limits.write is not None:
        who = _writer()
        # the admin endpoints write no rows (a backup reads them all): their token is taken
        # before what they do, not after
        wait = limits.take(who, limits.write, (request.endpoint or "").startswith("admin."))
        if wait > 0:
            keyed = who.startswith("st:")
            raise too_many(
                wait, "Einträge " + ("mit diesem Schlüssel" if keyed else "von dieser Adresse")
            )


def _refused(error: RateLimited) -> Any:
    """The write transaction found the bucket empty (after the request's start found a token)."""
    return current_app.extensions["schocken_api"].handle_http_exception(
        too_many(error.wait, "Einträge")
    )


def init_rate_limit(app: Flask) -> None:
    """The limits of ``app``'s config; the proxies it trusts for the client address."""
    proxies = int(app.config.get("TRUSTED_PROXIES", 0) or 0)
    if proxies > 0:
        app.wsgi_app = ProxyFix(  # type: ignore[method-assign]
            app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies
        )
    app.extensions["schocken_ratelimit"] = Limits(app)
    app.before_request(_limit)
    app.register_error_handler(RateLimited, _refused)
