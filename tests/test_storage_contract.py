"""The storage port's contract: every public method of the port (:class:`api.storage.Repository`
with its webhook part) and of the stores ``open_store`` makes (the in-memory fake, SQLite,
PostgreSQL) has a test here or in tests/test_storage_contract_*.py that names it with
``@covers`` (tests/storage_contract.py), run on every store; this file checks that none is
missing, and holds the store-level part (repositories, closing, migrations, copies).

A new port method comes with its contract test, or
:func:`test_every_public_method_of_the_port_and_its_stores_has_a_contract_test` fails.
"""

from __future__ import annotations

import ast
import functools
import inspect
import threading
from pathlib import Path
from typing import Any

import pytest
from storage_contract import NOW, covers, new_game

from api.storage import (
    LogEntry,
    MemoryRepository,
    MemoryStore,
    PostgresRepository,
    PostgresStore,
    Repository,
    SQLiteRepository,
    SQLiteStore,
    StorageUnavailable,
    open_store,
)
from api.storage.records import Stammtisch
from api.storage.sql import migrations as package_migrations

HERE = Path(__file__).parent


@functools.cache
def covered() -> dict[str, list[str]]:
    """What the ``@covers`` of every contract test names: method → tests."""
    found: dict[str, list[str]] = {}
    for path in sorted(HERE.glob("test_storage_contract*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
                continue
            for decorator in node.decorator_list:
                if (
                    isinstance(decorator, ast.Call)
                    and getattr(decorator.func, "id", "") == "covers"
                ):
                    for arg in decorator.args:
                        assert isinstance(arg, ast.Constant), f"{path.name}:{node.lineno}"
                        found.setdefault(str(arg.value), []).append(node.name)
    return found


def public(owner: type) -> set[str]:
    """The public members of a class, inherited ones included."""
    return {name for name, _ in inspect.getmembers(owner) if not name.startswith("_")}


def required(repository: type, store: type) -> set[str]:
    return public(repository) | {f"store.{name}" for name in public(store)}


def test_every_public_method_of_the_port_and_its_stores_has_a_contract_test(contract):
    missing = sorted(required(type(contract.repo), type(contract.store)) - set(covered()))
    assert not missing, (
        f"{contract.kind}: port or store methods without a contract test (write one, marked "
        f"@covers(...), in tests/test_storage_contract*.py): {', '.join(missing)}"
    )


def test_every_method_a_contract_test_names_exists():
    stores = {MemoryStore: MemoryRepository, SQLiteStore: SQLiteRepository,
              PostgresStore: PostgresRepository}  # fmt: skip
    known = set().union(*(required(repository, store) for store, repository in stores.items()))
    assert public(Repository) <= known
    stale = sorted(set(covered()) - known - {"open_store"})
    assert not stale, f"@covers names no method of the port or a store: {stale}"


@covers("open_store")
def test_open_store_makes_the_store_of_each_kind_and_refuses_the_rest(tmp_path, pg_url):
    made = [open_store("memory", None), open_store("sqlite", tmp_path / "s.sqlite3"),
            open_store("postgresql", pg_url)]  # fmt: skip
    try:
        assert [type(s) for s in made] == [MemoryStore, SQLiteStore, PostgresStore]
    finally:
        for store in made:
            store.close()
    for kind, path in (("sqlite", None), ("postgresql", ""), ("duckdb", "x"), ("mysql", "x")):
        with pytest.raises(ValueError):
            open_store(kind, path)


@covers("store.repository")
def test_a_thread_keeps_its_repository_and_sees_what_others_committed(contract):
    store = contract.store
    repo = store.repository()
    assert isinstance(repo, Repository) and store.repository() is repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    seen: list[Any] = []

    def elsewhere() -> None:
        other = store.repository()
        seen.append(other.get_stammtisch("a"))
        other.add_player(st.id, "Anna", NOW)
        other.close()

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join(10)
    assert seen == [st] and [p.name for p in repo.list_players(st.id)] == ["Anna"]


@covers("store.close")
def test_closing_a_store_stops_its_background_threads_first(contract):
    store = contract.fresh_store()
    store.repository().add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    rounds: list[int] = []

    def refresher() -> None:
        while not store.background.stopping.wait(0.01):
            store.repository().get_stammtisch("a")  # still usable: close waits for this
        rounds.append(1)

    thread = store.background.start(refresher, "refresher")
    store.close()
    assert not thread.is_alive() and rounds == [1]


@covers("store.close", "store.repository")
def test_a_closed_store_keeps_what_was_committed(contract):
    store = contract.fresh_store()
    if contract.kind == "memory":
        pytest.skip("the fake keeps nothing beyond its store")
    st = store.repository().add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    game = store.repository().add_game(new_game(st.id))
    store.repository().append_log(LogEntry(game, 1, "turn", {"player": "Anna"}, NOW))
    store.close()
    again = SQLiteStore(store.path) if contract.kind == "sqlite" else PostgresStore(store.url)
    try:
        assert again.repository().get_stammtisch("a") == st
        assert [e.seq for e in again.repository().load_log(game)] == [1]
    finally:
        again.close()


@covers("store.open_repository", "disconnect")
def test_a_repository_of_its_own_sees_the_commits_and_ends_with_disconnect(contract):
    open_repository = contract.has(contract.store, "open_repository")
    own = open_repository()
    assert own is not contract.store.repository()
    st = contract.repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    assert own.get_stammtisch("a") == st
    with own.transaction():
        own.add_player(st.id, "Anna", NOW)
    assert [p.name for p in contract.repo.list_players(st.id)] == ["Anna"]
    own.disconnect()
    own.disconnect()  # twice is harmless
    assert own.disconnected
    assert contract.store.repository().get_stammtisch("a") == st  # the store goes on


@covers("disconnect", "store.repository")
def test_a_disconnected_repository_is_replaced_by_the_next_request(contract):
    repo = contract.repo
    contract.has(repo, "disconnect")()
    fresh = contract.store.repository()
    assert fresh is not repo
    assert fresh.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW)).slug == "a"


