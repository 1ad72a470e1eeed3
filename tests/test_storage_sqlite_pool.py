"""The SQLite store's pool of connections (SQLAlchemy's, api/storage/engine.py): a server whose requests
are many short tasks (gevent's greenlets, threads) neither opens a connection per request nor
keeps one per task; at most a pool's size are in use, more wait, then a 503."""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

import pytest
from sqlalchemy import event

from api.storage import StorageUnavailable
from api.storage.engine import sqlite_engine
from api.storage.relational import take
from api.storage.sqlite.store import SQLiteStore


@pytest.fixture
def counted(tmp_path: Any) -> tuple[SQLiteStore, list[int]]:
    """A store whose new connections are counted (from after its start)."""
    store = SQLiteStore(tmp_path / "pool.sqlite3")
    made = [0]

    def connected(*_: Any) -> None:
        made[0] += 1

    event.listen(store._pool, "connect", connected)  # noqa: SLF001 - the test looks inside
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
    pool = sqlite_engine(conn_of, lambda conn: None, size=1, idle=1, wait=0.1)
    held = take(pool)
    with pytest.raises(StorageUnavailable, match="no connection free"):
        take(pool)
    got: list[Any] = []
    slow = sqlite_engine(conn_of, lambda conn: None, size=1, idle=1, wait=5)
    slow_held = take(slow)
    first = slow_held.dbapi_connection
    waiter = threading.Thread(target=lambda: got.append(take(slow)))
    waiter.start()
    slow_held.close()  # given back: the waiting task gets it
    waiter.join(5)
    assert [g.dbapi_connection for g in got] == [first]
    held.close()
    pool.dispose()
    got[0].close()
    slow.dispose()
