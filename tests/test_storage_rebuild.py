"""`schocken rebuild` replays every log and rewrites the facts: identical to what was stored
incrementally, request by request. Also: everything survives closing and reopening the file."""

from __future__ import annotations

from datetime import UTC, datetime

from conftest import PLAYERS, make_table

from api.app import create_app
from api.cli import main
from api.rules import PRESETS
from api.rules.simulate import simulate_logs


def all_facts(app):
    with app.app_context():
        from api.resources._common import services

        repo = services().repo
        return {g: repo.read_facts(g) for g in repo.game_ids()}


def fill(client):
    t = make_table(client, "Post", rules={"preset": "nrw"})
    t.add_players(PLAYERS)
    start = datetime(2025, 3, 1, 20, tzinfo=UTC)
    for preset in ("standard", "wolbeck", "nrw"):
        for log in simulate_logs(PRESETS[preset], 2, players=PLAYERS, seed=7, start=start, detail=True):
            assert t.post("/imports", log).status_code == 201
    game = t.start()
    base = f"/games/{game}"
    for body in (
        {"player": "Anna", "dice": [1, 1, 4], "throws": 2, "hand": False},
        {"player": "Bert", "dice": [6, 6, 6], "throws": 1},
    ):
        assert t.post(base + "/turns", body).status_code == 201
    assert t.post(base + "/undo", {"by": "Anna"}).status_code == 201
    assert t.post(base + "/throws", {"player": "Bert", "dice": [2, 2, 1], "aside": [1]}).status_code == 201
    assert t.post(base + "/throws", {"player": "Bert", "dice": [1, 2], "stop": True}).status_code == 201
    assert t.post(base + "/penalties", {"player": "Clara", "reason": "zu früh"}).status_code == 201
    assert t.post(base + "/throws", {"player": "Clara", "dice": [3, 3, 3]}).status_code == 201
    assert t.post(base + "/throws", {"player": "Dieter", "dice": [4, 2, 1], "stop": True}).status_code == 201
    return t, game


def test_rebuild_gives_exactly_the_facts_stored_incrementally(tmp_path, capsys):
    db = tmp_path / "schocken.duckdb"
    app = create_app({"DATABASE": str(db)})
    table, game = fill(app.test_client())
    before = all_facts(app)
    state_before = table.game(game)
    app.extensions["schocken"].store.close()

    assert len(before) == 7
    assert sum(len(f["turn_facts"]) for f in before.values()) > 200
    assert before[game]["game_facts"][0]["rounds"] == 1
    moves = before[game]["deckel_moves"]
    assert [(m["reason"], m["receiver"], m["amount"]) for m in moves] == [
        ("penalty", "Clara", 1),
        ("round", "Dieter", 4),
    ]

    assert main(["rebuild", "--db", str(db)]) == 0
    assert "rebuilt the facts of 7 games" in capsys.readouterr().err

    again = create_app({"DATABASE": str(db)})
    assert all_facts(again) == before
    client = again.test_client()
    client_table = type(table)(client, table.slug, table.token)
    assert client_table.game(game) == state_before  # survives a restart
    again.extensions["schocken"].store.close()


def test_rebuild_repairs_facts_that_were_lost(tmp_path):
    db = tmp_path / "schocken.duckdb"
    app = create_app({"DATABASE": str(db)})
    fill(app.test_client())
    before = all_facts(app)
    conn = app.extensions["schocken"].store._conn
    conn.execute("DELETE FROM turn_facts")
    conn.execute("DELETE FROM game_facts")
    with app.app_context():
        from api.resources._common import services

        assert services().rebuild() == 7
    assert all_facts(app) == before
    app.extensions["schocken"].store.close()
