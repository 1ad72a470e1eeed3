"""The storage-port contract suite's harness: one :class:`Contract` per store (the in-memory
fake, a SQLite file, a PostgreSQL database), the records the tests build, and :func:`covers`,
which names the port methods a test checks (tests/test_storage_contract.py fails when a public
method of the port or of a store has no test naming it).

Fast by design: a SQLite store opens a copy of a file migrated once per run (in /dev/shm where
there is one); PostgreSQL uses one store per run on a database of the session's cluster
(tests/pgcluster.py) whose tables are emptied before each test (``TRUNCATE … RESTART
IDENTITY``).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psycopg
import pytest

from api.storage import (
    GamePlayer,
    MemoryStore,
    NewGame,
    PostgresStore,
    Repository,
    SQLiteStore,
)

#: every store the contract runs on
CONTRACT_STORES = ["memory", "sqlite", "postgresql"]

NOW = datetime(2026, 11, 27, 19, 0)
#: an aware moment (logins of the pub form carry one)
NOW_UTC = NOW.replace(tzinfo=UTC)


def covers(*methods: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Marks a contract test as the check of these methods: a repository method by its name
    (``"append_log"``), a store method as ``"store.<name>"``. Read back from the source by
    tests/test_storage_contract.py, so a port method without a test fails the suite."""

    def mark(test: Callable[..., Any]) -> Callable[..., Any]:
        return test

    return mark


def new_game(st_id: int, year: int = 2026, players=((1, "Anna"), (2, "Bert")), day: int = 27):
    return NewGame(
        stammtisch_id=st_id,
        header={"players": [n for _, n in players], "starter": players[0][1]},
        rules={"preset": "standard", "overrides": {}},
        options={"deckel": 13},
        played_at=f"{year}-11-{day:02d}T20:15:00+01:00",
        played_at_utc=datetime(year, 11, day, 19, 15),
        played_local=datetime(year, 11, day, 20, 15),
        year=year,
        source="api",
        created_at=NOW,
        players=tuple(GamePlayer(i, pid, n, i == 0) for i, (pid, n) in enumerate(players)),
    )


def game_row(game_id: int, status: str = "running", phase: str = "half1", loser=None) -> dict:
    return {
        "game_id": game_id, "status": status, "phase": phase, "loser_id": None,
        "loser": loser, "blattschuss": False, "finalist1_id": None, "finalist2_id": None,
    }  # fmt: skip


def turn_row(game_id: int, n: int) -> dict:
    return {
        "game_id": game_id, "turn_no": n, "seq": n, "half": "half1", "round_no": 1,
        "player_id": 1, "player": "Anna", "dice": "1-1-4", "throws": 3, "hand": False,
        "blind": False, "category": "schock", "result_name": "Schock 4", "deckel_value": 4,
        "rank_key": 880000, "entry": "summary",
    }  # fmt: skip


def summary_row(game_id: int, st_id: int, player_id: int, lost: bool, deckel: int = 3) -> dict:
    """A row of player_game_facts (a finished game's summary of one player)."""
    return {
        "game_id": game_id, "player_id": player_id, "stammtisch_id": st_id, "year": 2026,
        "played_local": datetime(2026, 11, 27, 20, 15), "lost": lost, "finalist": False,
        "finale_lost": False, "blattschuss": False, "halves_lost": 1 if lost else 0,
        "deckel": deckel, "deckel_half1": deckel, "deckel_half2": 0, "deckel_finale": 0,
        "turns": 4, "schock_aus": 0, "fair_schock_aus": 0, "fair_schock": 1, "fair_general": 0,
        "fair_strasse": 0, "fair_zahl": 1,
    }  # fmt: skip


@dataclass
class Contract:
    """One store under test: ``store``, its ``repo`` (the request's repository), and helpers
    for what only some stores have."""

    kind: str
    store: Any
    #: another store of this kind on a database of its own, and what closes and removes it
    make_store: Callable[[], tuple[Any, Callable[[], None]]]
    _cleanup: list[Callable[[], None]] = field(default_factory=list)

    @property
    def repo(self) -> Repository:
        return self.store.repository()

    def other(self) -> Repository:
        """A second repository on the same database (another request, another connection;
        the fake has one repository, shared)."""
        if self.kind == "memory":
            return self.repo
        repo = self.store.open_repository()
        self._cleanup.append(repo.disconnect)
        return repo

    def fresh_store(self) -> Any:
        """A store of its own (closed after the test unless the test closed it)."""
        store, finish = self.make_store()
        self._cleanup.append(finish)
        return store

    def has(self, owner: Any, name: str) -> Any:
        """``owner.name``; skips the test on a store that has no such method."""
        if not hasattr(owner, name):
            pytest.skip(f"{self.kind}: no {type(owner).__name__}.{name}")
        return getattr(owner, name)

    def finish(self) -> None:
        for action in reversed(self._cleanup):
            action()
        self._cleanup.clear()


