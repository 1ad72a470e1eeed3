"""The stream hub of a server process (api/http/hub.py), in this process: each stream an
answer body (api/http/sse.py ``EventStream``) that a thread of its own writes into a socket
pair, as a server's task would; the app's SQLite store (its data_version watch) or the
in-memory fake (polled)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from conftest import app_on, make_table
from test_api_events import ANNA, events

from api.app import create_app
from api.domain.events import PAGE, Access, Cursor
from api.http.hub import CLIENT_FULL, FULL, StreamHub
from api.http.sse import RETRY, EventStream, StreamSettings
from api.storage.watch import SQLiteWatch


@pytest.fixture(params=["sqlite", "memory"])
def app(request: Any, tmp_path: Any) -> Iterator[Any]:
    yield from app_on(request.param, tmp_path)


@pytest.fixture
def table(app: Any) -> Any:
    t = make_table(app.test_client())
    t.add_players(["Anna", "Bert"])
    return t


class Anyone(Access):
    """An access that always holds (the tests of everything else)."""

    def holds(self, repo: Any) -> bool:
        return True


class Client:
    """The client end of a stream: everything it read so far."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.data = sock, b""
        sock.settimeout(5)

    def read_until(self, done: Callable[[str], bool], seconds: float = 5) -> str:
        """Read until ``done(all read so far)`` (or the end); all read so far."""
        deadline = time.monotonic() + seconds
        while not done(self.data.decode(errors="replace")):
            assert time.monotonic() < deadline, self.data
            chunk = self.sock.recv(65536)
            if not chunk:
                break
            self.data += chunk
        return self.data.decode()

    def close(self) -> None:
        self.sock.close()


def pump(body: EventStream, sock: socket.socket) -> None:
    """What a server's task does with a stream's answer: write each piece until the body
    ends or the client is gone, then close both."""
    try:
        for piece in body:
            sock.sendall(piece)
    except OSError:
        pass
    finally:
        body.close()
        sock.close()


class Hub:
    """A hub on the app's store and the client ends of its streams."""

    def __init__(self, app: Any, **settings: Any) -> None:
        defaults = {"heartbeat": 30.0, "per_process": 10}
        self.store = app.extensions["schocken"].store
        self.settings = StreamSettings(**{**defaults, **settings})
        self.hub = StreamHub(self.store, self.settings)
        self.clients: list[Client] = []

    def open(
        self, cursor: Cursor, bufsize: int | None = None, access: Access | None = None
    ) -> Client:
        assert self.hub.reserve("client") is None
        ours, theirs = socket.socketpair()
        if bufsize:
            for sock in (ours, theirs):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, bufsize)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, bufsize)
        access = access or Anyone("-", None)
        body = EventStream(self.store, cursor, access, self.settings, self.hub, "client", theirs)
        threading.Thread(target=pump, args=(body, theirs), daemon=True).start()
        self.clients.append(Client(ours))
        return self.clients[-1]

    def stop(self) -> None:
        self.hub.stop()
        for client in self.clients:
            client.close()


@pytest.fixture
def hubs() -> Iterator[list[Hub]]:
    made: list[Hub] = []
    yield made
    for h in made:
        h.stop()


def hub_of(hubs: list[Hub], app: Any, **settings: Any) -> Hub:
    hubs.append(Hub(app, **settings))
    return hubs[-1]


def wait_for(condition: Callable[[], bool], seconds: float = 3) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def st_id(app: Any, slug: str) -> int:
    return int(app.extensions["schocken"].store.repository().get_stammtisch(slug).id)


