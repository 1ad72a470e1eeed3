"""The webhook sender: claims due deliveries from the outbox, POSTs each signed, records how it
went, and retries failures on a schedule (``schocken webhooks send --watch``, a process of its
own beside the server's workers; api/cli/webhooks.py).

* **One receiver stalls nobody else**: at most :data:`SLOTS` attempts are in flight, each in a
  thread of its own, and at most one per webhook (also across the senders of several servers:
  the claim marks the webhook busy, see :meth:`~api.storage.webhook_port.WebhooksPort.
  claim_deliveries`). There is no batch: a slot that frees up is filled at once with the oldest
  due delivery of the least recently served webhook that has none in flight. A slow receiver
  holds its own slot, no other one, for :data:`TIMEOUT` at most, and then goes to the back of
  the line (more slow receivers than slots still leave every other webhook its turn).
* **A hard deadline per attempt** (:data:`TIMEOUT`: resolving, connecting, sending, the
  answer's head): the socket's timeout bounds every single wait, and at the deadline the sender
  shuts the connection down, so a receiver that trickles its answer a byte a second is cut off
  too; the outcome is recorded then and the slot is free (an attempt still stuck in the name
  lookup or the TLS handshake is left to end by itself: its thread counts for nothing).
* **Claim and lease**: a claim is made only for a free slot, and its attempt starts at once;
  it counts the attempt and makes the delivery due again after its lease (:data:`TIMEOUT` +
  :data:`LEASE_MARGIN`) should no outcome be recorded. A killed sender thus leaves only its
  attempts in flight (one per webhook, :data:`SLOTS` at most), each due again within seconds;
  a receiver gets one of them twice only if it had received the request (its ``webhook-id``
  repeats: receivers dedupe by it). Nothing is claimed that has not started.
* **Where it connects**: the sender resolves the URL's name itself, refuses it when any of its
  addresses is not public (:func:`~.webhooks.public_address`; this machine's loopback only when
  ``WEBHOOK_LOOPBACK`` allows it), and connects to the address it checked, with the name as
  ``Host`` and for TLS (SNI and certificate check): a DNS answer that changes between check and
  connect changes nothing.
* **One send**: JSON, redirects not followed, headers ``webhook-id``, ``webhook-timestamp``
  (Unix seconds) and ``webhook-signature: v1,<base64 HMAC-SHA256>`` (:func:`~.webhooks.sign`).
  A 2xx delivers. The log keeps the status and a fixed German reason, never the receiver's body
  or headers, and one text for every failure to connect or answer (which ports are open on the
  far side stays unsaid).
* **Retries**: after the n-th failed attempt the next comes :data:`SCHEDULE` [n-1] seconds
  later (± :data:`JITTER`); the attempt after the last of them failing marks the delivery
  failed (about 8.6 hours after the first try: a receiver down for an hour still gets it).
  A redelivery is one more attempt now; if it fails, the schedule goes on where it stood.
* **The log** keeps delivered and failed deliveries :data:`KEEP` (then the sender forgets them);
  a paused webhook's pending deliveries wait until it is resumed.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import HTTPError
from urllib3.util.ssl_match_hostname import CertificateError

from ..storage import Repository
from ..storage.webhook_records import DELIVERED, FAILED, PENDING, Finished, Outgoing
from .base import utcnow
from .webhooks import Address, host_ascii, ip_literal, public_address, sign

log = logging.getLogger(__name__)

#: seconds from the n-th failed attempt to the next one; then failed
SCHEDULE: tuple[int, ...] = (10, 60, 300, 1800, 7200, 21600)
#: each wait of the schedule is stretched or shrunk by up to this share at random
JITTER = 0.1
#: seconds one attempt may take in all (resolve, connect, send, answer): enforced
TIMEOUT = 10.0
#: a claim's lease lasts the attempt's deadline and this many seconds more (a sender that died)
LEASE_MARGIN = 5.0
#: attempts in flight at once, each its own thread, at most one per webhook
SLOTS = 16
#: seconds between two looks for due deliveries while attempts are in flight
POLL = 0.25
#: delivered and failed deliveries are kept this long in the log, then forgotten
KEEP = timedelta(days=30)
#: the sender forgets old deliveries this often
PURGE_EVERY = timedelta(hours=1)

#: the log's reasons (fixed texts: nothing of the receiver's answer but its status)
GONE = "Das Ereignis ist nicht mehr gespeichert."
UNREACHABLE = (
    "Keine Antwort innerhalb von {timeout:g} s (nicht erreichbar, abgewiesen oder zu langsam)."
)
INTERNAL = "Nicht gesendet: {host} zeigt auf eine nicht öffentliche Adresse (gesperrt)."
REDIRECT = "Antwort {status}: Weiterleitungen werden nicht gefolgt."
NOT_2XX = "Antwort {status} (erwartet: 2xx)."
BROKEN = "Fehler beim Senden."

Outcome = tuple[int | None, str | None]  # (HTTP status, error); (2xx, None) delivered
#: the addresses a name resolves to (host, port) -> their text forms
Resolver = Callable[[str, int], list[str]]


def body_of(out: Outgoing) -> bytes:
    """The JSON body of a delivery: the event as the event stream sends it
    (``kind``, ``message``, ``data``, ``game_id``, ``seq``, ``position``, ``recorded_at``) and
    the Stammtisch's slug."""
    payload = {**out.event, "stammtisch": out.slug}
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def next_try(attempts: int, now: datetime, rand: Callable[[], float]) -> datetime | None:
    """When to try again after ``attempts`` failed attempts (None: give up)."""
    if attempts > len(SCHEDULE):
        return None
    wait = SCHEDULE[attempts - 1] * (1 + JITTER * (2 * rand() - 1))
    return now + timedelta(seconds=wait)


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to for a TCP connection (the system's resolver)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in found]


class Attempt:
    """One delivery being sent, in a thread of its own, until its deadline (monotonic)."""

    def __init__(self, out: Outgoing, deadline: float) -> None:
        self.out, self.deadline = out, deadline
        self.outcome: Outcome | None = None  # set when the thread ends
        self.conn: HTTPConnection | None = None
        self.aborted = False

    def abort(self) -> None:
        """The deadline passed: cut the connection, whatever it waits for."""
        self.aborted = True
        sock = self.conn.sock if self.conn is not None else None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass  # not connected (any more)


class Sender:
    """Sends the due deliveries of one repository; ``clock`` (naive UTC), ``rand`` and
    ``resolve`` are injectable for tests. ``loopback``: receivers on this machine allowed;
    ``ca_certs``: a CA file to trust instead of the system's (tests)."""

    def __init__(
        self,
        repo: Repository,
        clock: Callable[[], datetime] = utcnow,
        timeout: float = TIMEOUT,
        rand: Callable[[], float] = random.random,
        lease: timedelta | None = None,
        slots: int = SLOTS,
        loopback: bool = False,
        resolve: Resolver = resolve,
        ca_certs: str | None = None,
    ) -> None:
        self.repo, self.clock, self.rand, self.ca_certs = repo, clock, rand, ca_certs
        self.timeout, self.slots, self.loopback, self.resolve = timeout, slots, loopback, resolve
        self.lease = lease if lease is not None else timedelta(seconds=timeout + LEASE_MARGIN)
        self.running: list[Attempt] = []
        self.changed = threading.Event()  # an attempt ended
        self.purged: datetime | None = None

    # ---- the loop ----------------------------------------------------------------------------

    def step(self) -> int:
        """Record every attempt that ended or passed its deadline, then claim a due delivery
        for each free slot and start it; how many were started."""
        self.reap()
        now = self.clock()
        if self.purged is None or now - self.purged >= PURGE_EVERY:
            self.repo.purge_deliveries(now - KEEP)
            self.purged = now
        free = self.slots - len(self.running)
        if free <= 0:
            return 0
        claimed = self.repo.claim_deliveries(now, now + self.lease, free)
        for out in claimed:
            attempt = Attempt(out, time.monotonic() + self.timeout)
            self.running.append(attempt)
            name = f"webhook-{out.delivery.webhook_id}"
            threading.Thread(target=self._run, args=(attempt,), name=name, daemon=True).start()
        return len(claimed)

    def wait(self, seconds: float) -> None:
        """Until an attempt ends, the nearest deadline passes, or ``seconds`` are over."""
        self.changed.clear()
        if any(a.outcome is not None for a in self.running):
            return
        deadlines = [a.deadline - time.monotonic() for a in self.running]
        self.changed.wait(max(0.0, min([seconds, *deadlines])))

    def reap(self) -> None:
        """Record the attempts that ended, and those past their deadline (cut off)."""
        now = time.monotonic()
        for attempt in list(self.running):
            outcome = attempt.outcome
            if outcome is None and now >= attempt.deadline:
                attempt.abort()
                outcome = (None, UNREACHABLE.format(timeout=self.timeout))
            if outcome is not None:
                self.running.remove(attempt)
                self.record(attempt.out, outcome)

    def run_once(self) -> int:
        """Send what is due now, to the end (slots filled as they free up, until nothing is
        due and nothing in flight); how many attempts were made."""
        total = 0
        while True:
            started = self.step()
            total += started
            if not started and not self.running:
                return total
            self.wait(POLL)

    def close(self) -> None:
        """Let the attempts in flight end (by their deadline at the latest) and record them."""
        while self.running:
            self.wait(POLL)
            self.reap()

    # ---- one attempt -------------------------------------------------------------------------

    def _run(self, attempt: Attempt) -> None:
        attempt.outcome = self.post(attempt)
        self.changed.set()

    def post(self, attempt: Attempt) -> Outcome:
        """One attempt: (status, None) for a 2xx, else (status or None, why)."""
        try:
            return self._post(attempt)
        except Exception:  # noqa: BLE001 - one bad delivery must not stop the others
            log.exception("webhook delivery %s", attempt.out.delivery.message_id)
            return None, BROKEN

    def _post(self, attempt: Attempt) -> Outcome:
        out = attempt.out
        if not out.event:
            return None, GONE
        unreachable = None, UNREACHABLE.format(timeout=self.timeout)
        target = urlsplit(out.url)
        host = (target.hostname or "").rstrip(".")
        https = target.scheme == "https"
        port = target.port or (443 if https else 80)
        address = self._address(host, port)
        if address is None:
            return unreachable
        if isinstance(address, str):
            return None, address
        remaining = attempt.deadline - time.monotonic()
        if remaining <= 0 or attempt.aborted:
            return unreachable
        name = str(address) if ip_literal(host) is not None else host_ascii(host)
        if https:
            conn: HTTPConnection = HTTPSConnection(
                str(address),
                port,
                timeout=remaining,
                server_hostname=name,  # SNI and the certificate's check: the URL's name
                assert_hostname=name,
                ca_certs=self.ca_certs,
            )
        else:
            conn = HTTPConnection(str(address), port, timeout=remaining)
        attempt.conn = conn
        try:
            if attempt.aborted:
                return unreachable
            conn.request(
                "POST",
                (target.path or "/") + (f"?{target.query}" if target.query else ""),
                body=(body := body_of(out)),
                headers=self._headers(out, body, name, target.port),
                preload_content=False,
            )
            status = conn.getresponse().status  # the head only: the body is never read
        except (OSError, HTTPError, http.client.HTTPException, CertificateError):
            return unreachable  # one text for all: which ports are open stays unsaid
        finally:
            conn.close()
        if 200 <= status < 300:
            return status, None
        if 300 <= status < 400:
            return status, REDIRECT.format(status=status)
        return status, NOT_2XX.format(status=status)

    def _address(self, host: str, port: int) -> Address | str | None:
        """The checked address to connect to; a reason (str) when it is not public; None when
        the name does not resolve."""
        literal = ip_literal(host)
        if literal is not None:
            found: list[Address | None] = [literal]
        else:
            try:
                found = [ip_literal(a) for a in self.resolve(host_ascii(host), port)]
            except (OSError, UnicodeError):
                return None
        if not found:
            return None
        if not all(a is not None and public_address(a, self.loopback) for a in found):
            return INTERNAL.format(host=host)
        return found[0]

    def _headers(self, out: Outgoing, body: bytes, name: str, port: int | None) -> dict[str, str]:
        stamp = int(self.clock().replace(tzinfo=UTC).timestamp())
        message_id = out.delivery.message_id
        host = f"[{name}]" if ":" in name else name
        return {
            "Host": host + (f":{port}" if port else ""),
            "Content-Type": "application/json",
            "User-Agent": "Schocken-Webhooks/1",
            "webhook-id": message_id,
            "webhook-timestamp": str(stamp),
            "webhook-signature": sign(out.secret, message_id, stamp, body),
        }

    def record(self, out: Outgoing, outcome: Outcome) -> None:
        status, error = outcome
        now = self.clock()
        d = out.delivery
        if error is None:
            self.repo.finish_delivery(d.id, Finished(DELIVERED, now, status, None, now))
            return
        retry = next_try(d.attempts, now, self.rand) if out.event else None
        state = PENDING if retry is not None else FAILED
        self.repo.finish_delivery(d.id, Finished(state, retry or now, status, error))
        log.info("webhook delivery %s failed (attempt %d): %s", d.message_id, d.attempts, error)
