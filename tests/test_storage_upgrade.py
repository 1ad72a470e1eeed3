"""Databases made by main before Alembic ran the migrations upgrade in place: the old
bookkeeping (``schema_migrations``) is carried over into Alembic's (api/storage/migrate.py)
and what that code wrote reads back the same. The fixtures (tests/fixtures/main_v15.*) were made
by tests/fixtures/make_main_fixtures.py with main at be3c487."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import psycopg

from api.bench.pgserver import binary
from api.storage import PostgresStore, SQLiteStore
from api.storage.migrate import known, revision_name
from api.storage.records import GameQuery

FIXTURES = Path(__file__).parent / "fixtures"
EXPECTED = json.loads((FIXTURES / "main_v15.expected.json").read_text())


def reads_as_before(store: Any, count: Any) -> None:
    assert {t: count(f"SELECT count(*) FROM {t}") for t in EXPECTED["counts"]} == EXPECTED["counts"]
    repo = store.repository()
    try:
        stammtisch = repo.get_stammtisch(EXPECTED["slug"])
        assert stammtisch.odds_shown == "off"  # migration 0016: the odds stay hidden
        games, total = repo.list_games(GameQuery(stammtisch.id, limit=1000))
        assert total == EXPECTED["games"] and [g.id for g in games] == EXPECTED["game_ids"]
        for game_id, log in EXPECTED["logs"].items():
            assert [[e.seq, e.kind, e.body] for e in repo.load_log(int(game_id))] == log
    finally:
        repo.close()


def test_a_sqlite_file_of_main_upgrades_in_place(tmp_path: Path) -> None:
    path = tmp_path / "main.sqlite3"
    with gzip.open(FIXTURES / "main_v15.sqlite3.gz", "rb") as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    store = SQLiteStore(path)
    try:
        assert store.applied() == list(known("sqlite").items())
        assert store.migrate() == []
        db = sqlite3.connect(path)
        newest = revision_name(max(known("sqlite")))
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [(newest,)]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_schema WHERE type='table'")}
        assert "schema_migrations" not in tables  # carried over into alembic_version
        reads_as_before(store, lambda sql: db.execute(sql).fetchone()[0])
        db.close()
    finally:
        store.close()


def test_a_postgresql_database_of_main_upgrades_in_place(pg_cluster: Any) -> None:
    name = "main_v15"
    url = pg_cluster.empty_url(name)
    try:
        dump = gzip.decompress((FIXTURES / "main_v15.pg.sql.gz").read_bytes())
        subprocess.run(
            [binary("psql"), "-q", "-v", "ON_ERROR_STOP=1", "-h", str(pg_cluster.folder),
             "-p", str(pg_cluster.port), "-U", "postgres", "-d", name],
            input=dump, check=True, capture_output=True,
        )  # fmt: skip
        store = PostgresStore(url, pool_size=2)
        try:
            assert store.applied() == list(known("postgresql").items())
            with psycopg.connect(url, autocommit=True) as db:
                version = db.execute("SELECT version_num FROM alembic_version").fetchall()
                assert version == [(revision_name(max(known("postgresql"))),)]
                old = db.execute("SELECT to_regclass('schema_migrations')").fetchone()
                assert old == (None,)
                reads_as_before(store, lambda sql: db.execute(sql).fetchone()[0])
        finally:
            store.close()
    finally:
        pg_cluster.drop(url)


def test_a_sqlite_file_of_an_older_main_is_stamped_and_upgraded(tmp_path: Path) -> None:
    """A file at version 14 in the old bookkeeping gets the later revisions by Alembic."""
    path = tmp_path / "old.sqlite3"
    with gzip.open(FIXTURES / "main_v15.sqlite3.gz", "rb") as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    db = sqlite3.connect(path)
    db.execute("DELETE FROM schema_migrations WHERE version > 14")
    db.execute("ALTER TABLE webhooks DROP COLUMN busy_until")  # as version 14 had it
    db.commit()
    db.close()
    store = SQLiteStore(path)
    try:
        assert store.applied()[-3:] == [
            (15, "webhook_busy"),
            (16, "odds_shown"),
            (17, "luck_facts"),
        ]
        assert "busy_until" in {c for c, _ in store._kinds["webhooks"]}  # noqa: SLF001
    finally:
        store.close()
