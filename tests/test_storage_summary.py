"""The per-player summary of finished games (player_game_facts, migration 0003) that the
statistics read instead of the per-turn tables: written with the facts of the entry that
finishes a game, gone when an undo reopens it, equal to an independent SQL definition (the
view of the retired DuckDB store's migration 0003, tests/fixtures/player_game_summary.sql) on
every column, after recording and after a rebuild."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from conftest import PLAYERS, make_table

from api.app import create_app
from api.bench.snapshot import connection_for
from api.cli import main
from api.rules import PRESETS, replay_log
from api.rules.simulate import simulate_logs

COLUMNS = (
    "game_id, player_id, lost, finalist, finale_lost, blattschuss, halves_lost, deckel, "
    "deckel_half1, deckel_half2, deckel_finale, turns, schock_aus"
)


#: an independent definition of the per-player summary in SQL, from the other fact tables: the
#: view of migration 0003, the oracle for api/facts.summarize, which derives the rows since 0005
ORACLE = (
    (Path(__file__).parent / "fixtures/player_game_summary.sql")
    .read_text(encoding="utf-8")
    .split(";")[0]
)

#: the stores the summary is checked on (through the DuckDB copy the statistics read)
FILES = {"sqlite": "s.sqlite3", "postgresql": None}


def open_app(tmp_path, storage="sqlite", name=None, request=None):
    if storage == "postgresql":
        return create_app({"DATABASE_URL": request.getfixturevalue("pg_url"), "TESTING": True})
    db = tmp_path / (name or FILES[storage])
    return create_app({"STORAGE": storage, "DATABASE": str(db), "TESTING": True})


def query(app, sql):
    """``sql`` on the DuckDB the statistics of the app's store read."""
    repo = app.extensions["schocken"].store.repository()
    with connection_for(repo) as conn:
        return sorted(conn.execute(sql).fetchall())


def rows(app, table):
    """The summary columns of a table, or of the SQL oracle (``table="oracle"``)."""
    source = f"({ORACLE})" if table == "oracle" else table
    return query(app, f"SELECT {COLUMNS} FROM {source}")  # noqa: S608


def all_rows(app, table):
    source = f"({ORACLE})" if table == "oracle" else table
    return query(app, f"SELECT * FROM {source}")  # noqa: S608


@pytest.mark.parametrize("storage", FILES)
def test_the_summary_of_an_imported_game_matches_the_engine(tmp_path, storage, request):
    app = open_app(tmp_path, storage, request=request)
    try:
        t = make_table(app.test_client(), "Post")
        t.add_players(PLAYERS)
        (log,) = simulate_logs(
            PRESETS["standard"], 1, players=PLAYERS, seed=3,
            start=datetime(2025, 3, 1, 20, tzinfo=UTC),
        )  # fmt: skip
        r = t.post("/imports", log)
        assert r.status_code == 201, r.json
        game = replay_log(log)
        summary = {
            name: dict(zip(COLUMNS.split(", "), row, strict=True))
            for row in rows(app, "player_game_facts")
            for name in [PLAYERS[row[1] - 1]]
        }
        assert set(summary) == set(PLAYERS)
        for name, row in summary.items():
            assert row["lost"] == (name == game.loser)
            assert row["halves_lost"] == game.half_losers.count(name)
            assert row["finalist"] == (game.finale is not None and name in game.finale)
            assert row["blattschuss"] == (game.blattschuss and name == game.loser)
            assert row["turns"] == sum(1 for turn in game.turns if turn.player == name)
            assert row["schock_aus"] == sum(
                1 for turn in game.turns if turn.player == name and turn.dice == "1-1-1"
            )
            received = sum(r.deckel for r in game.rounds if r.worst == name)
            received += sum(p.deckel for p in game.penalties if p.player == name)
            assert row["deckel"] == received
            assert row["deckel"] == row["deckel_half1"] + row["deckel_half2"] + row["deckel_finale"]
    finally:
        app.extensions["schocken"].store.close()


