"""The outbox on PostgreSQL: a claim skips the webhooks another sender's claim holds
(``FOR UPDATE SKIP LOCKED``) instead of waiting. The claims every store shares (two senders at
once, a claim's lease, the least recently served webhook first) are in the storage-port contract
suite, tests/test_storage_contract_webhooks.py."""

from __future__ import annotations

import time
from datetime import timedelta

from conftest import make_table

from api.app import create_app
from api.domain.base import utcnow


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
