"""The statistics read model (dashboard/readmodel.py): incremental refresh = full refresh = the
per-player summary oracle, read-your-writes, the background refresher, one refresher at a time."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest
from conftest import make_table
from test_storage_summary import ORACLE

from api.app import create_app
from api.bench.snapshot import connection_for
from api.cli import main
from api.rules import PRESETS, replay_log
from api.rules.luck import game_luck
from api.rules.simulate import simulate_logs
from api.storage.records import FACT_COLUMNS, StatsWrite
from dashboard import readmodel, refresher
from dashboard.luck import update_luck
from dashboard.readmodel import ReadModel, from_json, refresh
from dashboard.stats import Statistics

NAMES = ["Anna", "Bert", "Clara", "Dieter"]
ROOT = Path(__file__).resolve().parents[1]


def make_app(storage, tmp_path, **extra):
    config = {"STORAGE": storage, "TESTING": True, "DASHBOARD_DIR": str(tmp_path / "site")}
    if storage == "sqlite":
        config["DATABASE"] = str(tmp_path / "s.sqlite3")
    return create_app({**config, **extra})


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def app(request, tmp_path):
    extra = {}
    if request.param == "postgresql":
        extra = {"DATABASE_URL": request.getfixturevalue("pg_url")}
    application = make_app(request.param, tmp_path, **extra)
    yield application
    application.extensions["schocken"].store.close()


def sid(app, table):
    """The Stammtisch's id."""
    return app.extensions["schocken"].store.repository().get_stammtisch(table.slug).id


def logs(n, seed, start):
    return list(
        simulate_logs(PRESETS["standard"], n, players=NAMES, seed=seed,
                      start=datetime.fromisoformat(start))
    )  # fmt: skip


def stored(app):
    """Every period the read model holds, as stored (no refresh)."""
    repo = app.extensions["schocken"].store.repository()
    out = {}
    for st in repo.stammtisch_ids():
        years = [y for _, y, _ in repo.stats_years(st)]
        for year in [None, *years]:
            text = repo.read_stats(st, year)
            assert text is not None, (st, year)
            out[(st, year)] = from_json(text)
    return out


def full(app):
    refresh(app.extensions["schocken"].store.repository(), everything=True)
    return stored(app)


def oracle(app):
    """Every period computed from a copy of every table in which the per-player summary rows
    are those of the SQL oracle (migration 0003's view), not the stored ones."""
    columns = ", ".join(FACT_COLUMNS["player_game_facts"])
    with connection_for(app.extensions["schocken"].store.repository()) as conn:
        conn.execute(f"CREATE TEMP TABLE oracle AS {ORACLE}")
        conn.execute("DELETE FROM player_game_facts")
        conn.execute(f"INSERT INTO player_game_facts SELECT {columns} FROM oracle")  # noqa: S608
        return Statistics(conn).periods()


def plain(value):
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, float):
        return round(value, 9)
    return value


def read_all(client, tables):
    """What the endpoints show once the refresher has caught up (a read never computes)."""
    refresher.run_once(client.application.extensions["schocken"].store)
    shown = {}
    for t in tables:
        r = client.get(f"{t.base}/statistics", headers=t.auth)
        assert r.headers["Statistics-Stale"] == "false"
        shown[t.slug] = r.json
    return shown


def check(app, client, tables):
    shown = read_all(client, tables)
    incremental = stored(app)
    assert plain(incremental) == plain(full(app)) == plain(oracle(app))
    return shown


def play_live(table, log):
    game = table.start(NAMES, log["starter"], played_at=log["played_at"])
    for event in log["events"]:
        r = table.post(f"/games/{game}/turns", event)
        assert r.status_code == 201, (event, r.json)
    return game


