"""The storage port's contract, part 3: the statistics read model (its input rows, the stale
marks, the stored periods, the one-refresher lock). On the in-memory fake, SQLite and
PostgreSQL (the ``contract`` fixture, tests/storage_contract.py)."""

from __future__ import annotations

import csv
import threading
from dataclasses import replace

import pytest
from storage_contract import NOW, covers, game_row, new_game, summary_row

from api.storage import FactsWrite, LogEntry
from api.storage.records import Stammtisch, StatsWrite

#: input columns whose values compare alike on every store (numbers, text, flags)
TABLES = {
    "stammtische": ("id", "slug"),
    "players": ("id", "stammtisch_id", "name"),
    "games": ("id", "stammtisch_id", "year"),
    "game_players": ("game_id", "seat", "player_id"),
    "game_facts": ("game_id", "status", "loser_id"),
    "player_game_facts": ("game_id", "player_id", "lost", "deckel"),
    "game_log": ("game_id", "seq", "kind"),
}


def two_stammtische(repo):
    """Stammtische a and b, each with two players and a finished game; a's stale marks
    cleared (b: marked once by its finish)."""
    made = []
    for slug in ("a", "b"):
        st = repo.add_stammtisch(Stammtisch(0, slug, slug.upper(), {}, False, "h", NOW))
        anna, bert = (repo.add_player(st.id, name, NOW) for name in ("Anna", "Bert"))
        game = repo.add_game(new_game(st.id, players=((anna.id, "Anna"), (bert.id, "Bert"))))
        finished = dict(game_row(game, "finished", "done", "Anna"), loser_id=anna.id)
        summary = [summary_row(game, st.id, anna.id, True), summary_row(game, st.id, bert.id,
                                                                         False, 0)]  # fmt: skip
        repo.append_log(LogEntry(game, 1, "turn", {"player": "Anna"}, NOW))
        repo.write_facts(game, FactsWrite(game=finished, append={"player_game_facts": summary}))
        made.append((st, anna, bert, game))
    a = made[0][0]
    repo.write_stats(StatsWrite([a.id], [], {a.id: repo.stale_stats()[a.id]}))
    return made


def expected(made, which):
    rows = {table: [] for table in TABLES}
    for st, anna, bert, game in (made[i] for i in which):
        rows["stammtische"].append((st.id, st.slug))
        rows["players"] += [(anna.id, st.id, "Anna"), (bert.id, st.id, "Bert")]
        rows["games"].append((game, st.id, 2026))
        rows["game_players"] += [(game, 0, anna.id), (game, 1, bert.id)]
        rows["game_facts"].append((game, "finished", anna.id))
        rows["player_game_facts"] += [(game, anna.id, True, 3), (game, bert.id, False, 0)]
        rows["game_log"].append((game, 1, "turn"))
    return rows


@covers("stats_rows")
def test_the_refresh_input_is_every_row_of_the_chosen_stammtische(contract):
    repo = contract.repo
    made = two_stammtische(repo)
    b = made[1][0]

    def got(ids):
        return {t: sorted(rows) for t, rows in repo.stats_rows(TABLES, ids).items()}

    assert got(None) == expected(made, (0, 1))
    assert got([b.id]) == expected(made, (1,))
    assert got([]) == {table: [] for table in TABLES}
    assert list(repo.stats_rows({"players": ("name", "id")}, [b.id])) == ["players"]
    assert sorted(repo.stats_rows({"players": ("name", "id")}, [b.id])["players"]) == [
        ("Anna", made[1][1].id), ("Bert", made[1][2].id),
    ]  # fmt: skip


@covers("stats_rows", "stats_csv")
def test_an_unknown_table_or_column_is_refused(contract):
    repo = contract.repo
    two_stammtische(repo)
    for read in (repo.stats_rows, repo.stats_csv):
        with pytest.raises(ValueError):
            read({"nirgends": ("id",)}, None)
        with pytest.raises(ValueError):
            read({"players": ("id", "nirgends")}, None)


def parsed(lines: list[str]) -> list[tuple]:
    """CSV lines as DuckDB reads them: ``\\N`` unquoted is NULL, every other value text."""
    text = "\n".join(lines)
    return sorted(
        tuple(None if value == "\\N" else value for value in row)
        for row in csv.reader(text.splitlines())
    )


@covers("stats_csv")
def test_the_refresh_input_as_csv_lines_holds_the_same_values(contract):
    repo = contract.repo
    made = two_stammtische(repo)
    tables = {"players": ("id", "name"), "game_facts": ("game_id", "status", "finalist1_id")}
    got = repo.stats_csv(tables, [made[0][0].id])
    assert list(got) == ["players", "game_facts"]
    _, anna, bert, game = made[0]
    assert parsed(got["players"]) == [(str(anna.id), "Anna"), (str(bert.id), "Bert")]
    assert parsed(got["game_facts"]) == [(str(game), "finished", None)]
    repo.update_player(anna.id, 'Anna "die Große", Wirtin', False, None)
    (line,) = [row for row in parsed(repo.stats_csv(tables, None)["players"])
               if row[0] == str(anna.id)]  # fmt: skip
    assert line == (str(anna.id), 'Anna "die Große", Wirtin')
    assert repo.stats_csv(tables, []) == {"players": [], "game_facts": []}