@covers("store.connect")
def test_a_connection_of_its_own_reads_the_database(contract):
    connect = contract.has(contract.store, "connect")
    st = contract.repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    conn = connect()
    try:
        assert conn.execute("SELECT id FROM stammtische").fetchall() == [(st.id,)]
    finally:
        conn.close()


@covers("store.migrate", "store.applied")
def test_a_migrated_database_has_every_migration_once(contract):
    migrate = contract.has(contract.store, "migrate")
    assert migrate() == []  # at the newest version already
    applied = contract.store.applied()
    versions = [v for v, _ in applied]
    assert versions and versions == sorted(set(versions))
    assert all(name for _, name in applied)


@covers("store.migrate")
def test_the_database_file_is_created_and_migrated_once(tmp_path):
    """SQLite: a new file is made and migrated, and opened again as it is."""
    path = tmp_path / "sub" / "s.sqlite3"
    store = SQLiteStore(path)
    assert store.migrate() == []  # already at the newest version
    st = store.repository().add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    store.close()
    again = SQLiteStore(path)
    assert again.repository().get_stammtisch("a") == st
    assert [v for v, _ in again.applied()] == [
        v for v, _, _ in package_migrations("api.storage.sqlite")
    ]
    again.close()


@covers("store.kinds")
def test_the_stores_schema_names_every_column_of_the_records(contract):
    kinds = contract.has(contract.store, "kinds")
    from api.storage.records import TABLE_COLUMNS

    for table, columns in TABLE_COLUMNS.items():
        assert set(columns) <= {name for name, _ in kinds[table]}, table


@covers("store.backup_to", "store.open_copy")
def test_a_backup_is_a_read_only_copy_of_one_moment(contract, tmp_path):
    backup_to = contract.has(contract.store, "backup_to")
    repo = contract.repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    game = repo.add_game(new_game(st.id))
    repo.append_log(LogEntry(game, 1, "turn", {"player": "Anna"}, NOW))
    assert backup_to(tmp_path / "copy.sqlite3") >= 20  # tables
    repo.append_log(LogEntry(game, 2, "turn", {"player": "Bert"}, NOW))  # after the copy
    with pytest.raises(FileExistsError):
        backup_to(tmp_path / "copy.sqlite3")  # only into a new file
    copy = contract.store.open_copy(tmp_path / "copy.sqlite3")
    try:
        assert copy.get_stammtisch("a") == st
        assert [e.seq for e in copy.load_log(game)] == [1]
        with pytest.raises(StorageUnavailable, match="readonly"):
            copy.add_player(st.id, "Anna", NOW)
    finally:
        copy.disconnect()


@covers("store.restore")
def test_a_backup_is_restored_into_a_new_migrated_file(contract, tmp_path):
    backup_to = contract.has(contract.store, "backup_to")
    st = contract.repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    backup_to(tmp_path / "copy.sqlite3")
    target = tmp_path / "restored.sqlite3"
    type(contract.store).restore(tmp_path / "copy.sqlite3", target)
    with pytest.raises(FileExistsError):
        type(contract.store).restore(tmp_path / "copy.sqlite3", target)
    restored = SQLiteStore(target)
    try:
        assert restored.repository().get_stammtisch("a") == st
        assert restored.migrate() == []
    finally:
        restored.close()
