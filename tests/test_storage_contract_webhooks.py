"""The storage port's contract, part 4: webhooks and the outbox of their deliveries (claims,
leases, outcomes, the backlog). On the in-memory fake, SQLite and PostgreSQL (the ``contract``
fixture, tests/storage_contract.py). The claims of several senders at once are here too; the
PostgreSQL-only SKIP LOCKED check stays in tests/test_webhooks_storage.py."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

import pytest
from storage_contract import NOW, covers, new_game

from api.storage.records import Stammtisch
from api.storage.webhook_records import DELIVERED, FAILED, PENDING, Backlog, Finished, Webhook

PING = {"kind": "ping", "message": "Test", "data": {}}
SOON = NOW + timedelta(seconds=1)
LEASE = NOW + timedelta(seconds=60)


def stammtisch(repo, slug: str = "a"):
    return repo.add_stammtisch(Stammtisch(0, slug, slug.upper(), {}, False, "h", NOW))


def hook(repo, st_id: int, n: int = 0, kinds=("game_lost",)) -> Webhook:
    url, secret = f"https://chat{n}.example/", f"whsec_{n}"
    return repo.add_webhook(Webhook(0, st_id, url, tuple(kinds), secret, True, f"#{n}", NOW))


@covers("add_webhook", "list_webhooks", "get_webhook")
def test_webhooks_are_listed_per_stammtisch_in_the_order_they_were_made(contract):
    repo = contract.repo
    a, b = stammtisch(repo, "a"), stammtisch(repo, "b")
    first = hook(repo, a.id, 1, ["game_lost", "turn_recorded"])
    assert first == Webhook(first.id, a.id, "https://chat1.example/",
                            ("game_lost", "turn_recorded"), "whsec_1", True, "#1", NOW)  # fmt: skip
    elsewhere = hook(repo, b.id, 2)
    second = hook(repo, a.id, 3)
    assert repo.list_webhooks(a.id) == [first, second]
    assert repo.list_webhooks(b.id) == [elsewhere]
    assert repo.get_webhook(a.id, second.id) == second
    assert repo.get_webhook(b.id, second.id) is None  # another Stammtisch's
    assert repo.get_webhook(a.id, second.id + 99) is None


@covers("update_webhook")
def test_a_webhook_is_changed_in_place(contract):
    repo = contract.repo
    a = stammtisch(repo)
    made, other = hook(repo, a.id, 1), hook(repo, a.id, 2)
    changed = replace(made, url="https://neu.example/", kinds=("deckel_moved",), secret="whsec_x",
                      active=False, description="neu")  # fmt: skip
    repo.update_webhook(changed)
    assert repo.get_webhook(a.id, made.id) == changed
    assert repo.get_webhook(a.id, other.id) == other


@covers("delete_webhook")
def test_a_deleted_webhook_takes_its_deliveries_along(contract):
    repo = contract.repo
    a = stammtisch(repo)
    gone, kept = hook(repo, a.id, 1), hook(repo, a.id, 2)
    ping = repo.add_ping(gone, PING, NOW)
    other_ping = repo.add_ping(kept, PING, NOW)
    repo.delete_webhook(gone.id)
    repo.delete_webhook(gone.id)  # twice is harmless
    assert repo.list_webhooks(a.id) == [kept]
    assert repo.get_delivery(gone.id, ping.id) is None
    assert repo.list_deliveries(gone.id, 0, 10) == ([], 0)
    assert repo.get_delivery(kept.id, other_ping.id) == other_ping
    assert [o.delivery.id for o in repo.claim_deliveries(SOON, LEASE, 10)] == [other_ping.id]


@covers("update_webhook", "redeliver")
def test_a_webhook_deleted_meanwhile_is_not_brought_back(contract):
    """An update or a redelivery that lost the race against a delete changes nothing."""
    repo = contract.repo
    a = stammtisch(repo)
    made = hook(repo, a.id, 1)
    ping = repo.add_ping(made, PING, NOW)
    repo.delete_webhook(made.id)
    repo.update_webhook(replace(made, description="neu"))
    repo.redeliver(ping.id, NOW)
    assert repo.list_webhooks(a.id) == [] and repo.get_webhook(a.id, made.id) is None
    assert repo.list_deliveries(made.id, 0, 10) == ([], 0)
    assert repo.delivery_backlog(SOON) == Backlog(0, None, None)


@covers("add_ping", "get_delivery")
def test_a_ping_is_a_pending_delivery_due_now(contract):
    repo = contract.repo
    a = stammtisch(repo)
    made, other = hook(repo, a.id, 1), hook(repo, a.id, 2)
    ping = repo.add_ping(made, PING, NOW)
    assert (ping.webhook_id, ping.stammtisch_id, ping.position, ping.event_index) == (
        made.id, a.id, None, 0,
    )  # fmt: skip
    assert (ping.payload, ping.state, ping.attempts, ping.kind) == (PING, PENDING, 0, "ping")
    assert (ping.next_attempt_at, ping.created_at, ping.delivered_at) == (NOW, NOW, None)
    assert (ping.last_status, ping.last_error, ping.last_attempt_at) == (None, None, None)
    assert ping.message_id == f"{made.id}-ping-{ping.id}"
    assert repo.get_delivery(made.id, ping.id) == ping
    assert repo.get_delivery(other.id, ping.id) is None  # not that webhook's


@covers("enqueue_deliveries", "append_events")
def test_an_entrys_events_become_deliveries_for_the_webhooks_that_chose_their_kinds(contract):
    repo = contract.repo
    a, b = stammtisch(repo, "a"), stammtisch(repo, "b")
    lost = hook(repo, a.id, 1, ["game_lost"])
    both = hook(repo, a.id, 2, ["game_lost", "turn_recorded"])
    off = hook(repo, a.id, 3, ["game_lost"])
    repo.update_webhook(replace(off, active=False))
    hook(repo, b.id, 4, ["game_lost"])  # another Stammtisch's
    game = repo.add_game(new_game(a.id))
    kinds = ["turn_recorded", "deckel_moved", "game_lost"]
    events = [{"kind": k, "message": k, "data": {}} for k in kinds]
    with repo.transaction():
        position = repo.append_events(a.id, game, 4, events, NOW)
    assert repo.list_deliveries(off.id, 0, 10) == ([], 0)
    (only,), _ = repo.list_deliveries(lost.id, 0, 10)
    assert (only.position, only.event_index, only.kind, only.payload) == (position, 2,
                                                                         "game_lost", None)  # fmt: skip
    assert only.message_id == f"{lost.id}-{position}-2"
    pair, total = repo.list_deliveries(both.id, 0, 10)
    assert total == 2 and sorted((d.event_index, d.kind) for d in pair) == [
        (0, "turn_recorded"), (2, "game_lost"),
    ]  # fmt: skip
    with repo.transaction():
        assert repo.enqueue_deliveries(a.id, position, ["game_lost", "game_lost"], NOW) == 4
        assert repo.enqueue_deliveries(a.id, position, ["deckel_moved"], NOW) == 0


@covers("enqueue_deliveries", "append_events")
def test_a_rolled_back_entry_leaves_no_delivery(contract):
    repo = contract.repo
    a = stammtisch(repo)
    made = hook(repo, a.id, 1)
    game = repo.add_game(new_game(a.id))
    with pytest.raises(RuntimeError), repo.transaction():
        repo.append_events(a.id, game, 1, [{"kind": "game_lost", "message": "", "data": {}}], NOW)
        raise RuntimeError("boom")
    assert repo.list_deliveries(made.id, 0, 10) == ([], 0)
    assert repo.delivery_backlog(SOON) == Backlog(0, None, None)


@covers("list_deliveries")
def test_deliveries_are_listed_newest_first_a_page_at_a_time(contract):
    repo = contract.repo
    a = stammtisch(repo)
    made, other = hook(repo, a.id, 1), hook(repo, a.id, 2)
    pings = [repo.add_ping(made, dict(PING, n=n), NOW) for n in range(5)]
    repo.add_ping(other, PING, NOW)
    page, total = repo.list_deliveries(made.id, 0, 2)
    assert total == 5 and page == [pings[4], pings[3]]
    page, total = repo.list_deliveries(made.id, 4, 2)
    assert (page, total) == ([pings[0]], 5)
    assert repo.list_deliveries(made.id, 5, 2) == ([], 5)


@covers("claim_deliveries")
def test_a_claim_carries_the_stored_event_and_where_to_send_it(contract):
    repo = contract.repo
    a = stammtisch(repo, "zur-post")
    made = hook(repo, a.id, 1, ["game_lost"])
    game = repo.add_game(new_game(a.id))
    event = {"kind": "game_lost", "message": "Anna verliert", "data": {"loser": "Anna"}}
    position = repo.append_events(a.id, game, 7, [event], NOW)
    ping = repo.add_ping(hook(repo, a.id, 2), PING, NOW)
    claimed = {o.delivery.webhook_id: o for o in repo.claim_deliveries(SOON, LEASE, 10)}
    out = claimed[made.id]
    assert (out.url, out.secret, out.slug) == ("https://chat1.example/", "whsec_1", "zur-post")
    assert out.event == {**event, "game_id": game, "seq": 7, "position": position,
                         "recorded_at": "2026-11-27T19:00:00+00:00"}  # fmt: skip
    d = out.delivery
    assert (d.attempts, d.last_attempt_at, d.next_attempt_at, d.state) == (1, SOON, LEASE, PENDING)
    assert repo.get_delivery(made.id, d.id) == d
    assert claimed[ping.webhook_id].event == PING


@covers("claim_deliveries")
def test_only_due_deliveries_of_active_webhooks_are_claimed_oldest_first(contract):
    repo = contract.repo
    a = stammtisch(repo)
    hooks = [hook(repo, a.id, n) for n in range(4)]
    late = repo.add_ping(hooks[0], PING, NOW + timedelta(minutes=5))  # not due yet
    early = repo.add_ping(hooks[1], PING, NOW - timedelta(minutes=5))
    middle = repo.add_ping(hooks[2], PING, NOW)
    repo.add_ping(hooks[3], PING, NOW - timedelta(minutes=9))
    repo.update_webhook(replace(hooks[3], active=False))
    assert repo.claim_deliveries(NOW - timedelta(minutes=6), LEASE, 10) == []
    (first,) = repo.claim_deliveries(SOON, LEASE, 1)  # the limit
    assert first.delivery.id == early.id
    assert [o.delivery.id for o in repo.claim_deliveries(SOON, LEASE, 10)] == [middle.id]
    for done in (early, middle):
        repo.finish_delivery(done.id, Finished(DELIVERED, SOON, 204, None, SOON))
    later = NOW + timedelta(minutes=6)
    assert [o.delivery.id for o in repo.claim_deliveries(later, later, 10)] == [late.id]


@covers("finish_delivery")
def test_an_outcome_is_recorded_and_frees_the_webhook(contract):
    repo = contract.repo
    a = stammtisch(repo)
    made = hook(repo, a.id, 1)
    first, second = repo.add_ping(made, PING, NOW), repo.add_ping(made, PING, NOW)
    (out,) = repo.claim_deliveries(SOON, LEASE, 10)
    assert out.delivery.id == first.id
    retry = SOON + timedelta(seconds=30)
    repo.finish_delivery(first.id, Finished(PENDING, retry, 500, "Serverfehler", None))
    got = repo.get_delivery(made.id, first.id)
    assert (got.state, got.next_attempt_at, got.last_status, got.last_error) == (
        PENDING, retry, 500, "Serverfehler",
    )  # fmt: skip
    assert got.delivered_at is None and got.attempts == 1
    (out,) = repo.claim_deliveries(SOON, LEASE, 10)  # free again: the next one
    assert out.delivery.id == second.id
    repo.finish_delivery(second.id, Finished(DELIVERED, SOON, 204, None, SOON))
    repo.finish_delivery(
        second.id, Finished(FAILED, SOON, 410, "weg", None)
    )  # keeps when it arrived
    got = repo.get_delivery(made.id, second.id)
    assert (got.state, got.last_status, got.last_error, got.delivered_at) == (FAILED, 410, "weg",
                                                                             SOON)  # fmt: skip
    repo.finish_delivery(
        second.id + 99, Finished(FAILED, SOON, None, None, None)
    )  # none: nothing happens


@covers("redeliver")
def test_a_delivery_sent_again_keeps_its_id_and_attempts(contract):
    repo = contract.repo
    a = stammtisch(repo)
    made = hook(repo, a.id, 1)
    ping = repo.add_ping(made, PING, NOW)
    repo.claim_deliveries(SOON, LEASE, 10)
    repo.finish_delivery(ping.id, Finished(FAILED, SOON, 404, "nicht gefunden", None))
    assert repo.claim_deliveries(SOON, LEASE, 10) == []
    later = NOW + timedelta(minutes=1)
    repo.redeliver(ping.id, later)
    got = repo.get_delivery(made.id, ping.id)
    assert (got.state, got.next_attempt_at, got.attempts, got.last_status) == (PENDING, later, 1,
                                                                              404)  # fmt: skip
    (out,) = repo.claim_deliveries(later, later + timedelta(seconds=15), 10)
    assert (out.delivery.id, out.delivery.attempts) == (ping.id, 2)


@covers("delivery_backlog")
def test_the_backlog_counts_due_deliveries_and_the_oldest_waiting_for_the_sender(contract):
    repo = contract.repo
    a = stammtisch(repo)
    busy, idle, off = hook(repo, a.id, 1), hook(repo, a.id, 2), hook(repo, a.id, 3)
    assert repo.delivery_backlog(NOW) == Backlog(0, None, None)
    old = NOW - timedelta(minutes=2)
    repo.add_ping(busy, PING, old - timedelta(minutes=1))
    repo.add_ping(busy, PING, old - timedelta(minutes=1))
    repo.add_ping(idle, PING, old)
    repo.add_ping(idle, PING, NOW + timedelta(minutes=1))  # not due
    repo.add_ping(off, PING, old - timedelta(minutes=5))
    repo.update_webhook(replace(off, active=False))
    assert repo.delivery_backlog(NOW) == Backlog(3, old - timedelta(minutes=1),
                                                 old - timedelta(minutes=1))  # fmt: skip
    repo.claim_deliveries(NOW, LEASE, 1)  # busy's first: in flight until LEASE
    assert repo.delivery_backlog(NOW) == Backlog(2, old - timedelta(minutes=1), old)


@covers("purge_deliveries")
def test_finished_deliveries_are_forgotten_after_the_limit_and_pending_ones_stay(contract):
    repo = contract.repo
    a = stammtisch(repo)
    made = hook(repo, a.id, 1)
    old = [repo.add_ping(made, PING, NOW - timedelta(days=31)) for _ in range(3)]
    new = repo.add_ping(made, PING, NOW)
    for delivery, state in zip(old[:2], (DELIVERED, FAILED), strict=True):
        repo.finish_delivery(delivery.id, Finished(state, NOW, 204, None, NOW))
    repo.finish_delivery(new.id, Finished(DELIVERED, NOW, 204, None, NOW))
    assert repo.purge_deliveries(NOW - timedelta(days=30)) == 2
    left, total = repo.list_deliveries(made.id, 0, 10)
    assert total == 2 and {d.id for d in left} == {old[2].id, new.id}
    assert repo.purge_deliveries(NOW - timedelta(days=30)) == 0


@covers("sender_lock")
def test_the_sender_lock_is_taken_and_given_back(contract):
    repo, other = contract.repo, contract.other()
    with repo.sender_lock() as taken:
        assert taken is True
        with other.sender_lock() as second:  # SQLite: one sender per file; the others share
            assert second is (contract.kind != "sqlite")
    with other.sender_lock() as again:
        assert again is True


def eight_webhooks(repo) -> None:
    """8 webhooks with 5 test pings each (moved from tests/test_webhooks_storage.py)."""
    st = stammtisch(repo)
    for n in range(8):
        made = hook(repo, st.id, n)
        for _ in range(5):
            repo.add_ping(made, PING, NOW)


@covers("claim_deliveries")
def test_two_senders_claiming_at_once_never_take_one_webhook_twice(contract):
    eight_webhooks(contract.repo)
    repos = [contract.other(), contract.other()]
    start, claimed = threading.Barrier(2), [[], []]

    def claim(i: int) -> None:
        start.wait()
        for _ in range(3):
            claimed[i] += repos[i].claim_deliveries(SOON, LEASE, 15)
            repos[i].close()

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    hooks = [o.delivery.webhook_id for o in claimed[0] + claimed[1]]
    assert sorted(hooks) == sorted(set(hooks)) and len(hooks) == 8  # one in flight per webhook


@covers("claim_deliveries", "finish_delivery", "delivery_backlog")
def test_a_claim_holds_its_webhook_for_the_lease_or_until_its_outcome(contract):
    eight_webhooks(contract.repo)
    repo = contract.other()
    now, lease = SOON, SOON + timedelta(seconds=15)
    first = repo.claim_deliveries(now, lease, 100)
    assert len({o.delivery.webhook_id for o in first}) == len(first) == 8
    assert {o.delivery.attempts for o in first} == {1}
    assert repo.claim_deliveries(now, lease, 100) == []  # 32 due, but each webhook is busy
    assert repo.claim_deliveries(lease - timedelta(seconds=1), lease, 100) == []
    assert repo.delivery_backlog(now).due == 32 and repo.delivery_backlog(now).waiting is None
    done = first[0].delivery
    repo.finish_delivery(
        done.id, Finished(DELIVERED, now, 204, None, now)
    )  # its webhook is free at once
    (after,) = repo.claim_deliveries(now, lease + timedelta(seconds=5), 100)
    assert after.delivery.webhook_id == done.webhook_id and after.delivery.id != done.id
    again = repo.claim_deliveries(lease, lease + timedelta(seconds=15), 100)  # a dead sender
    assert len(again) == 7 and done.webhook_id not in {o.delivery.webhook_id for o in again}
    leased = {o.delivery.id for o in first[1:]}
    pending = [repo.get_delivery(o.delivery.webhook_id, o.delivery.id) for o in first[1:]]
    assert {d.id for d in pending if d.next_attempt_at == lease} == leased  # due again then


@covers("claim_deliveries", "finish_delivery")
def test_the_least_recently_served_webhook_gets_the_next_free_slot(contract):
    """A slow receiver that just had its turn goes to the back: the next free slot goes to a
    webhook that has waited longer, though the slow one's backlog is as old."""
    eight_webhooks(contract.repo)
    repo = contract.other()
    now = SOON
    for out in repo.claim_deliveries(now, now + timedelta(seconds=15), 8):  # a turn for each
        repo.finish_delivery(out.delivery.id, Finished(DELIVERED, now, 204, None, now))
    later = now + timedelta(seconds=5)
    (slow,) = repo.claim_deliveries(later, later + timedelta(seconds=15), 1)  # its next turn
    repo.finish_delivery(slow.delivery.id, Finished(FAILED, later, None, "zu langsam", None))
    again = now + timedelta(seconds=10)
    taken = {o.delivery.webhook_id for o in repo.claim_deliveries(again, again, 7)}
    assert len(taken) == 7 and slow.delivery.webhook_id not in taken  # the last in line
