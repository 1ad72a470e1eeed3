"""The repository contract, run against every adapter (SQLite, the store of record, and the
in-memory fake)."""

from __future__ import annotations

import sqlite3
from datetime import datetime

import pytest

from api.storage import (
    FactsWrite,
    GamePlayer,
    LogEntry,
    MemoryStore,
    MigrationError,
    NewGame,
    PostgresStore,
    SQLiteStore,
    StorageConflict,
)
from api.storage.sqlite.sql import migrations

NOW = datetime(2026, 11, 27, 19, 0)


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def repo(request, tmp_path):
    if request.param == "postgresql":
        store = PostgresStore(request.getfixturevalue("pg_url"))
    elif request.param == "sqlite":
        store = SQLiteStore(tmp_path / "r.sqlite3")
    else:
        store = MemoryStore()
    yield store.repository()
    store.close()


def new_game(st_id: int, year: int = 2026, players=((1, "Anna"), (2, "Bert"))) -> NewGame:
    return NewGame(
        stammtisch_id=st_id,
        header={"players": [n for _, n in players], "starter": players[0][1]},
        rules={"preset": "standard", "overrides": {}},
        options={"deckel": 13},
        played_at=f"{year}-11-27T20:15:00+01:00",
        played_at_utc=datetime(year, 11, 27, 19, 15),
        played_local=datetime(year, 11, 27, 20, 15),
        year=year,
        source="api",
        created_at=NOW,
        players=tuple(GamePlayer(i, pid, n, i == 0) for i, (pid, n) in enumerate(players)),
    )


def game_row(game_id: int, status: str = "running", phase: str = "half1") -> dict:
    return {
        "game_id": game_id, "status": status, "phase": phase, "loser_id": None,
        "loser": None, "blattschuss": False, "finalist1_id": None, "finalist2_id": None,
    }  # fmt: skip


def turn_row(game_id: int, n: int) -> dict:
    return {
        "game_id": game_id, "turn_no": n, "seq": n, "half": "half1", "round_no": 1,
        "player_id": 1, "player": "Anna", "dice": "1-1-4", "throws": 3, "hand": False,
        "blind": False, "category": "schock", "result_name": "Schock 4", "deckel_value": 4,
        "rank_key": 880000, "entry": "summary",
    }  # fmt: skip


def test_a_stammtisch_is_found_by_its_slug_and_slugs_are_unique(repo):
    st = repo.add_stammtisch("zur-post", "Zur Post", {"preset": "bvb"}, False, "h", NOW)
    assert repo.get_stammtisch("zur-post") == st
    assert repo.get_stammtisch("nirgends") is None
    with pytest.raises(StorageConflict):
        repo.add_stammtisch("zur-post", "Andere", {}, False, "h2", NOW)


def test_updating_a_stammtisch_changes_name_rules_and_privacy(repo):
    st = repo.add_stammtisch("a", "A", {"preset": "standard"}, False, "h", NOW)
    repo.update_stammtisch(st.id, "B", {"preset": "nrw", "overrides": {}}, True)
    got = repo.get_stammtisch("a")
    assert (got.name, got.rules, got.private) == ("B", {"preset": "nrw", "overrides": {}}, True)


def test_players_are_listed_per_stammtisch_and_renamed_in_place(repo):
    a = repo.add_stammtisch("a", "A", {}, False, "h", NOW)
    b = repo.add_stammtisch("b", "B", {}, False, "h", NOW)
    anna = repo.add_player(a.id, "Anna", NOW)
    repo.add_player(b.id, "Bert", NOW)
    repo.update_player(anna.id, "Anne", True, NOW)
    (only,) = repo.list_players(a.id)
    assert (only.id, only.name, only.retired, only.retired_at) == (anna.id, "Anne", True, NOW)


def test_games_are_filtered_by_year_status_and_player_and_paginated(repo):
    st = repo.add_stammtisch("a", "A", {}, False, "h", NOW)
    ids = [repo.add_game(new_game(st.id, year)) for year in (2024, 2025, 2025, 2026)]
    three = repo.add_game(new_game(st.id, 2026, players=((3, "Clara"), (1, "Anna"))))
    repo.write_facts(ids[1], FactsWrite(game=game_row(ids[1], "finished")))
    page, total = repo.list_games(st.id, year=2025, status=None, player_id=None, offset=0, limit=10)
    assert total == 2 and {g.id for g in page} == {ids[1], ids[2]}
    page, total = repo.list_games(
        st.id, year=None, status="finished", player_id=None, offset=0, limit=10
    )
    assert [g.id for g in page] == [ids[1]] and page[0].status == "finished"
    page, total = repo.list_games(st.id, year=None, status=None, player_id=3, offset=0, limit=10)
    assert [g.id for g in page] == [three]
    first, total = repo.list_games(st.id, year=None, status=None, player_id=None, offset=0, limit=2)
    rest, _ = repo.list_games(st.id, year=None, status=None, player_id=None, offset=2, limit=2)
    assert total == 5
    assert [g.id for g in first + rest] == [three, ids[3], ids[2], ids[1]]  # newest first
    assert [p.name for p in first[0].players] == ["Clara", "Anna"]