class SQLiteTemplate:
    """A SQLite file migrated once; each store opens a copy of it. In memory (``/dev/shm``)
    where there is one: every commit syncs the WAL to disk, which costs most of a test's time
    on a busy disk and tells the contract nothing."""

    def __init__(self, fallback: Path) -> None:
        shm = Path("/dev/shm")
        in_memory = shm.is_dir() and os.access(shm, os.W_OK)
        self.folder = (
            Path(tempfile.mkdtemp(prefix="schocken-contract-", dir=shm)) if in_memory else fallback
        )
        self.template = self.folder / "template.sqlite3"
        SQLiteStore(self.template).close()  # closed: the WAL is checkpointed into the file
        self.count = 0

    def store(self) -> SQLiteStore:
        self.count += 1
        path = self.folder / f"contract-{self.count}.sqlite3"
        shutil.copyfile(self.template, path)
        return SQLiteStore(path)

    def fresh(self) -> tuple[SQLiteStore, Callable[[], None]]:
        store = self.store()
        return store, lambda: self.remove(store)

    def remove(self, store: SQLiteStore) -> None:
        """Close the store and remove its files (the database and those beside it)."""
        store.close()
        for path in self.folder.glob(Path(store.path).name + "*"):
            path.unlink(missing_ok=True)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class PostgresTables:
    """One store per run on a database of the cluster, emptied before each test."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.url = cluster.fresh_url()
        self.store = PostgresStore(self.url)
        self.conn = psycopg.connect(self.url, autocommit=True)
        self.conn.execute("SET lock_timeout = '5s'")
        tables = [t for (t,) in self.conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename <> 'schema_migrations' ORDER BY tablename"
        )]  # fmt: skip
        #: the tables with rows (a test writes a few of them: only those are emptied)
        self.filled = " UNION ALL ".join(
            f"SELECT '{t}' WHERE EXISTS (SELECT 1 FROM {t})"  # noqa: S608 - the schema's names
            for t in tables
        )
        sequences = self.conn.execute(  # identity columns' too
            "SELECT sequencename FROM pg_sequences WHERE schemaname = 'public'"
        ).fetchall()
        self.restart = "; ".join(f"ALTER SEQUENCE {s} RESTART" for (s,) in sequences)

    def empty(self) -> PostgresStore:
        """The store, its tables emptied and their ids starting from 1 again."""
        self.store.repository().close()
        filled = [t for (t,) in self.conn.execute(self.filled)]
        if filled:
            self.conn.execute(f"TRUNCATE {', '.join(filled)} CASCADE")
        if self.restart:
            self.conn.execute(self.restart)
        return self.store

    def fresh(self) -> tuple[PostgresStore, Callable[[], None]]:
        url = self.cluster.fresh_url()
        store = PostgresStore(url)

        def finish() -> None:
            store.close()
            self.cluster.drop(url)

        return store, finish

    def close(self) -> None:
        self.conn.close()
        self.store.close()
        self.cluster.drop(self.url)


def contract_for(kind: str, request: pytest.FixtureRequest) -> Iterator[Contract]:
    """The :class:`Contract` of ``kind`` (for the ``contract`` fixture of tests/conftest.py)."""
    if kind == "memory":

        def memory() -> tuple[MemoryStore, Callable[[], None]]:
            store = MemoryStore()
            return store, store.close

        contract = Contract(kind, MemoryStore(), memory)
        contract._cleanup.append(contract.store.close)
    elif kind == "sqlite":
        template: SQLiteTemplate = request.getfixturevalue("sqlite_template")
        store, finish = template.fresh()
        contract = Contract(kind, store, template.fresh)
        contract._cleanup.append(finish)
    else:
        tables: PostgresTables = request.getfixturevalue("pg_tables")
        contract = Contract(kind, tables.empty(), tables.fresh)
        contract._cleanup.append(contract.store.repository().close)
    try:
        yield contract
    finally:
        contract.finish()
