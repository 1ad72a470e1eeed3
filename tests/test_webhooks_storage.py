"""The outbox in the stores of record: two senders claiming at the same moment (PostgreSQL:
``FOR UPDATE SKIP LOCKED``; SQLite: one writer at a time) never take one delivery twice; a
claim holds a delivery for its lease, after which it is due again (a sender that died)."""

from __future__ import annotations

import threading
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
    assert claimed[0] and claimed[1] and not set(claimed[0]) & set(claimed[1])
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