@pytest.mark.parametrize("small", [readmodel.SMALL, 0], ids=["python-shaped", "one-statement"])
def test_incremental_equals_full_equals_the_oracle_through_finish_undo_import_rename(
    app, monkeypatch, small
):
    # one-statement: every refresh renders its periods in one DuckDB statement
    # (dashboard/periods.py), as a full refresh of many Stammtische does
    monkeypatch.setattr(readmodel, "SMALL", small)
    client = app.test_client()
    post, anker = make_table(client, "Zur Post"), make_table(client, "Anker", private=True)
    for table in (post, anker):
        table.add_players(NAMES)
    for log in logs(3, 1, "2023-11-03T20:00:00+01:00"):  # 2023 and 2024
        assert post.post("/imports", log).status_code == 201
    for log in logs(2, 2, "2024-05-03T20:00:00+02:00"):
        assert anker.post("/imports", log).status_code == 201
    shown = check(app, client, [post, anker])
    assert shown[post.slug]["overview"]["games"] == 3

    # a game finished live: shown at once (read-your-writes)
    game = play_live(post, logs(1, 3, "2024-06-07T20:00:00+02:00")[0])
    shown = check(app, client, [post, anker])
    assert shown[post.slug]["overview"]["games"] == 4
    # its finish undone: gone again
    assert post.post(f"/games/{game}/undo", {"by": "Anna", "reason": "x"}).status_code == 201
    shown = check(app, client, [post, anker])
    assert shown[post.slug]["overview"]["games"] == 3
    # a player renamed: every period shows the new name
    anna = next(p["id"] for p in post.get("/players").json if p["name"] == "Anna")
    assert post.patch(f"/players/{anna}", {"name": "Anne"}).status_code == 200
    shown = check(app, client, [post, anker])
    assert "Anne" in {p["name"] for p in shown[post.slug]["players"]}
    assert "Anna" in {p["name"] for p in shown[anker.slug]["players"]}


def test_a_write_marks_only_its_stammtisch_and_a_refresh_only_recomputes_those(app):
    client = app.test_client()
    post, anker = make_table(client, "Zur Post"), make_table(client, "Anker")
    for table in (post, anker):
        assert table.post("/imports", logs(1, 4, "2024-01-05T20:00:00+01:00")[0]).status_code
    repo = app.extensions["schocken"].store.repository()
    refresh(repo, everything=True)
    assert repo.stale_stats() == {}
    assert post.post("/imports", logs(1, 5, "2024-02-02T20:00:00+01:00")[0]).status_code == 201
    stale = repo.stale_stats()
    assert set(stale) == {sid(app, post)}
    done = refresh(repo)
    assert done is not None and done.stammtische == 1 and repo.stale_stats() == {}


def test_a_mark_made_during_a_refresh_stays(app):
    repo = app.extensions["schocken"].store.repository()
    st = sid(app, make_table(app.test_client(), "Zur Post"))
    repo.mark_stats_stale([st])
    versions = repo.stale_stats()
    repo.mark_stats_stale([st])  # a game finished while the refresh computed
    repo.write_stats(StatsWrite([st], [], versions))
    assert st in repo.stale_stats()


def test_the_background_refresher_catches_up_within_a_second(tmp_path):
    app = make_app("sqlite", tmp_path, STATS_REFRESH_SECONDS=0.1)
    try:
        client = app.test_client()
        table = make_table(client, "Zur Post")  # the first request starts the refresher
        assert table.post("/imports", logs(1, 6, "2024-03-01T20:00:00+01:00")[0]).status_code
        repo = app.extensions["schocken"].store.open_repository()
        started = time.monotonic()
        while repo.stale_stats() and time.monotonic() - started < 3:
            time.sleep(0.02)
        took = time.monotonic() - started
        assert repo.stale_stats() == {} and took < 1.5, took
        assert from_json(repo.read_stats(sid(app, table), 2024) or "")["overview"]["games"] == 1
        repo.disconnect()
    finally:
        app.extensions["schocken"].store.close()