def test_a_sequence_number_is_taken_only_once(repo):
    st = repo.add_stammtisch("a", "A", {}, False, "h", NOW)
    game = repo.add_game(new_game(st.id))
    repo.append_log(LogEntry(game, 1, "turn", {"player": "Anna"}, NOW))
    with pytest.raises(StorageConflict):
        repo.append_log(LogEntry(game, 1, "turn", {"player": "Bert"}, NOW))
    assert [e.body for e in repo.load_log(game)] == [{"player": "Anna"}]


def test_a_failed_transaction_leaves_nothing_behind(repo):
    st = repo.add_stammtisch("a", "A", {}, False, "h", NOW)
    game = repo.add_game(new_game(st.id))
    with pytest.raises(RuntimeError), repo.transaction():
        repo.append_log(LogEntry(game, 1, "turn", {"player": "Anna"}, NOW))
        repo.write_facts(game, FactsWrite(game=game_row(game)))
        raise RuntimeError("boom")
    assert repo.load_log(game) == []
    assert repo.read_facts(game)["game_facts"] == []


def test_facts_are_appended_or_replaced_table_by_table(repo):
    st = repo.add_stammtisch("a", "A", {}, False, "h", NOW)
    game = repo.add_game(new_game(st.id))
    other = repo.add_game(new_game(st.id))
    repo.write_facts(
        other, FactsWrite(game=game_row(other), append={"turn_facts": [turn_row(other, 9)]})
    )
    repo.write_facts(
        game, FactsWrite(game=game_row(game), append={"turn_facts": [turn_row(game, 1)]})
    )
    two_more = [turn_row(game, 2), turn_row(game, 3)]
    repo.write_facts(game, FactsWrite(game=None, append={"turn_facts": two_more}))
    facts = repo.read_facts(game)
    assert [t["turn_no"] for t in facts["turn_facts"]] == [1, 2, 3]
    assert facts["turn_facts"][1] == turn_row(game, 2)
    assert facts["game_facts"] == [game_row(game)]  # None leaves the game row alone
    repo.write_facts(
        game,
        FactsWrite(game=game_row(game, phase="half2"), replace={"turn_facts": [turn_row(game, 7)]}),
    )
    facts = repo.read_facts(game)
    assert [t["turn_no"] for t in facts["turn_facts"]] == [7]
    assert facts["game_facts"] == [game_row(game, phase="half2")]
    assert [t["turn_no"] for t in repo.read_facts(other)["turn_facts"]] == [9]


def test_the_database_file_is_created_and_migrated_once(tmp_path):
    path = tmp_path / "sub" / "s.sqlite3"
    store = SQLiteStore(path)
    assert store.migrate() == []  # already at the newest version
    st = store.repository().add_stammtisch("a", "A", {}, False, "h", NOW)
    store.close()
    again = SQLiteStore(path)
    assert again.repository().get_stammtisch("a") == st
    assert [v for v, _ in again.applied()] == [v for v, _, _ in migrations()]
    again.close()


def test_a_database_from_a_newer_version_is_refused_untouched(tmp_path):
    path = tmp_path / "s.sqlite3"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    conn.execute("UPDATE alembic_version SET version_num = '9999'")  # a newer program's
    conn.commit()
    conn.close()
    with pytest.raises(MigrationError, match="newer"):
        SQLiteStore(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version_num FROM alembic_version").fetchall() == [("9999",)]
    conn.close()


def test_an_entry_appended_inside_an_open_transaction_rolls_back_with_it(repo):
    st = repo.add_stammtisch("a", "A", {}, False, "h", NOW)
    game = repo.add_game(new_game(st.id))
    with pytest.raises(RuntimeError), repo.transaction():
        repo.append_entry(
            LogEntry(game, 1, "turn", {"player": "Anna"}, NOW), FactsWrite(game=game_row(game))
        )
        raise RuntimeError("the caller's own write failed")
    assert repo.load_log(game) == [] and repo.read_facts(game)["game_facts"] == []
    repo.append_entry(
        LogEntry(game, 1, "turn", {"player": "Anna"}, NOW), FactsWrite(game=game_row(game))
    )
    assert [e.seq for e in repo.load_log(game)] == [1]
