"""Calling a game off through the API (``POST …/games/{id}/abandon``): the game is kept with
status ``abandoned``, takes no more entries, and the event streams get ``game_abandoned``
after its last entry. On SQLite (the ``table`` fixture); PostgreSQL: tests/test_api_postgresql.py."""

from __future__ import annotations

import json


def test_a_running_game_is_called_off_and_refuses_every_further_entry(table):
    game = table.start()
    assert table.turn(game, "Anna", [1, 1, 4], 3).status_code == 201
    r = table.post(f"/games/{game}/abandon")
    assert r.status_code == 200, r.json
    assert r.json["status"] == "abandoned" and r.json["id"] == game
    assert r.headers["ETag"] == '"1"'
    assert table.game(game)["status"] == "abandoned"
    for refused in (
        table.turn(game, "Bert", [2, 2, 2], 1),
        table.post(f"/games/{game}/abandon"),
        table.post(f"/games/{game}/undo"),
    ):
        assert refused.status_code == 409 and refused.json["code"] == "game_abandoned"


def test_a_decided_game_cannot_be_called_off(table):
    game = table.start(["Anna", "Bert"])
    # Anna loses both halves with a Zahl against Bert's Schock aus: a Blattschuss
    for _ in range(40):
        if table.game(game)["status"] == "finished":
            break
        turn = table.game(game)["turn"]
        dice = [1, 1, 1] if turn["player"] == "Bert" else [2, 3, 5]
        assert table.turn(game, turn["player"], dice, 1).status_code == 201
    assert table.game(game)["status"] == "finished"
    r = table.post(f"/games/{game}/abandon")
    assert r.status_code == 409 and r.json["code"] == "game_finished"
    assert table.game(game)["status"] == "finished"


def test_calling_off_needs_the_key(table):
    game = table.start()
    r = table.client.post(f"{table.base}/games/{game}/abandon")
    assert r.status_code == 401
    assert table.game(game)["status"] == "running"


def test_the_game_stream_sends_game_abandoned_after_the_last_entry(table):
    game = table.start()
    table.turn(game, "Anna", [1, 1, 4], 3)
    table.post(f"/games/{game}/abandon")
    table.client.application.config["EVENT_STREAM_SECONDS"] = 0  # what is stored, then the end
    stream = table.get(f"/games/{game}/events?last_event_id=1").get_data(as_text=True)
    (data,) = [json.loads(line[6:]) for line in stream.splitlines() if line.startswith("data: ")]
    assert data["kind"] == "game_abandoned" and data["seq"] == 2
    assert data["data"] == {"game_id": game, "number": 1}
    assert data["message"] == "Spiel 1 abgebrochen."
    assert "id: 2\n" in stream