@pytest.mark.parametrize("storage", FILES)
def test_finishing_writes_the_summary_and_undo_removes_it(tmp_path, storage, request):
    app = open_app(tmp_path, storage, request=request)
    try:
        t = make_table(
            app.test_client(), "Post", rules={"preset": "standard", "overrides": {"deckel": 2}}
        )
        t.add_players(["Anna", "Bert"])
        game = t.start(["Anna", "Bert"])
        # Anna's Schock aus takes every Deckel from Bert twice: Blattschuss for Bert
        for player, dice in [("Anna", [1, 1, 1]), ("Bert", [6, 5, 3]), ("Bert", [6, 5, 3])]:
            assert t.turn(game, player, dice, 1).status_code == 201
        assert rows(app, "player_game_facts") == []  # still running: no summary
        assert t.turn(game, "Anna", [1, 1, 1], 1).status_code == 201
        assert t.game(game)["outcome"]["loser"] == "Bert"
        summary = rows(app, "player_game_facts")
        assert summary == rows(app, "oracle")
        bert = next(r for r in summary if r[1] == 2)
        assert bert[2:8] == (1, 0, 0, 1, 2, 4)  # lost, no Finale, Blattschuss, 2 halves, 4 Deckel
        assert t.post(f"/games/{game}/undo", {"by": "Anna"}).status_code == 201
        assert rows(app, "player_game_facts") == []
    finally:
        app.extensions["schocken"].store.close()


@pytest.mark.parametrize("storage", FILES)
def test_rebuild_rewrites_the_summary_as_defined(tmp_path, capsys, storage, monkeypatch, request):
    monkeypatch.setenv("SCHOCKEN_STORAGE", storage)  # for the CLI's app and the apps here
    db = tmp_path / (FILES[storage] or "unused")
    where = ["--db", str(db)]
    if storage == "postgresql":
        url = request.getfixturevalue("pg_url")
        monkeypatch.setenv("SCHOCKEN_DATABASE_URL", url)
        where = ["--database-url", url]
    app = create_app({"DATABASE": str(db), "TESTING": True})
    t = make_table(app.test_client(), "Post", rules={"preset": "nrw"})
    t.add_players(PLAYERS)
    for log in simulate_logs(
        PRESETS["nrw"], 3, players=PLAYERS, seed=5, start=datetime(2025, 3, 1, 20, tzinfo=UTC)
    ):
        assert t.post("/imports", log).status_code == 201
    before = rows(app, "player_game_facts")
    assert len(before) == 3 * len(PLAYERS)
    app.extensions["schocken"].store.close()
    assert main(["rebuild", *where], standalone_mode=False) == 0
    capsys.readouterr()
    app = create_app({"DATABASE": str(db), "TESTING": True})
    try:
        assert rows(app, "player_game_facts") == before == rows(app, "oracle")
    finally:
        app.extensions["schocken"].store.close()


@pytest.mark.parametrize("storage", FILES)
def test_every_column_equals_the_sql_definition_under_every_preset(tmp_path, storage, request):
    """Imported games (throw by throw, so some turns are single throws) and games recorded turn
    by turn under every preset: api/facts.summarize gives exactly the oracle's rows."""
    app = open_app(tmp_path, storage, request=request)
    try:
        t = make_table(app.test_client(), "Post")
        t.add_players(PLAYERS)
        start = datetime(2025, 3, 1, 20, tzinfo=UTC)
        for n, preset in enumerate(sorted(PRESETS)):
            logs = list(
                simulate_logs(
                    PRESETS[preset], 3, players=PLAYERS, seed=20 + n, start=start,
                    detail=n % 2 == 0,
                )
            )  # fmt: skip
            for log in logs[:2]:
                assert t.post("/imports", log).status_code == 201
            live = logs[2]
            game = t.start(PLAYERS, live["starter"], rules=live["rules"])
            for event in live["events"]:
                path = "penalties" if "penalty" in event else "turns"
                assert t.post(f"/games/{game}/{path}", event).status_code == 201
        summary = all_rows(app, "player_game_facts")
        assert len(summary) == 3 * len(PRESETS) * len(PLAYERS)
        assert summary == all_rows(app, "oracle")
        assert sum(r[-6] + r[-5] + r[-4] + r[-3] + r[-2] + r[-1] for r in summary) > 0  # fair turns
    finally:
        app.extensions["schocken"].store.close()