@covers("stammtisch_ids")
def test_every_stammtisch_id_in_order(contract):
    repo = contract.repo
    assert repo.stammtisch_ids() == []
    made = [
        repo.add_stammtisch(Stammtisch(0, s, s, {}, False, "h", NOW)).id for s in ("c", "a", "b")
    ]
    assert repo.stammtisch_ids() == sorted(made)


@covers("mark_stats_stale", "stale_stats")
def test_stale_marks_count_up_per_stammtisch(contract):
    repo = contract.repo
    a = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    b = repo.add_stammtisch(Stammtisch(0, "b", "B", {}, False, "h", NOW))
    assert repo.stale_stats() == {}
    repo.mark_stats_stale([a.id, a.id])  # once per call
    repo.mark_stats_stale(iter([a.id, b.id]))
    assert repo.stale_stats() == {a.id: 2, b.id: 1}
    with pytest.raises(RuntimeError), repo.transaction():
        repo.mark_stats_stale([b.id])
        raise RuntimeError("the write that changed them failed")
    assert repo.stale_stats() == {a.id: 2, b.id: 1}


@covers("update_stammtisch", "update_player", "write_facts", "mark_stats_stale")
def test_changes_that_alter_the_statistics_mark_them_stale(contract):
    repo = contract.repo
    made = two_stammtische(repo)
    (a, anna, _, game), (b, *_) = made
    assert repo.stale_stats() == {b.id: 1}  # a's finish was computed, b's not yet
    repo.write_facts(game, FactsWrite(game=game_row(game, "finished")))  # no summary rows
    assert repo.stale_stats() == {b.id: 1}
    repo.update_player(anna.id, "Anne", False, None)
    assert repo.stale_stats() == {a.id: 1, b.id: 1}
    repo.update_stammtisch(replace(a, name="A", rules={"preset": "nrw"}, private=False))
    assert repo.stale_stats() == {a.id: 2, b.id: 1}
    repo.write_facts(game, FactsWrite(game=None, replace={"player_game_facts": []}))  # undone
    assert repo.stale_stats() == {a.id: 3, b.id: 1}


@covers("write_stats", "read_stats", "stats_computed")
def test_a_refresh_replaces_the_periods_of_its_stammtische_and_clears_their_marks(contract):
    repo = contract.repo
    a = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    b = repo.add_stammtisch(Stammtisch(0, "b", "B", {}, False, "h", NOW))
    assert repo.read_stats(a.id, None) is None and repo.stats_computed() == set()
    repo.mark_stats_stale([a.id, b.id])
    periods = [(a.id, None, 3, '{"all": 3}'), (a.id, 2025, 1, '{"y": 2025}'),
               (b.id, None, 0, '{"all": 0}')]  # fmt: skip
    repo.write_stats(StatsWrite(None, periods, repo.stale_stats()))
    assert repo.stale_stats() == {} and repo.stats_computed() == {a.id, b.id}
    assert (repo.read_stats(a.id, None), repo.read_stats(a.id, 2025)) == ('{"all": 3}',
                                                                           '{"y": 2025}')  # fmt: skip
    assert repo.read_stats(a.id, 2024) is None
    repo.write_stats(StatsWrite([a.id], [(a.id, None, 4, '{"all": 4}')], {}))
    assert repo.read_stats(a.id, None) == '{"all": 4}'
    assert repo.read_stats(a.id, 2025) is None  # the refreshed Stammtisch's old years go
    assert repo.read_stats(b.id, None) == '{"all": 0}'  # another's stay
    repo.write_stats(StatsWrite([], [], {}))
    assert repo.stats_computed() == {a.id, b.id}


@covers("write_stats", "stale_stats")
def test_a_mark_made_during_the_refresh_survives_it(contract):
    repo = contract.repo
    a = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    b = repo.add_stammtisch(Stammtisch(0, "b", "B", {}, False, "h", NOW))
    repo.mark_stats_stale([a.id, b.id])
    versions = repo.stale_stats()  # what the refresh read its input under
    repo.mark_stats_stale([a.id])  # a write while it computed
    repo.write_stats(StatsWrite(None, [(a.id, None, 1, "{}"), (b.id, None, 1, "{}")], versions))
    assert repo.stale_stats() == {a.id: 2}


