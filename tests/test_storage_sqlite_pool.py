"""The SQLite store's pool of connections (api/storage/sqlite/pool.py): a server whose requests
are many short tasks (gevent's greenlets, threads) neither opens a connection per request nor
keeps one per task; at most a pool's size are in use, more wait, then a 503."""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

import pytest

from api.storage import StorageUnavailable
from api.storage.sqlite.pool import Pool
from api.storage.sqlite.store import SQLiteStore


@pytest.fixture
def counted(tmp_path: Any, monkeypatch: Any) -> tuple[SQLiteStore, list[int]]:
    """A store whose new connections are counted (from after its start)."""
    store = SQLiteStore(tmp_path / "pool.sqlite3")
    made = [0]
    real = Pool.take

    def take(pool: Pool) -> sqlite3.Connection:
        idle = bool(pool._idle)  # noqa: SLF001 - the test looks inside
        made[0] += not idle
        return real(pool)

    monkeypatch.setattr(Pool, "take", take)
    return store, made


def test_requests_of_many_tasks_share_a_few_connections(counted):
    store, made = counted

    def request() -> None:  # a task of its own, one request, as a greenlet per connection
        repo = store.repository()
        repo.stammtisch_ids()
        repo.close()

    try:
        for _ in range(50):
            task = threading.Thread(target=request)
            task.start()
            task.join()
        assert made[0] == 1  # one connection, taken and given back 50 times
    finally:
        store.close()


def test_a_request_holds_its_connection_until_its_end_and_writes_stay_one_at_a_time(counted):
    store, made = counted
    try:
        first, second = store.open_repository(), store.repository()
        with first.transaction():  # a writer of its own connection holds the write lock
            assert second.stammtisch_ids() == []  # readers go on (WAL)
        second.close()
        again = store.repository()
        assert again.stammtisch_ids() == [] and made[0] == 1
        again.close()
    finally:
        store.close()


def test_a_full_pool_makes_the_next_task_wait_then_refuses(tmp_path):
    conn_of = lambda: sqlite3.connect(tmp_path / "x.sqlite3", check_same_thread=False)  # noqa: E731
    pool = Pool(conn_of, size=1, idle=1, wait=0.1)
    held = pool.take()
    with pytest.raises(StorageUnavailable, match="no connection free"):
        pool.take()
    got: list[sqlite3.Connection] = []
    slow = Pool(conn_of, size=1, idle=1, wait=5)
    slow_held = slow.take()
    waiter = threading.Thread(target=lambda: got.append(slow.take()))
    waiter.start()
    slow.give(slow_held)  # the waiting task gets it
    waiter.join(5)
    assert got == [slow_held]
    pool.give(held)
    pool.close()
    slow.give(got[0])
    slow.close()