def test_streams_get_the_backlog_then_what_is_written(app, table, hubs):
    h = hub_of(hubs, app)
    game = table.start(["Anna", "Bert"])
    st = st_id(app, table.slug)
    whole = h.open(Cursor(st, None, 0))
    one_game = h.open(Cursor(st, game, 0))
    assert whole.read_until(lambda t: "id: 1\n" in t).startswith(RETRY.decode())
    assert table.post(f"/games/{game}/turns", ANNA).status_code == 201
    started = time.monotonic()  # from the write's answer: its own time is the machine's load
    got = events(whole.read_until(lambda t: "id: 2\n" in t).partition("retry: 3000\n\n")[2])
    assert time.monotonic() - started < 1
    assert [(m["event"], m.get("id")) for m in got] == [
        ("game_started", "1"),
        ("turn_recorded", "2"),
    ]
    got = events(one_game.read_until(lambda t: "id: 1\n" in t).partition("\n\n")[2])
    assert [(m["event"], m["id"]) for m in got] == [("turn_recorded", "1")]  # seq 0 is before


@pytest.mark.parametrize("app", ["sqlite"], indirect=True)  # the fake starts games slowly
def test_a_stream_catches_up_page_by_page(app, table, hubs):
    h = hub_of(hubs, app)
    for _ in range(PAGE + 30):
        table.start(["Anna", "Bert"])
    sock = h.open(Cursor(st_id(app, table.slug), None, 5))
    text = sock.read_until(lambda t: f"id: {PAGE + 30}\n" in t)
    assert [int(m["id"]) for m in events(text.partition("\n\n")[2])] == list(range(6, PAGE + 31))
    table.start(["Anna", "Bert"])  # and on, live
    assert f"id: {PAGE + 31}\n" in sock.read_until(lambda t: f"id: {PAGE + 31}\n" in t)


def joined(h: Hub) -> int:
    return sum(len(channel.streams) for channel in h.hub.channels.values())


def test_a_vanished_client_is_freed_at_once(app, table, hubs):
    h = hub_of(hubs, app)  # heartbeats every 30 s
    socks = [h.open(Cursor(st_id(app, table.slug), None, 0)) for _ in range(3)]
    socks[0].read_until(lambda t: "retry" in t)
    assert h.hub.count() == 3
    socks[0].close()
    wait_for(lambda: h.hub.count() == 2, 1)
    wait_for(lambda: joined(h) == 2, 1)


def test_the_caps_per_process_and_per_client(app, table, hubs):
    h = hub_of(hubs, app, per_process=3, per_client=2)
    first = h.open(Cursor(st_id(app, table.slug), None, 0))  # of "client"
    assert h.hub.reserve("client") is None
    assert h.hub.reserve("client") == CLIENT_FULL  # its two
    assert h.hub.reserve("another") is None
    assert h.hub.reserve("a third") == FULL  # the process's three
    h.hub.release("another")
    assert h.hub.reserve("a third") is None
    first.close()
    wait_for(lambda: h.hub.count() == 2)  # the stream ended: its place is free
    assert h.hub.reserve("client") is None
    h.hub.stop()
    assert h.hub.reserve("new") == FULL  # a stopping hub takes no more


def test_a_client_that_does_not_read_is_dropped(app, table, hubs):
    h = hub_of(hubs, app, buffer=4000)
    st = st_id(app, table.slug)
    slow = h.open(Cursor(st, None, 0), bufsize=2048)
    fine = h.open(Cursor(st, None, 0))
    for _ in range(60):  # ~300 bytes each: more than the kernel's and the hub's buffers
        table.start(["Anna", "Bert"])
    assert "id: 60\n" in fine.read_until(lambda t: "id: 60\n" in t)
    wait_for(lambda: h.hub.count() == 1)
    received = b""
    while chunk := slow.sock.recv(65536):  # what it had, then the end
        received += chunk
    assert b"id: 60\n" not in received


def test_heartbeats_and_the_stop(app, table, hubs):
    h = hub_of(hubs, app, heartbeat=0.1)
    client = h.open(Cursor(st_id(app, table.slug), None, 0))
    assert client.read_until(lambda t: t.count(": ping\n\n") >= 2, 2)
    h.hub.stop()
    while client.sock.recv(65536):  # then the end: the client reconnects elsewhere
        pass
    assert h.hub.count() == 0


