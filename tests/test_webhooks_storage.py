"""The outbox in the stores of record: two senders claiming at the same moment (PostgreSQL:
``FOR UPDATE SKIP LOCKED``; SQLite: one writer at a time) never take one delivery twice; a
claim holds a delivery for its lease, after which it is due again (a sender that died)."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from conftest import make_table, store_config

from api.app import create_app
from api.domain.base import utcnow


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    app = create_app(store_config(request.param, tmp_path, request))
    table = make_table(app.test_client())
    made = table.post("/webhooks", {"url": "https://chat.example/", "kinds": ["game_lost"]})
    repo = app.extensions["schocken"].store.repository()
    hook = repo.get_webhook(repo.get_stammtisch(table.slug).id, made.json["id"])
    for _ in range(40):
        repo.add_ping(hook, {"kind": "ping", "message": "Test", "data": {}}, utcnow())
    yield app.extensions["schocken"].store
    app.extensions["schocken"].store.close()


def test_two_senders_claiming_at_once_never_take_one_delivery_twice(store):
    now = utcnow() + timedelta(seconds=1)
    repos = [store.open_repository(), store.open_repository()]
    start, claimed = threading.Barrier(2), [[], []]

    def claim(i: int) -> None:
        start.wait()
        for _ in range(3):
            claimed[i] += [
                o.delivery.id
                for o in repos[i].claim_deliveries(now, now + timedelta(seconds=60), 15)
            ]
            repos[i].close()

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not set(claimed[0]) & set(claimed[1])
    assert sorted(claimed[0] + claimed[1]) == sorted(set(claimed[0] + claimed[1]))
    assert len(claimed[0]) + len(claimed[1]) == 40


def test_a_claim_holds_for_its_lease_then_the_delivery_is_due_again(store):
    repo = store.open_repository()
    now = utcnow() + timedelta(seconds=1)
    lease = now + timedelta(seconds=60)
    first = repo.claim_deliveries(now, lease, 100)
    assert len(first) == 40 and {o.delivery.attempts for o in first} == {1}
    assert repo.claim_deliveries(lease - timedelta(seconds=1), lease, 100) == []
    again = repo.claim_deliveries(lease, lease + timedelta(seconds=60), 100)
    assert len(again) == 40 and {o.delivery.attempts for o in again} == {2}
    repo.close()


def test_a_claim_skips_what_another_sender_has_locked_instead_of_waiting(pg_url):
    """PostgreSQL: rows another sender's claim holds (locked, not yet committed) are skipped at
    once (SKIP LOCKED), and claimed by nobody else."""
    import psycopg

    app = create_app({"DATABASE_URL": pg_url, "TESTING": True})
    try:
        table = make_table(app.test_client())
        made = table.post("/webhooks", {"url": "https://chat.example/", "kinds": ["game_lost"]})
        for _ in range(10):
            table.post(f"/webhooks/{made.json['id']}/ping")
        now = utcnow() + timedelta(seconds=1)
        with psycopg.connect(pg_url) as other:  # a claim in flight: four rows locked
            held = [r[0] for r in other.execute(
                "SELECT id FROM webhook_deliveries ORDER BY id LIMIT 4 FOR UPDATE").fetchall()]  # fmt: skip
            repo = app.extensions["schocken"].store.open_repository()
            started = time.monotonic()
            got = [
                o.delivery.id for o in repo.claim_deliveries(now, now + timedelta(seconds=60), 100)
            ]
            assert time.monotonic() - started < 2  # not waiting for the other one
            assert len(got) == 6 and not set(got) & set(held)
            repo.close()
    finally:
        app.extensions["schocken"].store.close()
