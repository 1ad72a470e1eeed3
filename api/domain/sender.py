"""The webhook sender: claims due deliveries from the outbox, POSTs each signed, records how it
went, and retries failures on a schedule (``schocken webhooks send --watch``, a process of its
own beside the server's workers; api/cli/webhooks.py).

* **Claim and lease**: a claim counts the attempt and makes the delivery due again after
  :data:`LEASE` (longer than any send): a sender killed mid-send leaves it to be sent again then.
  A delivery is never sent twice, except when the kill came after the receiver's 2xx and
  before the record: receivers dedupe by ``webhook-id`` (the same on every attempt).
* **One send**: JSON, a :data:`TIMEOUT` in all, redirects not followed (a 3xx is a failure that
  says so), headers ``webhook-id``, ``webhook-timestamp`` (Unix seconds) and
  ``webhook-signature: v1,<base64 HMAC-SHA256>`` (:func:`~.webhooks.sign`). A 2xx delivers.
* **Retries**: after the n-th failed attempt the next comes :data:`SCHEDULE` [n-1] seconds
  later (± :data:`JITTER`); the attempt after the last of them failing marks the delivery
  failed (about 8.6 hours after the first try: a receiver down for an hour still gets it).
  A redelivery is one more attempt now; if it fails, the schedule goes on where it stood.
* **The log** keeps delivered and failed deliveries :data:`KEEP` (then the sender forgets them);
  a paused webhook's pending deliveries wait until it is resumed.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import UTC, datetime, timedelta

import urllib3

from ..storage import Repository
from ..storage.webhook_records import DELIVERED, FAILED, PENDING, Outgoing
from .base import utcnow
from .webhooks import sign

log = logging.getLogger(__name__)

#: seconds from the n-th failed attempt to the next one; then failed
SCHEDULE: tuple[int, ...] = (10, 60, 300, 1800, 7200, 21600)
#: each wait of the schedule is stretched or shrunk by up to this share at random
JITTER = 0.1
#: a claimed delivery is due again this long after its claim (a sender that died)
LEASE = timedelta(seconds=60)
#: seconds one send may take in all (connect, send, answer)
TIMEOUT = 10.0
#: deliveries claimed at once, and sent side by side
BATCH, PARALLEL = 20, 4
#: delivered and failed deliveries are kept this long in the log, then forgotten
KEEP = timedelta(days=30)
#: the sender forgets old deliveries this often
PURGE_EVERY = timedelta(hours=1)
#: the receiver's answer kept in the log (characters), and read of it at most (bytes)
MAX_ERROR, MAX_READ = 300, 200

Outcome = tuple[int | None, str | None]  # (HTTP status, error); (2xx, None) delivered


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


class Sender:
    """Sends the due deliveries of one repository; ``clock`` (naive UTC) and ``rand`` are
    injectable for tests."""

    def __init__(
        self,
        repo: Repository,
        clock: Callable[[], datetime] = utcnow,
        timeout: float = TIMEOUT,
        rand: Callable[[], float] = random.random,
        lease: timedelta = LEASE,
    ) -> None:
        self.repo, self.clock, self.rand, self.lease = repo, clock, rand, lease
        self.http = urllib3.PoolManager(
            num_pools=16,
            maxsize=PARALLEL,
            retries=False,
            timeout=urllib3.Timeout(total=timeout),
        )
        self.timeout = timeout
        self.pool = ThreadPoolExecutor(PARALLEL, thread_name_prefix="webhook-send")
        self.purged: datetime | None = None

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        self.http.clear()

    def run_once(self) -> int:
        """Claim what is due, send it, record each outcome; how many were attempted."""
        now = self.clock()
        if self.purged is None or now - self.purged >= PURGE_EVERY:
            self.repo.purge_deliveries(now - KEEP)
            self.purged = now
        claimed = self.repo.claim_deliveries(now, now + self.lease, BATCH)
        sending = {self.pool.submit(self.post, out): out for out in claimed}
        for done in as_completed(sending):  # each recorded as soon as its answer is in
            self.record(sending[done], done.result())
        return len(claimed)

    def post(self, out: Outgoing) -> Outcome:
        """One attempt: (status, None) for a 2xx, else (status or None, why)."""
        try:
            return self._post(out)
        except Exception as err:  # noqa: BLE001 - one bad delivery must not stop the others
            log.exception("webhook delivery %s", out.delivery.message_id)
            return None, f"Fehler beim Senden: {type(err).__name__}"

    def _post(self, out: Outgoing) -> Outcome:
        if not out.event:
            return None, "Das Ereignis ist nicht mehr gespeichert."
        body = body_of(out)
        stamp = int(self.clock().replace(tzinfo=UTC).timestamp())
        message_id = out.delivery.message_id
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "Schocken-Webhooks/1",
            "webhook-id": message_id,
            "webhook-timestamp": str(stamp),
            "webhook-signature": sign(out.secret, message_id, stamp, body),
        }
        try:
            answer = self.http.request(
                "POST", out.url, body=body, headers=headers, redirect=False, preload_content=False
            )
            head = answer.read(MAX_READ)  # a receiver's long answer is not read on
            answer.close()
        except urllib3.exceptions.NewConnectionError as err:  # a TimeoutError too, in urllib3
            return None, f"Nicht erreichbar: {_reason(err)}"[:MAX_ERROR]
        except urllib3.exceptions.TimeoutError:
            return None, f"Keine Antwort innerhalb von {self.timeout:g} s."
        except urllib3.exceptions.HTTPError as err:
            return None, f"Nicht erreichbar: {_reason(err)}"[:MAX_ERROR]
        status = answer.status
        if 200 <= status < 300:
            return status, None
        if 300 <= status < 400:
            where = answer.headers.get("Location", "?")
            return status, f"Weiterleitung nach {where} wird nicht gefolgt."[:MAX_ERROR]
        text = head.decode("utf-8", "replace").strip()
        return status, (f"Antwort {status}" + (f": {text}" if text else ""))[:MAX_ERROR]

    def record(self, out: Outgoing, outcome: Outcome) -> None:
        status, error = outcome
        now = self.clock()
        d = out.delivery
        if error is None:
            self.repo.finish_delivery(d.id, DELIVERED, now, status, None, now)
            return
        retry = next_try(d.attempts, now, self.rand) if out.event else None
        state = PENDING if retry is not None else FAILED
        self.repo.finish_delivery(d.id, state, retry or now, status, error, None)
        log.info("webhook delivery %s failed (attempt %d): %s", d.message_id, d.attempts, error)


def _reason(err: Exception) -> str:
    """The innermost cause of a connection error, in one line."""
    reason = getattr(err, "reason", None) or err
    return " ".join(str(reason).split())
