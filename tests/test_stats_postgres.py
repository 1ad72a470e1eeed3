"""The statistics read model fed from PostgreSQL equals the one fed from SQLite for the same
data (``schocken copy`` of one SQLite file into PostgreSQL): the input DuckDB receives, and every
stored period, text for text, by a full refresh (the feed in chunks, one statement) and by an
incremental one (a few Stammtische, shaped in Python)."""

from __future__ import annotations

from datetime import datetime

import pytest
from conftest import make_table

from api.app import create_app
from api.rules import PRESETS
from api.rules.simulate import simulate_logs
from api.storage import PostgresStore, SQLiteStore
from api.storage.convert import copy
from dashboard import readmodel
from dashboard.readmodel import INPUT, duckdb_input, feed, refresh

NAMES = ["Anna", "Bert", "Clara", "Dieter"]


def filled(path):
    """A SQLite file with three Stammtische (one private) over two years, a renamed and a
    retired player, and an unfinished game."""
    app = create_app({"STORAGE": "sqlite", "DATABASE": str(path), "TESTING": True})
    try:
        client = app.test_client()
        for i, (name, private) in enumerate(
            (("Zur Post", False), ("Anker", True), ("Linde", False))
        ):
            table = make_table(client, name, private=private)
            players = dict(zip([*NAMES, "Emil"], table.add_players([*NAMES, "Emil"]), strict=True))
            start = datetime.fromisoformat(f"2023-1{i}-03T20:00:00+01:00")
            for log in simulate_logs(PRESETS["standard"], 4 + i, players=NAMES, seed=10 + i,
                                     start=start):  # fmt: skip
                assert table.post("/imports", log).status_code == 201
            assert table.patch(f"/players/{players['Anna']}", {"name": "Anne"}).status_code == 200
            retired = table.patch(f"/players/{players['Emil']}", {"retired": True})
            assert retired.status_code == 200, retired.json
        table.start(["Anne", "Bert", "Clara"], "Bert")  # begun, not finished
    finally:
        app.extensions["schocken"].store.close()


def periods(repo):
    """Every stored period: (Stammtisch, year) → (games, JSON text)."""
    out = {}
    for st in repo.stammtisch_ids():
        for year in [None, *(y for _, y, _ in repo.stats_years(st))]:
            out[(st, year)] = repo.read_stats(st, year)
    return out


def inputs(repo, stammtische, full=False):
    """The rows the refresh's DuckDB receives, table by table, sorted (``full``: as a full
    refresh feeds it: Arrow streams from PostgreSQL, CSV chunks from SQLite)."""
    conn = feed(repo, stammtische) if full else duckdb_input(repo, stammtische)
    try:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in INPUT}
    finally:
        conn.close()


@pytest.fixture
def stores(tmp_path, pg_url):
    path = tmp_path / "same.sqlite3"
    filled(path)
    copy(str(path), pg_url)
    lite, pg = SQLiteStore(path), PostgresStore(pg_url)
    yield lite.repository(), pg.repository()
    lite.close()
    pg.close()


@pytest.mark.parametrize("chunk", [readmodel.CHUNK, 1], ids=["one-read", "chunked-feed"])
def test_the_read_model_fed_from_postgresql_equals_the_one_fed_from_sqlite(
    stores, monkeypatch, chunk
):
    lite, pg = stores
    ids = lite.stammtisch_ids()
    assert ids == pg.stammtisch_ids() and len(ids) == 3
    with pg.stats_arrow(INPUT, ids) as streams:  # a full refresh's feed is Arrow here
        assert streams is not None
    assert inputs(pg, ids) == inputs(lite, ids) == inputs(pg, ids, full=True)
    assert inputs(pg, ids, full=True) == inputs(lite, ids, full=True)
    assert inputs(pg, ids[1:2]) == inputs(lite, ids[1:2])
    # a full refresh: all Stammtische into one DuckDB (fed in chunks), one statement
    monkeypatch.setattr(readmodel, "CHUNK", chunk)
    monkeypatch.setattr(readmodel, "SMALL", 0)
    for repo in stores:
        refresh(repo, everything=True)
    full = periods(lite)
    assert full == periods(pg)
    assert all(full.values()) and len(full) > 3
    # an incremental refresh (what `stats refresh --watch` runs after a finished game)
    monkeypatch.setattr(readmodel, "SMALL", 5)
    for repo in stores:
        repo.mark_stats_stale(ids[:2])
        refresh(repo)
        assert repo.stale_stats() == {}
    assert periods(lite) == periods(pg) == full


def test_an_unreachable_server_makes_the_arrow_feed_say_storage_unavailable():
    from api.storage import PostgresRepository, StorageUnavailable

    repo = object.__new__(PostgresRepository)  # no pool: the feed has a connection of its own
    repo._url = "postgresql://postgres@/x?host=/nonexistent&port=1"
    with pytest.raises(StorageUnavailable, match="PostgreSQL"), repo.stats_arrow(INPUT, [1]):
        pass
