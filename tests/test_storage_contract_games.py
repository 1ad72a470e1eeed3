"""The storage port's contract, part 1: Stammtische, players, games, their logs and facts,
transactions. Every test runs on the in-memory fake, SQLite and PostgreSQL (the ``contract``
fixture, tests/storage_contract.py)."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from storage_contract import NOW, covers, game_row, new_game, turn_row

from api.storage import FactsWrite, LogEntry, StorageConflict
from api.storage.records import ROW_TABLES, GameQuery, Stammtisch


def one_game(repo):
    """The Stammtisch "a" and a game of it."""
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    return st, repo.add_game(new_game(st.id))


def entry(game: int, seq: int, player: str = "Anna", kind: str = "turn") -> LogEntry:
    return LogEntry(game, seq, kind, {"player": player}, NOW)


@covers("add_stammtisch", "get_stammtisch")
def test_a_stammtisch_is_found_by_its_slug_and_slugs_are_unique(contract):
    repo = contract.repo
    st = repo.add_stammtisch(
        Stammtisch(0, "zur-post", "Zur Post", {"preset": "bvb"}, False, "h", NOW)
    )
    assert (st.slug, st.name, st.rules, st.private, st.token_hash) == (
        "zur-post", "Zur Post", {"preset": "bvb"}, False, "h",
    )  # fmt: skip
    assert repo.get_stammtisch("zur-post") == st
    assert repo.get_stammtisch("nirgends") is None
    with pytest.raises(StorageConflict):
        repo.add_stammtisch(Stammtisch(0, "zur-post", "Andere", {}, False, "h2", NOW))
    other = repo.add_stammtisch(Stammtisch(0, "zum-hirsch", "Zum Hirsch", {}, True, "h3", NOW))
    assert other.id != st.id and repo.get_stammtisch("zur-post") == st  # the loser left nothing


@covers("update_stammtisch")
def test_updating_a_stammtisch_changes_name_rules_and_privacy(contract):
    repo = contract.repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {"preset": "standard"}, False, "h", NOW))
    other = repo.add_stammtisch(Stammtisch(0, "b", "B", {"preset": "standard"}, False, "h", NOW))
    repo.update_stammtisch(
        replace(st, name="B", rules={"preset": "nrw", "overrides": {}}, private=True)
    )
    got = repo.get_stammtisch("a")
    assert (got.name, got.rules, got.private) == ("B", {"preset": "nrw", "overrides": {}}, True)
    assert (got.id, got.slug, got.token_hash, got.created_at) == (st.id, "a", "h", NOW)
    assert repo.get_stammtisch("b") == other


@covers("add_stammtisch", "get_stammtisch", "update_stammtisch")
def test_where_a_stammtisch_shows_the_odds_is_stored_and_changed(contract):
    repo = contract.repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {"preset": "standard"}, False, "h", NOW))
    tv = repo.add_stammtisch(
        Stammtisch(0, "b", "B", {"preset": "standard"}, False, "h", NOW, "form_and_tv")
    )
    assert (st.odds_shown, repo.get_stammtisch("a").odds_shown) == ("off", "off")  # default
    assert repo.get_stammtisch("b").odds_shown == "form_and_tv"
    repo.update_stammtisch(replace(st, odds_shown="form"))
    assert repo.get_stammtisch("a").odds_shown == "form"
    repo.update_stammtisch(replace(repo.get_stammtisch("a"), name="A2", private=True))
    got = repo.get_stammtisch("a")
    assert (got.name, got.private, got.odds_shown) == ("A2", True, "form")
    repo.update_stammtisch(replace(got, odds_shown="off"))
    assert repo.get_stammtisch("a").odds_shown == "off"
    assert repo.get_stammtisch("b") == tv


@covers("add_player", "list_players", "update_player")
def test_players_are_listed_per_stammtisch_and_renamed_in_place(contract):
    repo = contract.repo
    a = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    b = repo.add_stammtisch(Stammtisch(0, "b", "B", {}, False, "h", NOW))
    anna = repo.add_player(a.id, "Anna", NOW)
    bert = repo.add_player(b.id, "Bert", NOW)
    assert (anna.stammtisch_id, anna.name, anna.retired, anna.retired_at) == (a.id, "Anna",
                                                                              False, None)  # fmt: skip
    repo.update_player(anna.id, "Anne", True, NOW)
    (only,) = repo.list_players(a.id)
    assert (only.id, only.name, only.retired, only.retired_at) == (anna.id, "Anne", True, NOW)
    assert repo.list_players(b.id) == [bert]
    repo.update_player(anna.id, "Anna", False, None)  # back at the table
    assert repo.list_players(a.id)[0].retired_at is None


@covers("list_players")
def test_players_are_listed_in_the_order_they_joined(contract):
    repo = contract.repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    names = ["Dieter", "Anna", "Clara", "Bert"]
    made = [repo.add_player(st.id, name, NOW) for name in names]
    assert repo.list_players(st.id) == made
    assert repo.list_players(st.id + 99) == []


@covers("add_game", "get_game_by_id", "get_game")
def test_a_game_is_stored_with_its_seats_and_numbered_per_stammtisch(contract):
    repo = contract.repo
    a = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    b = repo.add_stammtisch(Stammtisch(0, "b", "B", {}, False, "h", NOW))
    game = new_game(a.id, players=((3, "Clara"), (1, "Anna"), (2, "Bert")))
    first = repo.add_game(game)
    elsewhere = repo.add_game(new_game(b.id))
    second = repo.add_game(new_game(a.id))
    assert repo.get_game_by_id(first) == replace(game.stored(first), number=1)
    assert [repo.get_game_by_id(g).number for g in (elsewhere, second)] == [1, 2]
    got = repo.get_game(a.id, first)
    assert [(p.seat, p.player_id, p.name, p.starter) for p in got.players] == [
        (0, 3, "Clara", True), (1, 1, "Anna", False), (2, 2, "Bert", False),
    ]  # fmt: skip
    assert (got.status, got.phase, got.loser) == ("running", "half1", None)
    assert repo.get_game(b.id, first) is None  # one Stammtisch never sees another's
    assert repo.get_game_by_id(second + 99) is None and repo.get_game(a.id, second + 99) is None


@covers("list_games")
def test_games_are_filtered_by_year_status_and_player_and_paginated(contract):
    repo = contract.repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    ids = [repo.add_game(new_game(st.id, year)) for year in (2024, 2025, 2025, 2026)]
    three = repo.add_game(new_game(st.id, 2026, players=((3, "Clara"), (1, "Anna"))))
    repo.write_facts(ids[1], FactsWrite(game=game_row(ids[1], "finished")))
    page, total = repo.list_games(GameQuery(st.id, year=2025, limit=10))
    assert total == 2 and {g.id for g in page} == {ids[1], ids[2]}
    page, total = repo.list_games(GameQuery(st.id, status="finished", limit=10))
    assert [g.id for g in page] == [ids[1]] and page[0].status == "finished"
    page, total = repo.list_games(GameQuery(st.id, player_id=3, limit=10))
    assert [g.id for g in page] == [three]
    first, total = repo.list_games(GameQuery(st.id, limit=2))
    rest, _ = repo.list_games(GameQuery(st.id, offset=2, limit=2))
    assert total == 5
    assert [g.id for g in first + rest] == [three, ids[3], ids[2], ids[1]]  # newest first
    assert [p.name for p in first[0].players] == ["Clara", "Anna"]


@covers("list_games")
def test_games_of_one_moment_are_listed_newest_stored_first_and_per_stammtisch(contract):
    repo = contract.repo
    a = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    b = repo.add_stammtisch(Stammtisch(0, "b", "B", {}, False, "h", NOW))
    early = repo.add_game(new_game(a.id, day=3))
    same = [repo.add_game(new_game(a.id, day=20)) for _ in range(3)]
    repo.add_game(new_game(b.id, day=25))
    page, total = repo.list_games(GameQuery(a.id, limit=9))
    assert total == 4 and [g.id for g in page] == [*reversed(same), early]
    page, total = repo.list_games(GameQuery(a.id, offset=4, limit=9))
    assert (page, total) == ([], 4)  # past the end: an empty page, the same total
    page, total = repo.list_games(GameQuery(a.id, status="running", limit=2))
    assert total == 4 and len(page) == 2
    none = repo.list_games(GameQuery(a.id, year=1999, limit=9))
    assert none == ([], 0)


@covers("game_ids")
def test_game_ids_are_every_game_of_every_stammtisch_in_order(contract):
    repo = contract.repo
    assert repo.game_ids() == []
    a = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    b = repo.add_stammtisch(Stammtisch(0, "b", "B", {}, False, "h", NOW))
    made = [repo.add_game(new_game(st.id)) for st in (a, b, a)]
    assert repo.game_ids() == sorted(made)


@covers("append_log", "load_log")
def test_a_sequence_number_is_taken_only_once(contract):
    repo = contract.repo
    st, game = one_game(repo)
    assert repo.load_log(game) == []
    repo.append_log(entry(game, 1))
    with pytest.raises(StorageConflict):
        repo.append_log(entry(game, 1, "Bert"))
    assert [e.body for e in repo.load_log(game)] == [{"player": "Anna"}]


@covers("append_log", "load_log")
def test_the_log_is_loaded_in_sequence_order_per_game(contract):
    repo = contract.repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    game, other = repo.add_game(new_game(st.id)), repo.add_game(new_game(st.id))
    for seq in (2, 1, 3):
        repo.append_log(LogEntry(game, seq, "throw", {"n": seq, "dice": [1, 1, 4]}, NOW))
    repo.append_log(entry(other, 1, "Bert", "penalty"))
    assert repo.load_log(game) == [
        LogEntry(game, n, "throw", {"n": n, "dice": [1, 1, 4]}, NOW) for n in (1, 2, 3)
    ]
    assert repo.load_log(other) == [entry(other, 1, "Bert", "penalty")]


@covers("append_log_many")
def test_many_entries_are_appended_together_or_not_at_all(contract):
    repo = contract.repo
    st, game = one_game(repo)
    repo.append_log_many([])
    repo.append_log_many([entry(game, 1), entry(game, 2, "Bert")])
    assert [e.seq for e in repo.load_log(game)] == [1, 2]
    with pytest.raises(StorageConflict):
        repo.append_log_many([entry(game, 3), entry(game, 2, "Clara")])
    assert [e.seq for e in repo.load_log(game)] == [1, 2]  # entry 3 went with the conflict


@covers("game_version")
def test_a_games_version_is_its_last_entry(contract):
    repo = contract.repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    game, other = repo.add_game(new_game(st.id)), repo.add_game(new_game(st.id))
    assert repo.game_version(game) == 0
    repo.append_log_many([entry(game, 1), entry(game, 2)])
    repo.append_log(entry(other, 1))
    assert (repo.game_version(game), repo.game_version(other)) == (2, 1)
    assert repo.game_version(other + 99) == 0


@covers("game_state")
def test_a_games_state_is_its_version_and_whether_it_was_called_off(contract):
    repo = contract.repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    game, other = repo.add_game(new_game(st.id)), repo.add_game(new_game(st.id))
    assert repo.game_state(game) == (0, False)
    repo.append_log_many([entry(game, 1), entry(game, 2)])
    assert repo.abandon_game(other, NOW)
    assert (repo.game_state(game), repo.game_state(other)) == ((2, False), (0, True))
    with repo.transaction():  # inside a write, as the recording of a turn asks
        assert repo.game_state(game) == (2, False)
    assert repo.game_state(other + 99) == (0, False)  # no such game


@covers("append_entry", "transaction")
def test_an_entry_appended_inside_an_open_transaction_rolls_back_with_it(contract):
    repo = contract.repo
    st, game = one_game(repo)
    with pytest.raises(RuntimeError), repo.transaction():
        repo.append_entry(entry(game, 1), FactsWrite(game=game_row(game)))
        raise RuntimeError("the caller's own write failed")
    assert repo.load_log(game) == [] and repo.read_facts(game)["game_facts"] == []
    repo.append_entry(entry(game, 1), FactsWrite(game=game_row(game)))
    assert [e.seq for e in repo.load_log(game)] == [1]


@covers("append_entry")
def test_an_entry_whose_number_is_taken_writes_no_facts(contract):
    repo = contract.repo
    st, game = one_game(repo)
    facts = FactsWrite(game=game_row(game), append={"turn_facts": [turn_row(game, 1)]})
    repo.append_entry(entry(game, 1), facts)
    later = FactsWrite(
        game=game_row(game, phase="half2"), append={"turn_facts": [turn_row(game, 2)]}
    )
    with pytest.raises(StorageConflict):
        repo.append_entry(entry(game, 1, "Bert"), later)
    assert repo.load_log(game) == [entry(game, 1)]
    assert repo.read_facts(game)["game_facts"] == [game_row(game)]
    assert [t["turn_no"] for t in repo.read_facts(game)["turn_facts"]] == [1]


@covers("transaction", "write_facts")
def test_a_failed_transaction_leaves_nothing_behind(contract):
    repo = contract.repo
    st, game = one_game(repo)
    with pytest.raises(RuntimeError), repo.transaction():
        repo.append_log(entry(game, 1))
        repo.write_facts(game, FactsWrite(game=game_row(game)))
        repo.add_player(st.id, "Anna", NOW)
        raise RuntimeError("boom")
    assert repo.load_log(game) == []
    assert repo.read_facts(game)["game_facts"] == []
    assert repo.list_players(st.id) == []


@covers("transaction")
def test_nested_transactions_are_one_and_commit_together(contract):
    repo = contract.repo
    st, game = one_game(repo)
    with pytest.raises(RuntimeError), repo.transaction():
        with repo.transaction():
            repo.append_log(entry(game, 1))
        assert repo.load_log(game) == [entry(game, 1)]  # its own write, not committed yet
        raise RuntimeError("the outer block fails: the inner write goes too")
    assert repo.load_log(game) == []
    with repo.transaction():
        with repo.transaction():
            repo.append_log(entry(game, 1))
        repo.append_log(entry(game, 2))
    assert [e.seq for e in contract.other().load_log(game)] == [1, 2]


@covers("transaction")
def test_a_conflict_inside_a_transaction_rolls_back_the_whole_write(contract):
    repo = contract.repo
    st, game = one_game(repo)
    repo.append_log(entry(game, 1))
    with pytest.raises(StorageConflict), repo.transaction():
        repo.write_facts(game, FactsWrite(game=game_row(game, "finished")))
        repo.append_log(entry(game, 1, "Bert"))
    assert repo.read_facts(game)["game_facts"] == []
    assert repo.load_log(game) == [entry(game, 1)]


@covers("write_facts", "read_facts")
def test_facts_are_appended_or_replaced_table_by_table(contract):
    repo = contract.repo
    st, game = one_game(repo)
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


@covers("read_facts", "write_facts")
def test_a_game_without_facts_reads_empty_tables_and_rows_come_in_their_order(contract):
    repo = contract.repo
    st, game = one_game(repo)
    assert repo.read_facts(game) == {table: [] for table in ("game_facts", *ROW_TABLES)}
    rows = [turn_row(game, n) for n in (3, 1, 2)]
    repo.write_facts(game, FactsWrite(game=game_row(game, "finished", "done", "Anna"),
                                      append={"turn_facts": rows}))  # fmt: skip
    facts = repo.read_facts(game)
    assert [t["turn_no"] for t in facts["turn_facts"]] == [1, 2, 3]  # by turn number
    assert facts["game_facts"] == [game_row(game, "finished", "done", "Anna")]
    got = repo.get_game_by_id(game)
    assert (got.status, got.phase, got.loser) == ("finished", "done", "Anna")
    repo.write_facts(game, FactsWrite(game=None, replace={"turn_facts": []}))
    assert repo.read_facts(game)["turn_facts"] == []


@covers("abandon_game")
def test_a_game_is_called_off_once_and_stays_called_off(contract):
    repo = contract.repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    game, other = repo.add_game(new_game(st.id)), repo.add_game(new_game(st.id))
    repo.append_log(entry(game, 1))
    assert repo.abandon_game(game, NOW) is True
    assert repo.abandon_game(game, NOW) is False
    assert repo.get_game_by_id(game).status == "abandoned"
    assert repo.load_log(game) == [entry(game, 1)]  # the game and its log stay
    repo.write_facts(game, FactsWrite(game=game_row(game, "finished")))
    assert repo.get_game(st.id, game).status == "abandoned"
    page, total = repo.list_games(GameQuery(st.id, status="abandoned", limit=9))
    assert ([g.id for g in page], total) == ([game], 1)
    assert repo.get_game_by_id(other).status == "running"
    assert repo.abandon_game(other + 99, NOW) is False  # no such game: nothing to call off


@covers("reading")
def test_reads_in_one_moment_and_a_reading_inside_a_transaction_is_part_of_it(contract):
    repo = contract.repo
    st, game = one_game(repo)
    repo.append_log(entry(game, 1))
    with repo.reading():
        assert repo.load_log(game) == [entry(game, 1)]
        assert repo.get_game_by_id(game).id == game
    with pytest.raises(RuntimeError), repo.transaction():
        repo.append_log(entry(game, 2))
        with repo.reading():
            assert repo.game_version(game) == 2  # the transaction's own write
        repo.append_log(entry(game, 3))  # still inside the transaction
        raise RuntimeError("boom")
    assert repo.game_version(game) == 1


@covers("on_commit")
def test_actions_wait_for_the_commit_and_are_dropped_by_a_rollback(contract):
    repo = contract.repo
    done: list[str] = []
    repo.on_commit(lambda: done.append("now"))
    assert done == ["now"]  # outside a transaction: at once
    with repo.transaction():
        repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
        repo.on_commit(lambda: done.append("committed"))
        assert done == ["now"]
    assert done == ["now", "committed"]
    with pytest.raises(RuntimeError), repo.transaction():
        repo.on_commit(lambda: done.append("never"))
        raise RuntimeError("boom")
    assert done == ["now", "committed"]


@covers("probe")
def test_a_healthy_store_passes_the_probe_even_inside_a_transaction(contract):
    repo = contract.repo
    assert repo.probe() is None
    with repo.transaction():
        repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
        assert repo.probe() is None
    assert repo.get_stammtisch("a") is not None


@covers("close")
def test_a_repository_closed_at_the_end_of_a_request_serves_the_next_one(contract):
    repo = contract.repo
    st = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    repo.close()
    repo.close()  # twice is harmless
    assert contract.repo.get_stammtisch("a") == st
    contract.repo.add_player(st.id, "Anna", NOW)
    assert [p.name for p in contract.other().list_players(st.id)] == ["Anna"]


@covers("stammtisch_slugs")
def test_the_slugs_of_every_stammtisch_by_id(contract):
    slugs = contract.has(contract.repo, "stammtisch_slugs")
    a = contract.repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    b = contract.repo.add_stammtisch(Stammtisch(0, "b", "B", {}, False, "h", NOW))
    assert slugs() == {a.id: "a", b.id: "b"}


@covers("transaction")
def test_a_writer_in_another_thread_waits_for_the_transaction_and_keeps_its_write(contract):
    """Each thread works with its own repository (``store.repository()``): a write of another
    thread waits while a transaction holds the game, and one thread's rollback never takes
    the other's write with it."""
    st = contract.repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    game = contract.repo.add_game(new_game(st.id))
    inside, written = threading.Event(), threading.Event()

    def other_thread() -> None:
        repo = contract.store.repository()
        try:
            inside.wait(10)
            repo.append_log(entry(game, 2, "Bert"))
            written.set()
        finally:
            repo.close()

    thread = threading.Thread(target=other_thread)
    thread.start()
    repo = contract.repo
    with pytest.raises(RuntimeError), repo.transaction():
        repo.game_version(game)  # PostgreSQL: the game's row locked until the end
        repo.append_log(entry(game, 1))
        inside.set()
        assert not written.wait(0.2)  # it waits for this transaction
        raise RuntimeError("boom")
    thread.join(10)
    assert written.is_set() and [e.seq for e in repo.load_log(game)] == [2]


