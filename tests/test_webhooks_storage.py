"""The outbox in the stores of record: two senders claiming at the same moment (PostgreSQL:
``FOR UPDATE SKIP LOCKED``; SQLite: one writer at a time) never take one delivery twice, nor
two of one webhook; a claim holds its webhook until its outcome is recorded or its lease ends,
after which the delivery is due again (a sender that died)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from conftest import make_table, store_config

from api.app import create_app
from api.domain.base import utcnow
from api.storage.webhook_records import DELIVERED, FAILED


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    """8 webhooks with 5 test pings each."""
    app = create_app(store_config(request.param, tmp_path, request))
    table = make_table(app.test_client())
    repo = app.extensions["schocken"].store.repository()
    st = repo.get_stammtisch(table.slug)
    for n in range(8):
        hook = repo.add_webhook(st.id, f"https://chat{n}.example/", ["game_lost"], "whsec_", "",
                                utcnow())  # fmt: skip
        for _ in range(5):
            repo.add_ping(hook, {"kind": "ping", "message": "Test", "data": {}}, utcnow())
    yield app.extensions["schocken"].store
    app.extensions["schocken"].store.close()


def test_two_senders_claiming_at_once_never_take_one_webhook_twice(store):
    now = utcnow() + timedelta(seconds=1)
    repos = [store.open_repository(), store.open_repository()]
    start, claimed = threading.Barrier(2), [[], []]

    def claim(i: int) -> None:
        start.wait()
        for _ in range(3):
            claimed[i] += repos[i].claim_deliveries(now, now + timedelta(seconds=60), 15)
            repos[i].close()

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    hooks = [o.delivery.webhook_id for o in claimed[0] + claimed[1]]
    assert sorted(hooks) == sorted(set(hooks)) and len(hooks) == 8  # one in flight per webhook


def test_a_claim_holds_its_webhook_for_the_lease_or_until_its_outcome(store):
    repo = store.open_repository()
    now = utcnow() + timedelta(seconds=1)
    lease = now + timedelta(seconds=15)
    first = repo.claim_deliveries(now, lease, 100)
    assert len({o.delivery.webhook_id for o in first}) == len(first) == 8
    assert {o.delivery.attempts for o in first} == {1}
    assert repo.claim_deliveries(now, lease, 100) == []  # 32 due, but each webhook is busy
    assert repo.claim_deliveries(lease - timedelta(seconds=1), lease, 100) == []
    assert repo.delivery_backlog(now).due == 32 and repo.delivery_backlog(now).waiting is None
    done = first[0].delivery
    repo.finish_delivery(done.id, DELIVERED, now, 204, None, now)  # its webhook is free at once
    (after,) = repo.claim_deliveries(now, lease + timedelta(seconds=5), 100)
    assert after.delivery.webhook_id == done.webhook_id and after.delivery.id != done.id
    again = repo.claim_deliveries(lease, lease + timedelta(seconds=15), 100)  # a dead sender
    assert len(again) == 7 and done.webhook_id not in {o.delivery.webhook_id for o in again}
    leased = {o.delivery.id for o in first[1:]}
    pending = [repo.get_delivery(o.delivery.webhook_id, o.delivery.id) for o in first[1:]]
    assert {d.id for d in pending if d.next_attempt_at == lease} == leased  # due again then
    repo.close()


def test_a_claim_skips_what_another_sender_has_locked_instead_of_waiting(pg_url):
    """PostgreSQL: webhooks another sender's claim holds (locked, not yet committed) are
    skipped at once (SKIP LOCKED), and none of their deliveries is claimed by anybody else."""
    import psycopg

    app = create_app({"DATABASE_URL": pg_url, "TESTING": True})
    try:
        table = make_table(app.test_client())
        for n in range(4):
            made = table.post("/webhooks", {"url": f"https://chat{n}.example/",
                                            "kinds": ["game_lost"]})  # fmt: skip
            for _ in range(3):
                table.post(f"/webhooks/{made.json['id']}/ping")
        now = utcnow() + timedelta(seconds=1)
        with psycopg.connect(pg_url) as other:  # a claim in flight: two webhooks locked
            held = [r[0] for r in other.execute(
                "SELECT id FROM webhooks ORDER BY id LIMIT 2 FOR UPDATE").fetchall()]  # fmt: skip
            repo = app.extensions["schocken"].store.open_repository()
            started = time.monotonic()
            got = repo.claim_deliveries(now, now + timedelta(seconds=60), 100)
            assert time.monotonic() - started < 2  # not waiting for the other one
            hooks = [o.delivery.webhook_id for o in got]
            assert len(hooks) == 2 and not set(hooks) & set(held)
            repo.close()
    finally:
        app.extensions["schocken"].store.close()


def test_the_least_recently_served_webhook_gets_the_next_free_slot(store):
    """A slow receiver that just had its turn goes to the back: the next free slot goes to a
    webhook that has waited longer, though the slow one's backlog is as old."""
    repo = store.open_repository()
    now = utcnow() + timedelta(seconds=1)
    for out in repo.claim_deliveries(now, now + timedelta(seconds=15), 8):  # a turn for each
        repo.finish_delivery(out.delivery.id, DELIVERED, now, 204, None, now)
    later = now + timedelta(seconds=5)
    (slow,) = repo.claim_deliveries(later, later + timedelta(seconds=15), 1)  # its next turn
    repo.finish_delivery(slow.delivery.id, FAILED, later, None, "zu langsam", None)
    again = now + timedelta(seconds=10)
    taken = {o.delivery.webhook_id for o in repo.claim_deliveries(again, again, 7)}
    assert len(taken) == 7 and slow.delivery.webhook_id not in taken  # the last in line
    repo.close()