def test_two_racing_refreshers_take_turns(tmp_path, monkeypatch):
    app = make_app("sqlite", tmp_path)
    store = app.extensions["schocken"].store
    try:
        tables = [make_table(app.test_client(), f"Runde {i}") for i in range(3)]
        for i, table in enumerate(tables):
            assert table.post("/imports", logs(1, i, "2024-03-01T20:00:00+01:00")[0]).status_code
        inside, overlaps = [], []
        compute = readmodel.compute_rows

        def slow(repo, ids):
            inside.append(1)
            overlaps.append(len(inside))
            time.sleep(0.05)
            try:
                return compute(repo, ids)
            finally:
                inside.pop()

        monkeypatch.setattr(readmodel, "compute_rows", slow)
        repos = [store.open_repository() for _ in range(4)]
        threads = [
            threading.Thread(target=refresh, args=(r,), kwargs={"everything": True}) for r in repos
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert overlaps and max(overlaps) == 1  # never two at once
        with repos[0].stats_lock():  # held: a refresher that does not wait gives up
            assert refresh(repos[1], wait=False) is None
        assert refresh(repos[1], wait=False) is not None
        assert ReadModel(repos[2]).overview(sid(app, tables[0]), 2024)["games"] == 1
        for r in repos:
            r.disconnect()
    finally:
        store.close()


def test_schocken_stats_refresh_beside_a_running_server_and_in_two_processes_at_once(tmp_path):
    app = make_app("sqlite", tmp_path)  # this process holds the database, as a server does
    try:
        table = make_table(app.test_client(), "Zur Post")
        for log in logs(2, 8, "2024-03-01T20:00:00+01:00"):
            assert table.post("/imports", log).status_code == 201
        repo = app.extensions["schocken"].store.repository()
        assert repo.stale_stats()  # nobody read the statistics yet
        db = str(tmp_path / "s.sqlite3")
        assert main(["stats", "refresh", "--db", db], standalone_mode=False) == 0
        assert repo.stale_stats() == {}
        assert from_json(repo.read_stats(sid(app, table), 2024) or "")["overview"]["games"] == 2
        command = [sys.executable, "-m", "api.cli", "stats", "refresh", "--all", "--db", db]
        racers = [subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE) for _ in range(2)]
        for racer in racers:
            _, err = racer.communicate(timeout=120)
            assert racer.returncode == 0, err
        assert plain(stored(app)) == plain(oracle(app))
    finally:
        app.extensions["schocken"].store.close()


def test_stammtische_the_read_model_never_saw_are_computed(app):
    """A database converted from the retired store has rows but no read model and no marks."""
    table = make_table(app.test_client(), "Zur Post")
    assert table.post("/imports", logs(1, 9, "2024-03-01T20:00:00+01:00")[0]).status_code
    store = app.extensions["schocken"].store
    repo = store.repository()
    refresh(repo)
    repo.write_stats(StatsWrite(None, [], {}))  # as converted: nothing computed, nothing marked
    assert repo.stale_stats() == {} and repo.stats_computed() == set()
    refresher.adopt(store)  # what each server process's refresher does first
    assert set(repo.stale_stats()) == {sid(app, table)}
    repo.write_stats(StatsWrite(None, [], repo.stale_stats()))
    listed = ReadModel(repo).stammtische()  # the dashboard's index: as stored, not computed
    assert [(s["slug"], s["games"], s["last_year"]) for s in listed] == [(table.slug, 0, None)]
    assert repo.stats_computed() == set()
    listed = ReadModel(repo, refresh_first=True).stammtische()  # `schocken dashboard build`
    assert [(s["slug"], s["games"], s["last_year"]) for s in listed] == [(table.slug, 1, 2024)]


def test_a_refresh_shared_among_processes_equals_one_in_a_single_process(tmp_path, monkeypatch):
    app = make_app("sqlite", tmp_path)
    try:
        for i in range(3):
            table = make_table(app.test_client(), f"Runde {i}")
            assert table.post("/imports", logs(1, i, "2024-03-01T20:00:00+01:00")[0]).status_code
        db = str(tmp_path / "s.sqlite3")
        monkeypatch.setattr(readmodel, "CHUNK", 1)  # the parent's: three chunks, so it shares
        assert readmodel.refresh_file(db, everything=True, processes=2).periods == 6
        shared = stored(app)
        assert readmodel.refresh_file(db, everything=True).stammtische == 3
        assert plain(shared) == plain(stored(app)) == plain(oracle(app))
    finally:
        app.extensions["schocken"].store.close()


