"""What only the SQLite adapter has to prove: durable settings on every connection, the
primary key (game, seq) as the guard between writers (threads and processes), migrations
applied once, recorded, lined up with DuckDB's, and acknowledged writes surviving a kill -9."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pytest
from conftest import PLAYERS, make_table
from flask import Flask
from storage_contract import NOW, game_row, new_game, turn_row

from api.app import create_app
from api.bench.snapshot import connection_for
from api.rules import PRESETS
from api.rules.simulate import simulate_logs
from api.storage import (
    FactsWrite,
    LogEntry,
    MigrationError,
    SQLiteStore,
    StorageConflict,
    open_store,
)
from api.storage.convert import DUCKDB_VERSION
from api.storage.records import (
    FACT_COLUMNS,
    LUCK_COLUMNS,
    RESPONSE_COLUMNS,
    TABLE_COLUMNS,
    GameQuery,
    Stammtisch,
)
from api.storage.sql import migrations as package_migrations
from api.storage.sql import statements

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def store(tmp_path):
    store = SQLiteStore(tmp_path / "s.sqlite3")
    yield store
    store.close()


def pragma(conn: sqlite3.Connection, name: str):
    return conn.execute(f"PRAGMA {name}").fetchone()[0]


def test_every_connection_is_durable_and_checks_references(store):
    """WAL, synchronous=NORMAL (1) with the WAL synced after every commit (SQLiteStore.sync),
    a busy timeout and foreign keys on the connection a request uses."""
    conn = store.repository()._conn  # noqa: SLF001
    assert pragma(conn, "journal_mode") == "wal"
    assert pragma(conn, "synchronous") == 1
    assert pragma(conn, "foreign_keys") == 1
    assert pragma(conn, "busy_timeout") == 10_000


def test_the_app_opens_sqlite_by_default(tmp_path, monkeypatch):
    monkeypatch.setattr(Flask, "auto_find_instance_path", lambda self: str(tmp_path / "inst"))
    monkeypatch.delenv("SCHOCKEN_STORAGE", raising=False)
    app = create_app({"DATABASE": None, "TESTING": True})
    try:
        instance = Path(app.instance_path)
        assert app.config["DATABASE"] == str(instance / "schocken.sqlite3")
        assert isinstance(app.extensions["schocken"].store, SQLiteStore)
    finally:
        app.extensions["schocken"].store.close()


def test_open_store_needs_a_file():
    with pytest.raises(ValueError, match="path"):
        open_store("sqlite", None)
    with pytest.raises(ValueError, match="file"):
        open_store("sqlite", ":memory:")


def test_a_thread_keeps_its_connection_and_threads_do_not_share_one(store):
    mine = store.repository()
    mine.close()  # the end of a request: released, not closed
    assert store.repository() is mine and mine.disconnected is False
    other = []
    thread = threading.Thread(target=lambda: other.append(store.repository()))
    thread.start()
    thread.join()
    assert other[0] is not mine and other[0]._conn is not mine._conn  # noqa: SLF001
    store.close()
    assert mine.disconnected and other[0].disconnected


def _game(store) -> int:
    repo = store.repository()
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    return repo.add_game(new_game(st.id))


def test_two_connections_appending_the_same_entry_one_wins(store):
    """Two writers (two connections, as two server processes would have) record entry 1 of one
    game at the same moment: exactly one commits, the other gets StorageConflict."""
    game = _game(store)
    barrier = threading.Barrier(2)
    results: dict[str, object] = {}

    def write(name: str) -> None:
        repo = store.open_repository()
        try:
            barrier.wait()
            entry = LogEntry(game, 1, "turn", {"player": name}, NOW)
            repo.append_entry(entry, FactsWrite(game_row(game), append={"turn_facts": []}))
            results[name] = "committed"
        except StorageConflict as err:
            results[name] = err
        finally:
            repo.disconnect()

    threads = [threading.Thread(target=write, args=(n,)) for n in ("Anna", "Bert")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [n for n, r in results.items() if r == "committed"]
    losers = [r for r in results.values() if isinstance(r, StorageConflict)]
    assert len(winners) == 1 and len(losers) == 1
    assert [e.body for e in store.repository().load_log(game)] == [{"player": winners[0]}]


WRITER = """
import sys
from datetime import datetime
from api.storage import FactsWrite, LogEntry, SQLiteStore, StorageConflict
store = SQLiteStore(sys.argv[1])
repo = store.repository()
game, name, last = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
won = 0
for seq in range(1, last + 1):
    entry = LogEntry(game, seq, "turn", {"player": name}, datetime(2026, 11, 27, 20))
    try:
        repo.append_entry(entry, FactsWrite(None))
    except StorageConflict:
        continue
    won += 1
    print(seq, flush=True)  # acknowledged: committed
