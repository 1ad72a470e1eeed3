"""The storage port's contract, part 2: the outbox of domain events, the responses of
idempotent writes, the logins of the pub form and the rate limits. On the in-memory fake,
SQLite and PostgreSQL (the ``contract`` fixture, tests/storage_contract.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from storage_contract import NOW, NOW_UTC, covers, new_game

from api.storage import RateLimited, StorageConflict, StoredEvents, StoredResponse, WebSession
from api.storage.records import Stammtisch


def events(*kinds: str) -> list[dict]:
    return [{"kind": k, "message": f"{k}!", "data": {"n": i}} for i, k in enumerate(kinds)]


def two_games(repo):
    a = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    b = repo.add_stammtisch(Stammtisch(0, "b", "B", {}, False, "h", NOW))
    return a, b, repo.add_game(new_game(a.id)), repo.add_game(new_game(a.id))


@covers("append_events", "stammtisch_events", "last_event_position")
def test_positions_count_per_stammtisch_from_one_in_commit_order(contract):
    repo = contract.repo
    a, b, game, other = two_games(repo)
    elsewhere = repo.add_game(new_game(b.id))
    assert repo.last_event_position(a.id) == 0 and repo.stammtisch_events(a.id, 0, 10) == []
    with repo.transaction():
        assert repo.append_events(a.id, game, 0, events("game_started"), NOW) == 1
    assert repo.append_events(a.id, game, 1, events("turn_recorded", "deckel_moved"), NOW) == 2
    assert repo.append_events(b.id, elsewhere, 0, events("game_started"), NOW) == 1
    assert repo.append_events(a.id, other, 0, events("game_started"), NOW) == 3
    assert (repo.last_event_position(a.id), repo.last_event_position(b.id)) == (3, 1)
    rows = repo.stammtisch_events(a.id, 0, 10)
    assert [(r.position, r.game_id, r.seq) for r in rows] == [(1, game, 0), (2, game, 1),
                                                              (3, other, 0)]  # fmt: skip
    assert rows[1] == StoredEvents(a.id, 2, game, 1, events("turn_recorded", "deckel_moved"), NOW)
    assert [r.position for r in repo.stammtisch_events(a.id, 1, 1)] == [2]  # after 1, one row
    assert repo.stammtisch_events(a.id, 3, 10) == []
    assert [r.game_id for r in repo.stammtisch_events(b.id, 0, 10)] == [elsewhere]


@covers("append_events", "last_event_position")
def test_a_rolled_back_write_stores_no_event_and_takes_no_position(contract):
    repo = contract.repo
    a, _, game, _ = two_games(repo)
    repo.append_events(a.id, game, 0, events("game_started"), NOW)
    with pytest.raises(RuntimeError), repo.transaction():
        assert repo.append_events(a.id, game, 1, events("turn_recorded"), NOW) == 2
        raise RuntimeError("boom")
    assert repo.last_event_position(a.id) == 1
    assert repo.append_events(a.id, game, 1, events("turn_recorded"), NOW) == 2  # no gap
    assert [r.position for r in repo.stammtisch_events(a.id, 0, 10)] == [1, 2]


@covers("game_events")
def test_a_games_events_follow_its_entries_oldest_first(contract):
    repo = contract.repo
    a, _, game, other = two_games(repo)
    repo.append_events(a.id, game, 0, events("game_started"), NOW)
    repo.append_events(a.id, other, 0, events("game_started"), NOW)
    for seq in (1, 2, 3):
        repo.append_events(a.id, game, seq, events("turn_recorded"), NOW + timedelta(seconds=seq))
    rows = repo.game_events(game, 0, 10)
    assert [(r.seq, r.position) for r in rows] == [(1, 3), (2, 4), (3, 5)]  # after entry 0
    assert rows[0].recorded_at == NOW + timedelta(seconds=1)
    assert [r.seq for r in repo.game_events(game, 1, 1)] == [2]
    assert [r.seq for r in repo.game_events(game, -1, 10)] == [0, 1, 2, 3]
    assert repo.game_events(other, 0, 10) == [] and repo.game_events(other + 99, -1, 10) == []


@covers("events_since_rowid")
def test_the_pollers_cursor_reads_every_stammtischs_rows_in_commit_order(contract):
    since = contract.has(contract.repo, "events_since_rowid")
    repo = contract.repo
    a, b, game, _ = two_games(repo)
    elsewhere = repo.add_game(new_game(b.id))
    assert since(0, 10) == (0, [])
    repo.append_events(a.id, game, 0, events("game_started"), NOW)
    repo.append_events(b.id, elsewhere, 0, events("game_started"), NOW)
    repo.append_events(a.id, game, 1, events("turn_recorded"), NOW)
    cursor, rows = since(0, 2)
    assert [(r.stammtisch_id, r.position) for r in rows] == [(a.id, 1), (b.id, 1)]
    cursor, rows = since(cursor, 10)
    assert [(r.stammtisch_id, r.position) for r in rows] == [(a.id, 2)]
    assert since(cursor, 10) == (cursor, [])


def response(st_id: int, key: str, at=NOW, status: int = 201) -> StoredResponse:
    return StoredResponse(st_id, key, "fp-" + key, status, "application/json", b'{"id": 1}', at)


@covers("save_response", "get_response")
def test_a_stored_response_is_found_by_its_stammtisch_and_key_once(contract):
    repo = contract.repo
    a, b, _, _ = two_games(repo)
    assert repo.get_response(a.id, "k1") is None
    with repo.transaction():
        repo.save_response(response(a.id, "k1"))
    assert repo.get_response(a.id, "k1") == response(a.id, "k1")
    assert repo.get_response(b.id, "k1") is None  # keys are per Stammtisch
    repo.save_response(response(b.id, "k1", status=409))
    assert repo.get_response(b.id, "k1").status == 409
    with pytest.raises(StorageConflict):
        repo.save_response(response(a.id, "k1", status=200))  # a lost race
    assert repo.get_response(a.id, "k1").status == 201


@covers("save_response")
def test_a_response_is_stored_with_its_write_or_not_at_all(contract):
    repo = contract.repo
    a, _, _, _ = two_games(repo)
    with pytest.raises(RuntimeError), repo.transaction():
        repo.add_player(a.id, "Anna", NOW)
        repo.save_response(response(a.id, "k1"))
        raise RuntimeError("boom")
    assert repo.get_response(a.id, "k1") is None and repo.list_players(a.id) == []


@covers("purge_responses")
def test_responses_older_than_the_limit_are_forgotten(contract):
    repo = contract.repo
    a, _, _, _ = two_games(repo)
    for n in range(3):
        repo.save_response(response(a.id, f"k{n}", NOW + timedelta(hours=n)))
    repo.purge_responses(NOW + timedelta(hours=1))
    assert [repo.get_response(a.id, f"k{n}") is None for n in range(3)] == [True, False, False]
    repo.purge_responses(NOW)
    assert repo.get_response(a.id, "k1") is not None


def login(st_id: int, id_hash: str, token_hash: str = "h", hours: int = 1) -> WebSession:
    return WebSession(id_hash, st_id, token_hash, NOW_UTC + timedelta(hours=hours))


@covers("add_web_session", "get_web_session", "delete_web_session")
def test_a_login_is_found_by_its_hash_until_its_logout(contract):
    repo = contract.repo
    a, _, _, _ = two_games(repo)
    assert repo.get_web_session("s1") is None
    repo.add_web_session(login(a.id, "s1"))
    repo.add_web_session(login(a.id, "s2"))
    assert repo.get_web_session("s1") == login(a.id, "s1")
    assert contract.other().get_web_session("s1") == login(a.id, "s1")  # every server sees it
    repo.delete_web_session("s1")
    repo.delete_web_session("s1")  # twice is harmless
    assert repo.get_web_session("s1") is None and repo.get_web_session("s2") is not None


@covers("add_web_session")
def test_a_login_made_in_a_rolled_back_transaction_is_not_kept(contract):
    repo = contract.repo
    a, _, _, _ = two_games(repo)
    with pytest.raises(RuntimeError), repo.transaction():
        repo.add_web_session(login(a.id, "s1"))
        raise RuntimeError("boom")
    assert repo.get_web_session("s1") is None


@covers("purge_web_sessions")
def test_expired_logins_are_forgotten(contract):
    repo = contract.repo
    a, _, _, _ = two_games(repo)
    for n in range(3):
        repo.add_web_session(login(a.id, f"s{n}", hours=n))
    repo.purge_web_sessions(NOW_UTC + timedelta(hours=1))
    assert [repo.get_web_session(f"s{n}") is None for n in range(3)] == [True, False, False]


@covers("replace_key")
def test_a_new_key_ends_the_logins_made_with_the_old_one(contract):
    repo = contract.repo
    a, b, _, _ = two_games(repo)
    repo.add_web_session(login(a.id, "old", "h"))
    repo.add_web_session(login(b.id, "elsewhere", "h"))
    repo.replace_key(a.id, "h2")
    assert repo.get_stammtisch("a").token_hash == "h2"
    assert repo.get_stammtisch("b").token_hash == "h"
    assert repo.get_web_session("old") is None
    assert repo.get_web_session("elsewhere") is not None
    repo.add_web_session(login(a.id, "new", "h2"))
    repo.replace_key(a.id, "h2")  # the same key again: its logins stay
    assert repo.get_web_session("new") is not None


@covers("take_token")
def test_a_bucket_grants_its_burst_then_refills_at_its_rate(contract):
    repo = contract.repo
    t = 1_000_000.0
    assert [repo.take_token("k", t, 2.0, 3) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = repo.take_token("k", t, 2.0, 3)
    assert wait == pytest.approx(0.5)  # one token in half a second at 2/s
    assert repo.take_token("other", t, 2.0, 3) == 0.0  # buckets are per client
    assert repo.take_token("k", t + 0.25, 2.0, 3) == pytest.approx(0.25)
    assert repo.take_token("k", t + 0.5, 2.0, 3) == 0.0
    assert repo.take_token("k", t + 0.5, 2.0, 3) > 0.0
    assert [repo.take_token("k", t + 100, 2.0, 3) for _ in range(4)][-1] > 0.0  # burst at most


@covers("settle_tokens", "take_token")
def test_a_granted_token_is_taken_for_every_server_once_settled(contract):
    repo = contract.repo
    t = 1_000_000.0
    assert repo.take_token("k", t, 1.0, 1) == 0.0
    repo.settle_tokens()
    repo.settle_tokens()  # nothing left to take: harmless
    assert contract.other().take_token("k", t, 1.0, 1) == pytest.approx(1.0)


@covers("take_token", "settle_tokens", "transaction")
def test_two_requests_for_the_last_token_get_one_write_through(contract):
    """The bucket may run dry between a request's check and its write transaction: then the
    write is refused with RateLimited (SQLite takes the token with the write); stores that take
    it at the check refuse the second request there."""
    st = contract.repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    first, second = contract.repo, contract.other()
    t = 1_000_000.0
    assert first.take_token("k", t, 0.001, 1) == 0.0
    refused_at_check = second.take_token("k", t, 0.001, 1) > 0.0
    if not refused_at_check:
        with second.transaction():
            second.add_player(st.id, "Bert", NOW)
    written = []
    try:
        with first.transaction():
            first.add_player(st.id, "Anna", NOW)
        written.append("Anna")
    except RateLimited as limited:
        assert limited.wait == pytest.approx(1000.0)
    first.settle_tokens()
    names = [p.name for p in contract.repo.list_players(st.id)]
    assert len(names) == 1 and (names == ["Anna"]) == refused_at_check


@covers("purge_tokens")
def test_buckets_untouched_since_the_limit_are_forgotten_full(contract):
    repo = contract.repo
    t = 1_000_000.0
    repo.take_token("old", t, 0.001, 1)
    repo.take_token("new", t + 10, 0.001, 1)
    repo.settle_tokens()
    repo.purge_tokens(t + 5)
    assert repo.take_token("old", t + 10, 0.001, 1) == 0.0  # full again
    assert repo.take_token("new", t + 10, 0.001, 1) > 0.0


@covers("failed_attempts")
def test_failed_logins_count_in_a_row_until_a_success(contract):
    repo = contract.repo
    assert repo.failed_attempts("ip", 100.0, None) == (0, 0.0)
    assert repo.failed_attempts("ip", 100.0, False) == (1, 100.0)
    assert repo.failed_attempts("ip", 105.0, False) == (2, 105.0)
    assert repo.failed_attempts("ip", 101.0, False) == (3, 105.0)  # the last stays the latest
    assert contract.other().failed_attempts("ip", 200.0, None) == (3, 105.0)
    assert repo.failed_attempts("other", 200.0, None) == (0, 0.0)
    assert repo.failed_attempts("ip", 110.0, True) == (0, 0.0)
    assert repo.failed_attempts("ip", 120.0, None) == (0, 0.0)