@pytest.mark.parametrize("app", ["sqlite"], indirect=True)
def test_sqlite_writes_wake_the_hub_before_its_poll(app, table, hubs, monkeypatch):
    """The WAL file's writes (inotify) wake the hub: a stream gets an entry long before the
    poll would have looked."""
    monkeypatch.setattr(SQLiteWatch, "interval", 30.0)
    h = hub_of(hubs, app)
    game = table.start(["Anna", "Bert"])
    client = h.open(Cursor(st_id(app, table.slug), game, 0))
    client.read_until(lambda t: "retry" in t)
    time.sleep(0.1)  # the stream is live
    started = time.monotonic()
    table.post(f"/games/{game}/turns", ANNA)
    client.read_until(lambda t: "id: 1\n" in t, 2)
    assert time.monotonic() - started < 1


def test_a_failing_store_delays_the_streams_without_ending_them(app, table, hubs, monkeypatch):
    import api.http.hub as hub_module

    failures = [RuntimeError("database down")] * 3
    real_page = hub_module.page

    def flaky(*args: Any) -> Any:
        if failures:
            raise failures.pop()
        return real_page(*args)

    monkeypatch.setattr(hub_module, "RETRY_SECONDS", 0.05)
    h = hub_of(hubs, app)
    game = table.start(["Anna", "Bert"])
    client = h.open(Cursor(st_id(app, table.slug), game, 0))
    client.read_until(lambda t: "retry" in t)
    # caught up, so a page read begun before the store fails cannot carry the turn
    wait_for(lambda: joined(h) == 1)
    time.sleep(0.1)  # a round that was already reading has ended
    monkeypatch.setattr(hub_module, "page", flaky)
    table.post(f"/games/{game}/turns", ANNA)
    assert "id: 1\n" in client.read_until(lambda t: "id: 1\n" in t, 3)
    assert failures == [] and h.hub.count() == 1


def test_a_lost_listen_connection_loses_no_event(pg_url, hubs):
    """PostgreSQL: the LISTEN connection ends (a restart, a network cut); the hub opens it
    again and reads what came meanwhile from the store."""
    import psycopg

    app = create_app({"STORAGE": "postgresql", "DATABASE_URL": pg_url, "TESTING": True})
    try:
        table = make_table(app.test_client())
        table.add_players(["Anna", "Bert"])
        h = hub_of(hubs, app)
        game = table.start(["Anna", "Bert"])
        client = h.open(Cursor(st_id(app, table.slug), game, 0))
        client.read_until(lambda t: "retry" in t)
        time.sleep(0.2)  # the stream is live, the watch listens
        with psycopg.connect(pg_url, autocommit=True) as conn:
            ended = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE query = 'LISTEN schocken_events' AND pid <> pg_backend_pid()"
            ).fetchall()
        assert ended == [(True,)]
        table.post(f"/games/{game}/turns", ANNA)
        assert "id: 1\n" in client.read_until(lambda t: "id: 1\n" in t, 5)
        h.stop()
    finally:
        app.extensions["schocken"].store.close()


def test_a_stream_ends_when_its_stammtisch_turns_private_or_its_key_changes(app, table, hubs):
    from api.domain.events import Access

    h = hub_of(hubs, app, heartbeat=0.1)
    st = app.extensions["schocken"].store.repository().get_stammtisch(table.slug)
    public = h.open(Cursor(st.id, None, 0), access=Access.of(st))
    public.read_until(lambda t: ": ping" in t)
    assert table.patch("", {"private": True}).status_code == 200
    while public.sock.recv(65536):  # ends at the next heartbeat
        pass
    st = app.extensions["schocken"].store.repository().get_stammtisch(table.slug)
    keyed = h.open(Cursor(st.id, None, 0), access=Access.of(st))
    assert keyed.read_until(lambda t: t.count(": ping") >= 3)  # goes on
    wrong_key = h.open(Cursor(st.id, None, 0), access=Access(table.slug, "another key"))
    while wrong_key.sock.recv(65536):
        pass
    wait_for(lambda: h.hub.count() == 1)