@covers("stats_years")
def test_the_years_with_finished_games_newest_first(contract):
    repo = contract.repo
    a = repo.add_stammtisch(Stammtisch(0, "a", "A", {}, False, "h", NOW))
    b = repo.add_stammtisch(Stammtisch(0, "b", "B", {}, False, "h", NOW))
    periods = [(a.id, None, 5, "{}"), (a.id, 2024, 2, "{}"), (a.id, 2026, 3, "{}"),
               (a.id, 2025, 0, "{}"), (b.id, 2025, 1, "{}")]  # fmt: skip
    repo.write_stats(StatsWrite(None, periods, {}))
    assert repo.stats_years(a.id) == [(a.id, 2026, 3), (a.id, 2024, 2)]
    assert repo.stats_years(None) == [(a.id, 2026, 3), (a.id, 2024, 2), (b.id, 2025, 1)]
    assert repo.stats_years(b.id + 99) == []


@covers("stats_lock")
def test_one_refresher_at_a_time(contract):
    repo, other = contract.repo, contract.other()
    with repo.stats_lock(False) as taken:
        assert taken is True
        with other.stats_lock(False) as second:
            assert second is False
        with other.stats_lock(0.05) as second:
            assert second is False  # gave up after 0.05 s
        got: list[bool] = []

        def elsewhere() -> None:  # another thread's repository
            with contract.store.repository().stats_lock(False) as third:
                got.append(third)

        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join(10)
        assert got == [False]
    with other.stats_lock() as again:
        assert again is True


@covers("table_rows")
def test_every_row_of_a_table_for_a_copy(contract):
    table_rows = contract.has(contract.repo, "table_rows")
    made = two_stammtische(contract.repo)
    got = table_rows({"players": ("id", "name"), "games": ("id", "stammtisch_id")})
    assert sorted(got["players"]) == sorted(
        (p.id, p.name) for _, *players, _ in made for p in players
    )
    assert sorted(got["games"]) == [(game, st.id) for st, *_, game in made]


@covers("stats_arrow")
def test_the_refresh_input_as_arrow_streams(contract):
    arrow = contract.has(contract.repo, "stats_arrow")
    made = two_stammtische(contract.repo)
    tables = {"players": ("id", "name"), "player_game_facts": ("game_id", "player_id", "deckel")}
    with arrow(tables, [made[1][0].id]) as streams:
        if streams is None:  # the optional driver is not installed
            pytest.importorskip("adbc_driver_postgresql")
            raise AssertionError("the driver is installed, but no stream came")
        got = {table: sorted(tuple(r.values()) for r in reader.read_all().to_pylist())
               for table, reader in streams}  # fmt: skip
    _, anna, bert, game = made[1]
    assert got == {
        "players": [(anna.id, "Anna"), (bert.id, "Bert")],
        "player_game_facts": [(game, anna.id, 3), (game, bert.id, 0)],
    }


def luck_row(game_id: int, player_id: int, seq: int, luck: float) -> dict:
    """A row of luck_facts (migration 0017)."""
    return {"game_id": game_id, "player_id": player_id, "seq": seq, "turns": 3, "expected": 1.5,
            "survived": 2, "split": 1, "luck": luck, "given_away": 0.125}  # fmt: skip


@covers("luck_pending", "write_luck")
def test_luck_figures_are_pending_until_written_for_the_games_version(contract):
    repo = contract.repo
    (a, anna, bert, ga), (b, _, _, gb) = two_stammtische(repo)
    columns = {"luck_facts": ("game_id", "player_id", "seq", "luck", "given_away")}

    def stored(st):
        return sorted(repo.stats_rows(columns, [st.id])["luck_facts"])

    assert repo.luck_pending([a.id]) == [(ga, 1)]
    assert repo.luck_pending([a.id, b.id]) == [(ga, 1), (gb, 1)]
    assert repo.luck_pending([]) == []
    repo.write_luck({ga: [luck_row(ga, anna.id, 1, 0.25), luck_row(ga, bert.id, 1, -0.5)]})
    assert repo.luck_pending([a.id, b.id]) == [(gb, 1)]
    assert stored(a) == sorted([(ga, anna.id, 1, 0.25, 0.125), (ga, bert.id, 1, -0.5, 0.125)])
    assert stored(b) == []
    # a newer version of the game (an entry undone): pending again; a write replaces the rows
    repo.append_log(LogEntry(ga, 2, "undo", {"seq": 1}, NOW))
    assert repo.luck_pending([a.id, b.id]) == [(ga, 2), (gb, 1)]
    repo.write_luck({ga: [luck_row(ga, anna.id, 2, 0.75)]})
    assert stored(a) == [(ga, anna.id, 2, 0.75, 0.125)]
    assert repo.luck_pending([a.id]) == []
    # a game that is not finished has nothing pending
    repo.write_facts(gb, FactsWrite(game=game_row(gb, "running")))
    assert repo.luck_pending([b.id]) == []
