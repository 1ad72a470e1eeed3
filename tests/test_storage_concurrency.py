"""Many clients at once on the in-memory fake, on a SQLite file (one connection per thread,
immediate transactions) and on PostgreSQL (pooled connections, row locks): nothing is lost, one game's entries stay in order, and the
facts written under load equal a rebuild from the logs."""

from __future__ import annotations

import threading

import pytest
from conftest import PLAYERS, Table, make_table, play_at_once

from api.app import create_app
from api.rules import PRESETS
from api.rules.simulate import simulate_logs

#: many threads at once: longer than the run's 120 s default on a busy machine
pytestmark = pytest.mark.timeout(300)

FILES = {"memory": None, "sqlite": "c.sqlite3", "postgresql": None}


def _app(tmp_path, storage, request):
    if storage == "postgresql":
        return create_app({"DATABASE_URL": request.getfixturevalue("pg_url")})
    name = FILES[storage]
    return create_app({"STORAGE": storage, "DATABASE": str(tmp_path / name) if name else None})


@pytest.mark.parametrize("storage", FILES)
def test_concurrent_games_are_all_stored_and_their_facts_equal_a_rebuild(
    tmp_path, storage, request
):
    app = _app(tmp_path, storage, request)
    table = make_table(app.test_client(), "Post")
    table.add_players(PLAYERS)
    logs = list(simulate_logs(PRESETS["standard"], 6, players=PLAYERS, seed=11))
    threads, errors = play_at_once(app, table, logs)
    for th in threads:
        th.join()
    assert errors == []
    finished = table.get("/games?status=finished").json
    assert finished["total"] == 6
    with app.app_context():
        from api.http.context import services

        svc = services()
        stored = {g: svc.repo.read_facts(g) for g in svc.repo.game_ids()}
        assert sum(len(log["events"]) for log in logs) == sum(
            len(f["turn_facts"]) for f in stored.values()
        )
        svc.rebuild()
        assert {g: svc.repo.read_facts(g) for g in svc.repo.game_ids()} == stored
    app.extensions["schocken"].store.close()


@pytest.mark.parametrize("storage", FILES)
def test_the_same_turn_sent_by_four_clients_at_once_is_recorded_once(tmp_path, storage, request):
    app = _app(tmp_path, storage, request)
    table = make_table(app.test_client(), "Post")
    table.add_players(PLAYERS)
    game = table.start()
    statuses: list[int] = []
    barrier = threading.Barrier(4)

    def send():
        t = Table(app.test_client(), table.slug, table.token)
        barrier.wait()
        r = t.post(f"/games/{game}/turns", {"player": "Anna", "dice": [1, 1, 4], "throws": 2})
        statuses.append(r.status_code)

    threads = [threading.Thread(target=send) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(statuses) == [201, 409, 409, 409]
    assert table.game(game)["seq"] == 1
    app.extensions["schocken"].store.close()