@covers("get_stammtisch", "get_game_by_id", "load_log", "list_games", "read_facts")
def test_a_record_read_is_a_copy_changing_it_changes_nothing_stored(contract):
    repo = contract.repo
    st = repo.add_stammtisch(
        Stammtisch(0, "a", "A", {"preset": "bvb", "overrides": {}}, False, "h", NOW)
    )
    game = repo.add_game(new_game(st.id))
    repo.append_log(entry(game, 1))
    repo.write_facts(
        game, FactsWrite(game=game_row(game), append={"turn_facts": [turn_row(game, 1)]})
    )
    repo.get_stammtisch("a").rules["overrides"]["x"] = 1
    repo.get_game_by_id(game).header["players"].append("Zoe")
    repo.list_games(GameQuery(st.id, limit=1))[0][0].rules["preset"] = "nrw"
    repo.load_log(game)[0].body["player"] = "Bert"
    repo.read_facts(game)["turn_facts"][0]["dice"] = "6-6-6"
    assert repo.get_stammtisch("a").rules == {"preset": "bvb", "overrides": {}}
    assert repo.get_game_by_id(game) == replace(new_game(st.id).stored(game), number=1)
    assert repo.load_log(game) == [entry(game, 1)]
    assert repo.read_facts(game)["turn_facts"] == [turn_row(game, 1)]
