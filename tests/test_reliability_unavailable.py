"""A database that cannot write (a full disk, a read-only file or folder, an I/O error): every
write gets 503 with a German message and ``Retry-After``, changes nothing, is not retried a
thousand times, and ``/health`` says so – on every store.

The tests run as root, which ignores file permissions, so the fault is injected where the
adapter meets its driver: the SQLite and PostgreSQL connections raise the drivers' own errors
(a PostgreSQL server that refuses writes also says so to the health probe), the in-memory fake
has a flag.
"""

from __future__ import annotations

import re
import sqlite3
import time
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest
from conftest import PLAYERS, STORES, Table, make_table
from flask import Flask

from api.domain import STORAGE_UNAVAILABLE

pytestmark = pytest.mark.stores(*STORES)  # the reliability tests run on every store

#: what SQLite says (the texts of its real errors)
FULL = "database or disk is full"
READ_ONLY = "attempt to write a readonly database"


class _SQLiteConn:
    """A SQLite connection whose statements in ``fail`` raise the driver's error."""

    def __init__(self, conn: sqlite3.Connection, fail: set[str], fault: Fault) -> None:
        self._conn = conn
        self._fail = fail
        self._fault = fault

    def execute(self, sql: str, *args: Any) -> Any:
        word = sql.strip().split()[0].upper() if sql.strip() else ""
        if sql.strip().upper() in self._fail or word in self._fail:
            self._fault.hits += 1
            raise sqlite3.OperationalError(self._fault.message)
        return self._conn.execute(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class _FaultyPool:
    """A repository's engine (api/storage/engine.py) whose pooled connections fail the
    statements in ``fail`` (``conn``: :class:`_SQLiteConn` or :class:`_PgConn`)."""

    def __init__(self, pool: Any, fail: set[str], fault: Fault, conn: Any) -> None:
        self._pool, self._fail, self._fault, self._conn = pool, fail, fault, conn
        self.dialect, self.pool = pool.dialect, pool.pool

    def raw_connection(self) -> Any:
        taken = self._pool.raw_connection()
        return SimpleNamespace(
            dbapi_connection=self._conn(taken.dbapi_connection, self._fail, self._fault),
            close=taken.close,
        )


class _PgConn:
    """A PostgreSQL connection whose statements starting with a word of ``fail`` raise the
    driver's error: a full disk, or a server that refuses writes (and says so when asked)."""

    def __init__(self, conn: psycopg.Connection, fail: set[str], fault: Fault) -> None:
        self._conn = conn
        self._fail = fail
        self._fault = fault

    def execute(self, sql: str, *args: Any, **kw: Any) -> Any:
        word = sql.strip().split()[0].upper() if sql.strip() else ""
        read_only = self._fault.message == READ_ONLY
        if read_only and "transaction_read_only" in sql:
            return self._conn.execute("SELECT false, 'on'")
        if word in self._fail:
            self._fault.hits += 1
            if read_only:
                raise psycopg.errors.ReadOnlySqlTransaction(
                    f"cannot execute {word} in a read-only transaction"
                )
            raise psycopg.errors.DiskFull("could not extend file: No space left on device")
        return self._conn.execute(sql, *args, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class Fault:
    """Makes the app's database refuse to write (``on``) and heals it (``off``)."""

    def __init__(self, app: Flask) -> None:
        self.storage = app.config["STORAGE"]
        self.store = app.extensions["schocken"].store
        self.hits = 0
        self.message = FULL
        self._undo: list[Any] = []

    def _repos(self) -> list[Any]:
        return [self.store.repository()]

    def on(self, *, at: str = "COMMIT", message: str = FULL) -> None:
        """``at``: the SQLite statement that fails (COMMIT: a full disk at the commit; BEGIN
        IMMEDIATE: a read-only database refuses the write lock)."""
        self.message = message
        for repo in self._repos():
            if self.storage == "memory":
                original = repo.probe

                def counted(original: Any = original, repo: Any = repo) -> None:
                    if repo.unavailable is not None:
                        self.hits += 1
                    original()

                repo.unavailable = message
                repo.probe = counted
                self._undo.append((repo, "probe", None))
                self._undo.append((repo, "unavailable", None))
            elif self.storage == "postgresql":
                writes = {"INSERT", "UPDATE", "DELETE"}
                fail = writes | {"COMMIT"} if at == "COMMIT" else writes
                self._undo.append((repo, "_pool", repo._pool))
                repo._pool = _FaultyPool(repo._pool, fail, self, _PgConn)
            else:  # the connections the repository takes from its pool
                fail = {at, "INSERT", "UPDATE", "DELETE"} if at == "COMMIT" else {at}
                self._undo.append((repo, "_pool", repo._pool))
                repo._pool = _FaultyPool(repo._pool, fail, self, _SQLiteConn)

    def off(self) -> None:
        for repo, name, value in reversed(self._undo):
            if value is None and name == "probe":
                delattr(repo, name)
            else:
                setattr(repo, name, value)
        self._undo.clear()


@pytest.fixture
def fault(app: Flask) -> Any:
    f = Fault(app)
    yield f
    f.off()


def _is_503(r: Any) -> None:
    assert r.status_code == 503, (r.status_code, r.get_data(as_text=True))
    assert r.headers["Retry-After"] == "5"


def test_a_turn_on_a_full_disk_gets_503_and_records_nothing(
    client: Any, table: Table, fault: Fault
) -> None:
    game = table.start()
    assert table.turn(game, "Anna", [6, 6, 1], 1).status_code == 201
    before = table.game(game)
    fault.on()
    r = table.turn(game, "Bert", [4, 2, 1], 1)
    _is_503(r)
    assert r.json["message"] == STORAGE_UNAVAILABLE
    assert fault.hits >= 1
    for write in (
        lambda: table.post("/players", {"name": "Egon"}),
        lambda: table.post("/games", {"players": PLAYERS, "starter": "Anna"}),
        lambda: table.patch("", {"name": "Zur Neuen Post"}),
    ):
        _is_503(write())
    fault.off()
    assert table.game(game) == before  # nothing of the failed turn, the engine state replayed
    r = table.turn(game, "Bert", [4, 2, 1], 1)
    assert r.status_code == 201, r.json
    assert table.game(game)["seq"] == before["seq"] + 1


def test_creating_a_stammtisch_on_a_full_disk_fails_at_once(client: Any, fault: Fault) -> None:
    fault.on()
    started = time.perf_counter()
    r = client.post("/api/v1/stammtische", json={"name": "Zur Post"})
    elapsed = time.perf_counter() - started
    _is_503(r)
    assert r.json["message"] == STORAGE_UNAVAILABLE
    assert fault.hits <= 2, "the slug loop must not retry a database that cannot write"
    assert elapsed < 1.0
    fault.off()
    assert make_table(client).slug == "zur-post"  # nothing was left behind


def test_health_reports_a_database_that_cannot_write(client: Any, fault: Fault) -> None:
    client.application.config["ADMIN_TOKEN"] = "admin-geheim"
    admin = {"headers": {"Authorization": "Bearer admin-geheim"}}
    ok = client.get("/api/v1/health", **admin)
    assert ok.status_code == 200
    assert ok.json["status"] == "ok" and "database" not in ok.json
    fault.on(at="BEGIN IMMEDIATE", message=READ_ONLY)
    r = client.get("/api/v1/health")  # everyone: degraded, the cause only for the admin
    _is_503(r)
    assert r.json == {"status": "degraded", "storage": ok.json["storage"]}
    r = client.get("/api/v1/health", **admin)
    _is_503(r)
    assert r.json["status"] == "degraded"
    assert r.json["storage"] == ok.json["storage"]
    assert r.json["version"] == ok.json["version"]
    assert any(word in r.json["database"] for word in ("readonly", "invalidated", "read-only"))
    fault.off()
    assert client.get("/api/v1/health", **admin).json == ok.json


def test_a_read_only_database_refuses_a_turn_with_503(
    client: Any, table: Table, fault: Fault
) -> None:
    game = table.start()
    fault.on(at="BEGIN IMMEDIATE", message=READ_ONLY)
    _is_503(table.turn(game, "Anna", [6, 6, 1], 1))
    fault.off()
    assert table.turn(game, "Anna", [6, 6, 1], 1).status_code == 201


def _csrf(r: Any) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', r.get_data(as_text=True))
    assert found
    return found.group(1)


def test_the_form_shows_the_german_message_with_503(app: Flask, fault: Fault) -> None:
    app.config["SECRET_KEY"] = "t" * 40
    web = app.test_client()
    token = _csrf(web.get("/"))
    fault.on()
    data = {"name": "Zur Post", "preset": "standard", "public": "1", "csrf_token": token}
    r = web.post("/stammtisch", data=data)
    _is_503(r)
    assert STORAGE_UNAVAILABLE in r.get_data(as_text=True)
    assert r.mimetype == "text/html"
    fault.off()
    r = web.post("/stammtisch", data=data)  # created: on to the page that shows its key
    assert r.status_code == 303 and r.headers["Location"] == "/s/zur-post/schluessel"


@pytest.mark.parametrize("storage", ["sqlite"])
@pytest.mark.parametrize("what", ["full", "read-only"])
def test_health_sees_a_full_disk_or_a_read_only_folder_beside_the_database_file(
    storage: str, what: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from collections import namedtuple

    from api.app import create_app
    from api.storage import repository

    database = tmp_path / "db" / f"test.{storage}"
    app = create_app(
        {"STORAGE": storage, "DATABASE": str(database), "TESTING": True, "ADMIN_TOKEN": "a"}
    )
    try:
        client = app.test_client()
        assert client.get("/api/v1/health").status_code == 200
        if what == "full":
            usage = namedtuple("usage", "total used free")
            monkeypatch.setattr(repository.shutil, "disk_usage", lambda _p: usage(9, 9, 0))
        else:  # root ignores permissions: ask os.access as an ordinary user would be told
            folder = str(database.parent)
            monkeypatch.setattr(repository.os, "access", lambda p, _m: str(p) != folder)
        assert str(database.parent) not in client.get("/api/v1/health").get_data(as_text=True)
        r = client.get("/api/v1/health", headers={"Authorization": "Bearer a"})
        _is_503(r)
        assert r.json["status"] == "degraded"
        assert ("disk full" if what == "full" else "read-only") in r.json["database"]
        monkeypatch.undo()
        assert client.get("/api/v1/health").status_code == 200
    finally:
        app.extensions["schocken"].store.close()
