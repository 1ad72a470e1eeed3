"""One slow receiver stalls nobody else: a receiver that trickles its answer a byte at a time
and one that never answers, with 20 deliveries each, while another Stammtisch's receiver gets
its delivery within a few seconds. On SQLite (one sender) and on PostgreSQL (two senders
sharing the outbox, as the senders of two servers do): each attempt is cut off at its
deadline, and at most one attempt per webhook is in flight across both senders."""

from __future__ import annotations

import threading
import time

import pytest
from conftest import make_table, store_config

from api.app import create_app
from api.bench.webhook_isolation_probe import Receivers
from api.domain.sender import Sender

#: seconds one attempt may take in this test (the sender's deadline)
DEADLINE = 1.0


def run_senders(store, count: int, stop: threading.Event) -> list[threading.Thread]:
    """``count`` senders, each on its own repository, sending until ``stop``."""

    def run() -> None:
        repo = store.open_repository()
        sender = Sender(repo, timeout=DEADLINE, loopback=True)
        while not stop.is_set():
            sender.run_once()
            repo.close()
            stop.wait(0.1)
        sender.close()
        repo.close()

    threads = [threading.Thread(target=run, daemon=True) for _ in range(count)]
    for t in threads:
        t.start()
    return threads


@pytest.mark.parametrize("storage", ["sqlite", "postgresql"])
def test_a_trickling_and_a_silent_receiver_delay_no_other_stammtisch(storage, tmp_path, request):
    app = create_app(store_config(storage, tmp_path, request))
    store = app.extensions["schocken"].store
    receivers, stop = Receivers(), threading.Event()
    threads: list[threading.Thread] = []
    try:
        client = app.test_client()
        bad = make_table(client, "Zum Schneckentempo")
        hooks = {}
        for kind in ("trickle", "silent"):
            made = bad.post("/webhooks", {"url": receivers.url(kind), "kinds": ["game_lost"]})
            hooks[kind] = made.json["id"]
            for _ in range(20):
                assert bad.post(f"/webhooks/{made.json['id']}/ping").status_code == 202
        good = make_table(client, "Zur Post")
        made = good.post("/webhooks", {"url": receivers.url("healthy"), "kinds": ["game_lost"]})
        threads = run_senders(store, 2 if storage == "postgresql" else 1, stop)
        time.sleep(0.5)  # the slow receivers have their requests now
        assert good.post(f"/webhooks/{made.json['id']}/ping").status_code == 202
        pinged = time.monotonic()
        deadline = pinged + 20
        while not receivers.arrived and time.monotonic() < deadline:
            time.sleep(0.05)
        assert receivers.arrived, "the healthy receiver got nothing"
        assert (
            receivers.arrived[0] - pinged < 3.0
        )  # a few seconds at most, the sender's look included
        time.sleep(DEADLINE + 0.7)  # the first slow attempts are cut off by their deadline
        for kind, hook in hooks.items():
            log = bad.get(f"/webhooks/{hook}/deliveries?page_size=100", headers=bad.auth).json
            tried = [d for d in log["items"] if d["attempts"]]
            assert tried, kind
            assert all(d["state"] == "pending" for d in log["items"])
            failed = [d for d in tried if d["last_error"]]
            assert failed and failed[0]["last_error"].startswith("Keine Antwort innerhalb")
        for came in (
            receivers.came["trickle"],
            receivers.came["silent"],
        ):  # one attempt per webhook at a time: the next one
            gaps = [b - a for a, b in zip(came, came[1:], strict=False)]  # after the cut-off
            assert len(came) >= 2 and min(gaps) > DEADLINE - 0.3, gaps
    finally:
        stop.set()
        receivers.close()
        for t in threads:
            t.join(10)
        store.close()


@pytest.mark.parametrize("storage", ["sqlite", "postgresql"])
def test_more_slow_receivers_than_slots_still_leave_a_turn_for_the_others(
    storage, tmp_path, request
):
    """Three silent receivers with a backlog, a sender with two slots: the slots go to the
    least recently served webhook first, so the healthy one is sent to after one deadline at
    most, not after the slow ones' whole backlog."""
    app = create_app(store_config(storage, tmp_path, request))
    store = app.extensions["schocken"].store
    receivers, stop = Receivers(), threading.Event()
    try:
        client = app.test_client()
        bad = make_table(client, "Zum Schneckentempo")
        for _ in range(3):
            made = bad.post("/webhooks", {"url": receivers.url("silent"), "kinds": ["game_lost"]})
            for _ in range(10):
                assert bad.post(f"/webhooks/{made.json['id']}/ping").status_code == 202
        good = make_table(client, "Zur Post")
        made = good.post("/webhooks", {"url": receivers.url("healthy"), "kinds": ["game_lost"]})
        repo = store.open_repository()
        sender = Sender(repo, timeout=DEADLINE, loopback=True, slots=2)
        sender.step()  # both slots taken by slow receivers
        assert good.post(f"/webhooks/{made.json['id']}/ping").status_code == 202
        pinged = time.monotonic()
        while not receivers.arrived and time.monotonic() - pinged < 3 * DEADLINE + 2:
            sender.step()
            repo.close()
            sender.wait(0.05)
        assert receivers.arrived and receivers.arrived[0] - pinged < 2 * DEADLINE + 1.0
        sender.close()
        repo.close()
    finally:
        stop.set()
        receivers.close()
        store.close()
