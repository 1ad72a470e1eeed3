"""What only the PostgreSQL adapter has: the row lock that makes writers of one game (on
several servers) go in turn, the advisory lock of the statistics refresh, migrations under a
lock and a newer schema refused, the commands' ``--database-url``, a wrong URL as one line.
The repository contract and the API suites run on PostgreSQL too (their ``postgresql``
parameters)."""

from __future__ import annotations

import threading
import time
from datetime import datetime

import psycopg
import pytest
from conftest import PLAYERS, make_table
from storage_contract import new_game

from api.app import create_app
from api.cli import main
from api.rules import PRESETS
from api.rules.simulate import simulate_logs
from api.storage import LogEntry, MigrationError, PostgresStore, StorageConflict
from api.storage.migrate import known
from api.storage.records import Stammtisch

NOW = datetime(2026, 11, 27, 19, 0)


def test_a_second_writer_of_a_game_waits_for_the_first_and_reads_its_version(pg_url):
    one, two = PostgresStore(pg_url), PostgresStore(pg_url)  # as two servers
    try:
        first, second = one.repository(), two.open_repository()
        st = first.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
        game = first.add_game(new_game(st.id))
        seen: list[tuple[int, float]] = []
        locked = threading.Event()

        def later() -> None:
            locked.wait()
            with second.transaction():
                seen.append((second.game_version(game), time.monotonic()))
                second.append_log(LogEntry(game, 2, "turn", {"n": 2}, NOW))
            second.close()

        thread = threading.Thread(target=later)
        thread.start()
        with first.transaction():
            assert first.game_version(game) == 0  # takes the game's row lock
            locked.set()
            time.sleep(0.3)
            first.append_log(LogEntry(game, 1, "turn", {"n": 1}, NOW))
            committing = time.monotonic()  # the lock is held until the COMMIT after this
        thread.join()
        ((version, when),) = seen
        assert version == 1 and when >= committing
        assert [e.seq for e in first.load_log(game)] == [1, 2]
        with pytest.raises(StorageConflict), first.transaction():  # the backstop stays
            first.append_log(LogEntry(game, 2, "turn", {"n": 3}, NOW))
    finally:
        one.close()
        two.close()


def test_one_refresher_at_a_time_across_servers(pg_url):
    one, two = PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        with one.repository().stats_lock() as got:
            assert got
            with two.repository().stats_lock(wait=False) as other:
                assert not other
            with two.repository().stats_lock(wait=0.05) as other:
                assert not other
        with two.repository().stats_lock(wait=False) as other:
            assert other
    finally:
        one.close()
        two.close()


def test_a_database_of_a_newer_version_is_refused_untouched(pg_url):
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE alembic_version SET version_num = '0099'")  # a newer program's
    with pytest.raises(MigrationError, match="newer"):
        PostgresStore(pg_url)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT version_num FROM alembic_version").fetchone() == ("0099",)


def test_servers_starting_at_once_apply_each_migration_once(pg_cluster):
    url = pg_cluster.database_url("empty_" + str(id(pg_cluster)))
    with psycopg.connect(pg_cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {url.split('?')[0].rsplit('/', 1)[1]}")
    try:
        stores: list[PostgresStore] = []
        threads = [threading.Thread(target=lambda: stores.append(PostgresStore(url)))
                   for _ in range(3)]  # fmt: skip
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(stores) == 3
        assert [v for v, _ in stores[0].applied()] == list(known("postgresql"))
        for store in stores:
            store.close()
    finally:
        pg_cluster.drop(url)


def test_the_commands_work_on_postgresql_with_database_url(pg_url, tmp_path, capsys):
    app = create_app({"DATABASE_URL": pg_url, "TESTING": True})
    assert app.config["STORAGE"] == "postgresql"
    table = make_table(app.test_client(), "Zur Post")
    table.add_players(PLAYERS)
    for log in simulate_logs(PRESETS["standard"], 2, players=PLAYERS, seed=3):
        assert table.post("/imports", log).status_code == 201
    app.extensions["schocken"].store.close()
    assert main(["rebuild", "--database-url", pg_url], standalone_mode=False) == 0
    assert main(["stats", "refresh", "--database-url", pg_url], standalone_mode=False) == 0
    assert "Statistik: 1 Stammtisch, " in capsys.readouterr().err
    out = tmp_path / "site"
    args = ["dashboard", "build", "--out", str(out), "--database-url", pg_url]
    assert main(args, standalone_mode=False) == 0
    assert (out / "index.html").is_file() and (out / table.slug / "index.html").is_file()


def test_a_wrong_database_url_is_one_line_and_a_non_zero_exit(capsys, tmp_path):
    url = f"postgresql://postgres@/nope?host={tmp_path}&port=1"
    assert main(["rebuild", "--database-url", url], standalone_mode=False) == 1
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith(f"Die PostgreSQL-Datenbank {url} ist nicht erreichbar") and "\n" not in err
    )


def test_failed_logins_are_counted_in_a_row_and_cleared_by_a_success(pg_url):
    store = PostgresStore(pg_url)
    try:
        repo = store.repository()
        assert repo.failed_attempts("st-1", 100.0, None) == (0, 0.0)
        assert repo.failed_attempts("st-1", 100.0, False) == (1, 100.0)
        assert repo.failed_attempts("st-1", 90.0, False) == (2, 100.0)  # the last stays last
        assert repo.failed_attempts("st-2", 50.0, None) == (0, 0.0)
        assert repo.failed_attempts("st-1", 120.0, True) == (0, 0.0)
        assert repo.failed_attempts("st-1", 130.0, None) == (0, 0.0)
    finally:
        store.close()