store.close()
"""


def _writer(path: Path, game: int, name: str, last: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(WRITER), str(path), str(game), name, str(last)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_two_processes_appending_to_one_game_never_both_take_a_sequence_number(store):
    game = _game(store)
    procs = [_writer(Path(store.path), game, name, 60) for name in ("Anna", "Bert")]
    won = {}
    for name, proc in zip(("Anna", "Bert"), procs, strict=True):
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0
        won[name] = [int(line) for line in out.split()]
    log = store.repository().load_log(game)
    assert [e.seq for e in log] == list(range(1, 61))
    assert sorted(won["Anna"] + won["Bert"]) == list(range(1, 61))  # each seq: one writer
    for entry in log:
        assert entry.seq in won[entry.body["player"]]


def test_acknowledged_writes_survive_a_kill_9(store):
    game = _game(store)
    proc = _writer(Path(store.path), game, "Anna", 100_000)
    assert proc.stdout is not None
    acknowledged = [int(proc.stdout.readline()) for _ in range(150)]
    proc.send_signal(signal.SIGKILL)
    rest = proc.stdout.read()  # what it printed before it died was acknowledged too
    proc.wait()
    proc.stdout.close()
    acknowledged += [int(line) for line in rest.split()]
    again = SQLiteStore(store.path)
    try:
        stored = [e.seq for e in again.repository().load_log(game)]
    finally:
        again.close()
    assert stored[: len(acknowledged)] == acknowledged
    assert stored == list(range(1, len(stored) + 1))  # nothing torn, no gap


def test_migrations_are_applied_once_recorded_and_line_up_with_duckdb(tmp_path):
    path = tmp_path / "m.sqlite3"
    store = SQLiteStore(path)
    first = store.applied()
    assert [v for v, _ in first] == [v for v, _, _ in package_migrations("api.storage.sqlite")]
    # the DuckDB store's versions come first (their names: tests/test_storage_convert.py)
    assert [v for v, _ in first[:DUCKDB_VERSION]] == list(range(1, DUCKDB_VERSION + 1))
    assert store.migrate() == []
    store.close()
    modified = path.stat().st_mtime_ns
    again = SQLiteStore(path)  # a restart applies nothing again: the file is not written
    assert again.applied() == first
    again.close()
    assert path.stat().st_mtime_ns == modified
    conn = sqlite3.connect(path)
    newest = f"{first[-1][0]:04d}"  # the newest revision (0017 since the luck figures)
    assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(newest,)]
    conn.close()


def test_the_schema_has_the_tables_and_columns_of_the_records(store):
    got = {t: tuple(c for c, _ in cols) for t, cols in store._kinds.items()}  # noqa: SLF001
    from api.storage.convert import COPIED

    for table, columns in {**TABLE_COLUMNS, **RESPONSE_COLUMNS}.items():
        # migration 0014 added number and abandoned_at to games, 0016 odds_shown to
        # stammtische (the copy's columns)
        later = table in ("games", "stammtische")
        assert got[table] == (COPIED[table] if later else columns), table
    assert got["luck_facts"] == LUCK_COLUMNS  # migration 0017


def test_a_database_from_a_newer_version_is_refused_untouched(tmp_path):
    path = tmp_path / "n.sqlite3"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE alembic_version SET version_num = '9999'")  # a newer program's
    conn.commit()
    before = conn.execute("SELECT * FROM sqlite_schema ORDER BY name").fetchall()
    conn.close()
    with pytest.raises(MigrationError, match="newer"):
        SQLiteStore(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT * FROM sqlite_schema ORDER BY name").fetchall() == before
    conn.close()


def test_a_failed_migration_leaves_no_trace_of_itself(tmp_path, monkeypatch):
    from api.storage import migrate

    *older, (newest, name, _) = package_migrations("api.storage.sqlite")
    path = tmp_path / "f.sqlite3"
    SQLiteStore(path, until=older[-1][0]).close()
    broken = [*older, (newest, name, "CREATE TABLE extra (a INTEGER);\nNOT SQL;")]
    monkeypatch.setattr(migrate, "migrations", lambda package: broken)
    with pytest.raises(sqlite3.OperationalError):  # the driver's error, as before Alembic
        SQLiteStore(path)
    conn = sqlite3.connect(path)
    version = f"{older[-1][0]:04d}"
    assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [(version,)]
    assert conn.execute("SELECT name FROM sqlite_schema WHERE name = 'extra'").fetchall() == []
    conn.close()


def test_scripts_split_into_complete_statements():
    script = "-- a comment; with a semicolon\nCREATE TABLE a (b TEXT); -- trailing\n"
    script += "INSERT INTO a VALUES ('x;y');\n-- the end\n"
    assert statements(script) == [
        "-- a comment; with a semicolon\nCREATE TABLE a (b TEXT); -- trailing",
        "INSERT INTO a VALUES ('x;y');",
    ]
    with pytest.raises(ValueError, match="incomplete"):
        statements("CREATE TABLE a (b TEXT)")


def test_references_are_checked_and_are_no_conflict(store):
    repo = store.repository()
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        repo.append_log(LogEntry(999, 1, "turn", {}, NOW))  # no such game


def test_values_come_back_with_their_types(store):
    game = _game(store)
    repo = store.repository()
    row = {**turn_row(game, 1), "hand": True}
    repo.write_facts(game, FactsWrite(game_row(game), append={"turn_facts": [row]}))
    facts = repo.read_facts(game)
    assert facts["turn_facts"] == [row] and facts["turn_facts"][0]["hand"] is True
    assert facts["game_facts"][0]["blattschuss"] is False
    (record,) = repo.list_games(GameQuery(repo.get_stammtisch("a").id, limit=5))[0]
    assert record == repo.get_game_by_id(game)
    assert record.played_at_utc == new_game(1).played_at_utc and record.players[0].starter is True


def _record_same_games(app):
    t = make_table(app.test_client(), "Post")
    t.add_players(PLAYERS)
    start = datetime(2025, 3, 1, 20, tzinfo=UTC)
    for log in simulate_logs(PRESETS["standard"], 3, players=PLAYERS, seed=9, start=start):
        assert t.post("/imports", log).status_code == 201
    game = t.start(played_at="2025-06-01T20:00:00+02:00")
    assert t.turn(game, "Anna", [1, 1, 4], 2).status_code == 201


TABLES = {
    "games": "id, stammtisch_id, header, rules, options, played_at, played_at_utc, played_local,"
    " year, source",
    "game_players": "*",
    **{table: "*" for table in FACT_COLUMNS},
}


def test_the_statistics_copy_of_sqlite_equals_that_of_the_fake(tmp_path):
    """The same games recorded on SQLite and on the in-memory fake: the DuckDB copies the
    statistics read hold exactly the same rows, types included."""
    seen = []
    for storage, name in (("memory", "unused"), ("sqlite", "s.sqlite3")):
        app = create_app({"STORAGE": storage, "DATABASE": str(tmp_path / name), "TESTING": True})
        try:
            _record_same_games(app)
            with connection_for(app.extensions["schocken"].store.repository()) as conn:
                seen.append(
                    {
                        t: sorted(conn.execute(f"SELECT {c} FROM {t}").fetchall())  # noqa: S608
                        for t, c in TABLES.items()
                    }
                )
                assert isinstance(conn, duckdb.DuckDBPyConnection)
        finally:
            app.extensions["schocken"].store.close()
    assert sum(len(rows) for rows in seen[0].values()) > 100
    assert seen[0] == seen[1]