def test_a_read_shows_the_stored_numbers_marked_stale_and_never_waits_for_a_refresher(
    app, monkeypatch
):
    client = app.test_client()
    table = make_table(client, "Zur Post")
    games = logs(2, 10, "2024-03-01T20:00:00+01:00")
    assert table.post("/imports", games[0]).status_code == 201
    store = app.extensions["schocken"].store
    assert refresher.run_once(store)
    assert table.get("/statistics").json["overview"]["games"] == 1
    assert table.post("/imports", games[1]).status_code == 201  # stale now
    other = store.open_repository() if hasattr(store, "open_repository") else store.repository()
    with other.stats_lock():  # a long full refresh elsewhere
        started = time.monotonic()
        r = table.get("/statistics")
        assert (r.json["overview"]["games"], r.headers["Statistics-Stale"]) == (1, "true")
        assert time.monotonic() - started < 2
        assert not refresher.run_once(store)  # the refresher leaves it to the other one
        # `schocken dashboard build` refreshes first, but waits only READ_WAIT seconds
        monkeypatch.setattr(readmodel, "READ_WAIT", 0.2)
        started = time.monotonic()
        built = ReadModel(store.repository(), refresh_first=True)
        assert built.overview(sid(app, table), None)["games"] == 1
        assert time.monotonic() - started < 2
    assert refresher.run_once(store)  # its turn now
    r = table.get("/statistics")
    assert (r.json["overview"]["games"], r.headers["Statistics-Stale"]) == (2, "false")


def test_the_one_statement_renders_the_text_python_shapes(app, monkeypatch):
    """Many Stammtische: DuckDB renders each period (dashboard/periods.py); a few: Python
    shapes the queries' rows (dashboard/stats.py). Byte for byte the same, for a Stammtisch
    without games too."""
    client = app.test_client()
    post, anker = make_table(client, "Zur Post"), make_table(client, "Anker")
    make_table(client, "Leer")
    for table in (post, anker):
        table.add_players(NAMES)
    for log in logs(4, 11, "2022-12-02T20:00:00+01:00"):
        assert post.post("/imports", log).status_code == 201
    assert anker.post("/imports", logs(1, 12, "2024-05-03T20:00:00+02:00")[0]).status_code
    repo = app.extensions["schocken"].store.repository()
    ids = repo.stammtisch_ids()
    shaped = readmodel.compute_rows(repo, ids)
    monkeypatch.setattr(readmodel, "SMALL", 0)
    rendered = readmodel.compute_rows(repo, ids)
    assert [r[:3] for r in rendered] == [r[:3] for r in shaped] and len(shaped) >= 5
    assert rendered == shaped


def test_each_players_luck_is_the_sum_over_the_finished_games_computed_once_per_game(app):
    """The luck of a period (api/rules/RULES.md §13) adds up what the engine rates in each
    finished game, throw by throw where the log has the throws; a refresh computes the figures
    of new finished games only, and an undone finish drops them."""
    client = app.test_client()
    post = make_table(client, "Zur Post")
    post.add_players(NAMES)
    played = [
        *simulate_logs(PRESETS["standard"], 2, players=NAMES, seed=8, detail=True,
                       start=datetime.fromisoformat("2024-03-01T20:00:00+01:00")),
        *logs(2, 9, "2024-04-05T20:00:00+02:00"),
    ]  # fmt: skip
    for log in played:
        assert post.post("/imports", log).status_code == 201
    repo = app.extensions["schocken"].store.repository()
    assert update_luck(repo, [sid(app, post)]) == 4
    assert update_luck(repo, [sid(app, post)]) == 0  # nothing new: nothing computed

    fields = ("turns", "expected", "survived", "split", "luck", "given_away")
    expected = {name: dict.fromkeys(fields, 0) for name in NAMES}
    for log in played:
        for name, sums in game_luck(replay_log(log)).items():
            for field in fields:
                expected[name][field] += getattr(sums, field)
    shown = read_all(client, [post])[post.slug]["luck"]
    assert [row["luck"] for row in shown] == sorted((row["luck"] for row in shown), reverse=True)
    assert {row["name"]: {f: row[f] for f in fields} for row in shown} == {
        name: {f: round(v, 4) if isinstance(v, float) else v for f, v in sums.items()}
        for name, sums in expected.items()
    }
    assert any(row["given_away"] > 0 for row in shown)  # decisions rated

    # a game finished live is computed in the next refresh; its undone finish drops it
    game = play_live(post, logs(1, 10, "2024-06-07T20:00:00+02:00")[0])
    before = sum(row["turns"] for row in read_all(client, [post])[post.slug]["luck"])
    assert before > sum(sums["turns"] for sums in expected.values())
    assert post.post(f"/games/{game}/undo", {"by": "Anna", "reason": "x"}).status_code == 201
    after = sum(row["turns"] for row in read_all(client, [post])[post.slug]["luck"])
    assert after == sum(sums["turns"] for sums in expected.values())