def test_rate_limit_tokens_refill_up_to_the_burst_and_are_purged(pg_url):
    store = PostgresStore(pg_url)
    try:
        repo = store.repository()
        assert [repo.take_token("a", 10.0, 1.0, 2) for _ in range(2)] == [0.0, 0.0]
        assert repo.take_token("a", 10.0, 1.0, 2) == 1.0  # empty: one second to the next
        assert repo.take_token("a", 11.5, 1.0, 2) == 0.0  # refilled 1.5, took 1
        assert repo.take_token("b", 11.5, 1.0, 2) == 0.0  # another client's own bucket
        repo.purge_tokens(11.0)
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT who FROM rate_limits ORDER BY who").fetchall() == [
                ("a",),
                ("b",),
            ]
        repo.purge_tokens(12.0)
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT count(*) FROM rate_limits").fetchone() == (0,)
    finally:
        store.close()


def test_connections_the_server_ended_are_replaced_before_a_request_sees_them(pg_url):
    app = create_app({"DATABASE_URL": pg_url, "TESTING": True})
    try:
        table = make_table(app.test_client(), "Zur Post")
        with psycopg.connect(pg_url, autocommit=True) as admin:
            ended = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            ).fetchone()
        assert ended is not None and ended[0] >= 1  # the pool's connections
        time.sleep(0.1)
        assert table.post("/players", {"name": "Anna"}).status_code == 201
        assert app.test_client().get("/api/v1/health").status_code == 200
    finally:
        app.extensions["schocken"].store.close()


def test_the_statistics_refresher_of_a_server_works_and_stops_with_the_store(pg_url):
    app = create_app({"DATABASE_URL": pg_url, "TESTING": True, "STATS_REFRESH_SECONDS": 0.05})
    store = app.extensions["schocken"].store
    try:
        table = make_table(app.test_client(), "Zur Post")
        table.add_players(PLAYERS)
        (log,) = simulate_logs(PRESETS["standard"], 1, players=PLAYERS, seed=4)
        assert table.post("/imports", log).status_code == 201  # starts the refresher too
        repo = store.open_repository()
        deadline = time.monotonic() + 10
        while (repo.stale_stats() or not repo.stats_computed()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert repo.stale_stats() == {} and len(repo.stats_computed()) == 1
        repo.close()
        (refresher,) = app.extensions["schocken_stats_refresher"].values()
        assert refresher.is_alive()
    finally:
        store.close()  # stops the refresher before the pool closes
    assert not refresher.is_alive()


def _numbers(lines: list[str]) -> list[tuple[float, ...]]:
    """CSV lines of numbers as the numbers DuckDB reads from them."""
    return [tuple(float(v.strip('"')) for v in line.split(",")) for line in lines]


def test_the_csv_postgresql_renders_equals_the_ports_line_by_line(pg_url):
    """``stats_csv`` by COPY gives the lines the port's Python rendering gives (which the
    SQLite adapter's match): every input table of a refresh, all and some Stammtische."""
    from api.storage import Repository
    from dashboard.luck import update_luck
    from dashboard.readmodel import INPUT

    app = create_app({"DATABASE_URL": pg_url, "TESTING": True})
    try:
        for name, seed in (("Zur Post", 5), ("Anker", 6)):
            table = make_table(app.test_client(), name)
            table.add_players(PLAYERS)
            for log in simulate_logs(PRESETS["standard"], 2, players=PLAYERS, seed=seed):
                assert table.post("/imports", log).status_code == 201
        repo = app.extensions["schocken"].store.open_repository()
        update_luck(repo, repo.stammtisch_ids())  # the refresher's rows of luck_facts
        tables = {**INPUT, "stammtische": ("id", "slug", "name", "private", "created_at")}
        for stammtische in (None, [1]):
            rendered = repo.stats_csv(tables, stammtische)
            python = Repository.stats_csv(repo, tables, stammtische)
            for name in tables:
                lines = "\n".join(rendered[name]).split("\n") if rendered[name] else []
                if name == "luck_facts":  # doubles: PostgreSQL writes 0 where Python writes 0.0
                    lines, python[name] = _numbers(lines), _numbers(python[name])
                assert sorted(lines) == sorted(python[name]), name
                assert python[name], name
        repo.close()
    finally:
        app.extensions["schocken"].store.close()


def test_counters_inside_a_transaction_commit_on_their_own(pg_url):
    """As SQLite's counters (a connection of their own): a token taken inside a reading or a
    write that rolls back stays taken."""
    store = PostgresStore(pg_url)
    try:
        repo = store.repository()
        with repo.reading():
            assert repo.take_token("a", 10.0, 1.0, 1) == 0.0  # READ ONLY: not on its connection
        with pytest.raises(RuntimeError), repo.transaction():
            assert repo.take_token("a", 10.0, 1.0, 1) == 1.0
            raise RuntimeError
        assert repo.take_token("a", 10.0, 1.0, 1) == 1.0
    finally:
        store.close()
