"""The outbox of domain events (migration 0012): every write that produces events stores them
in its own transaction, per Stammtisch in commit order, per game by the log's seq; a rejected
write stores none. On the in-memory fake, SQLite and PostgreSQL (the ``app`` fixture)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import PLAYERS, STORES, make_table
from test_api_games import LOG

pytestmark = pytest.mark.stores(*STORES)  # the outbox is the stores': every store


def repo_of(table: Any) -> Any:
    return table.client.application.extensions["schocken"].store.repository()


def stammtisch_id(table: Any) -> int:
    return int(repo_of(table).get_stammtisch(table.slug).id)


def rows(table: Any, after: int = 0) -> list[Any]:
    return repo_of(table).stammtisch_events(stammtisch_id(table), after, 1000)


def test_a_game_start_turns_a_penalty_and_an_undo_each_store_what_the_write_answered(table):
    game = table.start()
    answers = [
        table.turn(game, "Anna", [1, 1, 4], 3).json,
        table.post(
            f"/games/{game}/penalties", {"player": "Bert", "deckel": 2, "reason": "Würfel verloren"}
        ).json,
        table.post(f"/games/{game}/undo", {"by": "Dieter", "reason": "vertippt"}).json,
    ]
    stored = rows(table)
    assert [(r.position, r.game_id, r.seq) for r in stored] == [
        (1, game, 0),
        (2, game, 1),
        (3, game, 2),
        (4, game, 3),
    ]
    assert [r.events for r in stored[1:]] == [a["events"] for a in answers]
    assert stored[3].events[0]["kind"] == "undone" and stored[3].events[0]["data"]["seq"] == 2
    start = stored[0].events
    assert start == [
        {
            "kind": "game_started",
            "message": "Neues Spiel: Anna, Bert, Clara und Dieter. Anna fängt an.",
            "data": {"game_id": game, "players": PLAYERS, "starter": "Anna", "source": "api"},
        }
    ]
    assert repo_of(table).last_event_position(stammtisch_id(table)) == 4


def test_a_rejected_write_stores_no_event(table):
    game = table.start()
    before = rows(table)
    assert table.turn(game, "Bert", [1, 1, 4], 3).status_code == 409  # not Bert's turn
    assert table.turn(game, "Anna", [1, 1, 4], 9).status_code == 422  # too many throws
    assert table.post(f"/games/{game}/penalties", {"player": "Zoe", "deckel": 1}).status_code in (
        409,
        422,
    )
    assert rows(table) == before


def test_positions_count_per_stammtisch_across_its_games_and_reads_resume_after_one(client):
    one, other = make_table(client, "Zur Post"), make_table(client, "Krone")
    for t in (one, other):
        t.add_players(PLAYERS)
    first, second = one.start(), one.start()
    elsewhere = other.start()
    one.turn(first, "Anna", [6, 6, 6], 1)
    one.turn(second, "Anna", [2, 2, 2], 1)
    other.turn(elsewhere, "Anna", [3, 3, 3], 1)
    assert [(r.position, r.game_id, r.seq) for r in rows(one)] == [
        (1, first, 0),
        (2, second, 0),
        (3, first, 1),
        (4, second, 1),
    ]
    assert [(r.position, r.game_id) for r in rows(other)] == [(1, elsewhere), (2, elsewhere)]
    assert [r.position for r in rows(one, after=2)] == [3, 4]
    repo = repo_of(one)
    assert [r.seq for r in repo.game_events(first, 0, 10)] == [1]
    assert [r.seq for r in repo.game_events(first, -1, 10)] == [0, 1]
    assert [r.position for r in repo.stammtisch_events(stammtisch_id(one), 0, 2)] == [1, 2]


def test_an_import_announces_the_game_once_without_its_entries(table):
    r = table.post("/imports", LOG)
    assert r.status_code == 201, r.json
    (row,) = rows(table)
    assert (row.game_id, row.seq) == (r.json["id"], 0)
    assert row.events[0]["data"]["source"] == "import"
    assert row.events[0]["message"] == "Spiel importiert: Anna, Bert, Clara und Dieter."


def test_a_throw_by_throw_turn_stores_each_throw(table):
    game = table.start()
    r = table.post(f"/games/{game}/throws", {"player": "Anna", "dice": [1, 2, 3]})
    assert r.status_code == 201, r.json
    (row,) = repo_of(table).game_events(game, 0, 10)
    assert row.seq == 1 and row.events == r.json["events"]
    assert row.events[0]["kind"] == "throw_recorded"
