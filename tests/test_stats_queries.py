"""Every statistics query against the small fixed data of ``dashboard_data`` (hand-computed)."""

from __future__ import annotations

import itertools
import sqlite3
from datetime import datetime

import duckdb
import pytest
from dashboard_data import cursor, make_store

from api.bench.stats_bench import SQLITE_TABLES
from dashboard.stats import SET_QUERIES, Statistics, min_games, queries, run


@pytest.fixture(scope="module")
def stats():
    store = make_store()
    yield Statistics(cursor(store))
    store.close()


def by_name(rows, key):
    return {r["name"]: r[key] for r in rows}


def test_verlierer_des_jahres_ties_on_games_lost_go_to_the_higher_share_lost(stats):
    # Clara and Elke lost 2 each; Elke (joined in July) lost 2 of 3, Clara 2 of 6
    v = stats.verlierer(1, 2024, games=7)
    assert [r["name"] for r in v["verlierer"]] == ["Elke"]
    assert v["verlierer"][0]["share_lost"] == pytest.approx(2 / 3)
    assert [(r["rank"], r["name"]) for r in v["ranking"][:2]] == [(1, "Elke"), (2, "Clara")]


def test_equal_games_and_share_are_decided_by_halves_lost_and_full_ties_share_a_place(stats):
    # Anna, Bert, Dieter: 1 of 6 lost; halves lost 3, 3, 2: Anna and Bert share place 3
    ranking = stats.verlierer(1, 2024, games=7)["ranking"]
    assert [(r["rank"], r["name"], r["halves_lost"]) for r in ranking[2:]] == [
        (3, "Anna", 3),
        (3, "Bert", 3),
        (5, "Dieter", 2),
    ]


def test_a_title_shared_when_tied_on_every_criterion(stats):
    v = stats.verlierer(1, 2023, games=2)
    assert [r["name"] for r in v["verlierer"]] == ["Anna", "Bert"]
    assert {r["rank"] for r in v["verlierer"]} == {1}


def test_the_safest_player_has_the_lowest_share_then_more_games_then_fewer_halves(stats):
    v = stats.verlierer(1, 2024, games=7)
    assert v["min_games"] == 2
    assert [r["name"] for r in v["safest"]] == ["Dieter"]  # 1/6 like Anna and Bert, 2 halves
    assert by_name(v["ranking"], "safe_rank") == {
        "Dieter": 1,
        "Anna": 2,
        "Bert": 2,
        "Clara": 4,
        "Elke": 5,
    }
    # 2023: Clara and Frank lost nothing; Clara played more
    assert [r["name"] for r in stats.verlierer(1, 2023, games=2)["safest"]] == ["Clara"]


def test_the_safest_player_needs_a_quarter_of_the_games(stats):
    # all time: 9 games, so at least 3; Frank (1 game, never lost) does not qualify
    v = stats.verlierer(1, None, games=9)
    assert v["min_games"] == 3
    assert by_name(v["ranking"], "safe_rank")["Frank"] is None
    assert [min_games(n) for n in (0, 1, 4, 5, 52)] == [1, 1, 1, 2, 13]


def test_player_stats_count_finished_games_of_this_stammtisch_only(stats):
    players = {p["name"]: p for p in stats.players(1, 2024, 7)}
    assert set(players) == {"Anna", "Bert", "Clara", "Dieter", "Elke"}
    anna = players["Anna"]  # the running G10 (Anna lost a half, got 13 Deckel) is ignored
    assert (anna["games_played"], anna["games_lost"], anna["halves_lost"]) == (6, 1, 3)
    assert (anna["finals_played"], anna["finals_lost"], anna["blattschuss"]) == (1, 0, 1)
    assert (anna["deckel"], anna["schock_aus"], anna["turns"]) == (1, 2, 2)
    assert anna["deckel_per_game"] == pytest.approx(1 / 6)
    bert = players["Bert"]
    assert (bert["finals_played"], bert["finals_lost"], bert["deckel"]) == (3, 1, 23)
    assert bert["schock_aus"] == 1
    assert by_name(stats.players(1, 2024, 7), "finals_lost") == {
        "Anna": 0,
        "Bert": 1,
        "Clara": 2,
        "Dieter": 1,
        "Elke": 1,
    }


def test_a_player_who_joined_mid_year_has_partial_attendance(stats):
    elke = next(p for p in stats.players(1, 2024, 7) if p["name"] == "Elke")
    assert elke["games_played"] == 3
    assert elke["attendance"] == pytest.approx(3 / 7)
    assert elke["first_game"] == datetime(2024, 7, 5, 20, 0)
    assert (elke["deckel"], elke["blattschuss"]) == (26, 1)
    assert elke["deckel_per_game"] == pytest.approx(26 / 3)


def test_longest_run_without_a_lost_game(stats):
    year = by_name(stats.players(1, 2024, 7), "longest_without_loss")
    assert year == {"Anna": 4, "Bert": 5, "Clara": 2, "Dieter": 3, "Elke": 1}
    ever = by_name(stats.players(1, None, 9), "longest_without_loss")
    assert ever == {"Anna": 4, "Bert": 5, "Clara": 4, "Dieter": 3, "Elke": 1, "Frank": 1}


def test_head_to_head_in_the_finale(stats):
    pairs = [
        (h["player_a"], h["player_b"], h["finals"], h["wins_a"], h["wins_b"])
        for h in stats.head_to_head(1, 2024)
    ]
    assert pairs == [
        ("Anna", "Clara", 1, 1, 0),
        ("Bert", "Clara", 1, 0, 1),
        ("Bert", "Dieter", 1, 1, 0),
        ("Bert", "Elke", 1, 1, 0),
        ("Clara", "Dieter", 1, 0, 1),
    ]
    ever = {
        (h["player_a"], h["player_b"]): (h["wins_a"], h["wins_b"])
        for h in stats.head_to_head(1, None)
    }
    assert ever[("Anna", "Clara")] == (1, 1)  # 2024 Anna won, 2023 Clara won
    assert ever[("Bert", "Clara")] == (0, 2)


def test_records(stats):
    r = stats.records(1, 2024)
    assert [(g["game_id"], g["rounds"], g["loser"]) for g in r["longest_games"]] == [
        (3, 20, "Clara"),  # 20 rounds like G4 (no turns recorded for either): earlier first
        (4, 20, "Dieter"),
        (6, 15, "Clara"),
        (1, 12, "Bert"),
        (2, 9, "Anna"),
    ]
    assert [(g["name"], g["schock_aus"]) for g in r["most_schock_aus"]] == [
        ("Anna", 2),
        ("Bert", 1),
    ]
    assert [
        (g["game_id"], g["half"], g["name"], g["deckel"]) for g in r["most_deckel_in_half"]
    ] == [
        (1, "finale", "Bert", 13),
        (1, "half2", "Clara", 13),
        (5, "half1", "Elke", 13),
        (5, "half2", "Elke", 13),
        (1, "half1", "Bert", 10),
    ]


def test_games_lost_per_month(stats):
    trend = [(t["month"], t["name"], t["games_lost"]) for t in stats.trend(1, 2024)]
    assert trend == [
        ("2024-01", "Bert", 1),
        ("2024-02", "Anna", 1),
        ("2024-03", "Clara", 1),
        ("2024-04", "Dieter", 1),
        ("2024-07", "Elke", 1),
        ("2024-08", "Clara", 1),
        ("2024-09", "Elke", 1),
    ]
    assert len(stats.trend(1, None)) == 9


def test_attendance_per_year(stats):
    rows = {
        (a["year"], a["name"]): (a["games_played"], a["games"]) for a in stats.attendance(1, None)
    }
    assert rows[(2024, "Elke")] == (3, 7)
    assert rows[(2023, "Frank")] == (1, 2)
    assert (2023, "Elke") not in rows


def test_only_throws_nobody_chose_are_compared_with_the_probabilities(stats):
    cats = stats.categories(1, 2024)
    total = cats["total"]
    assert total["counts"] == {"schock_aus": 0, "schock": 1, "general": 1, "strasse": 1, "zahl": 1}
    assert total["throws"] == 4
    dieter = next(p for p in cats["players"] if p["name"] == "Dieter")
    assert dieter["counts"]["schock"] == 1 and dieter["counts"]["zahl"] == 1
    assert dieter["expected"]["zahl"] == pytest.approx(2 * 171 / 216)
    assert [c["outcomes"] for c in cats["categories"]] == [1, 15, 5, 24, 171]


def test_the_216_outcomes_of_one_throw_fall_into_rules_section_2_categories():
    # Anna (seated in G1, none of her G1 throws is fair) throws all 216 outcomes blind
    blind = [
        (2, 1, "-".join(map(str, sorted(d))), 1, True, True, "x")
        for d in itertools.product(range(1, 7), repeat=3)
    ]
    store = make_store(extra_turns=blind)
    try:
        cats = Statistics(cursor(store)).categories(1, 2024)
        anna = next(p for p in cats["players"] if p["name"] == "Anna")
        assert anna["counts"] == {
            "schock_aus": 1,
            "schock": 15,
            "general": 5,
            "strasse": 24,
            "zahl": 171,
        }
        assert anna["expected"] == pytest.approx(anna["counts"])
    finally:
        store.close()


def test_overview_years_and_stammtische(stats):
    o = stats.overview(1, 2024)
    assert (o["games"], o["rounds"], o["turns"], o["finals"], o["blattschuss"], o["players"]) == (
        7, 88, 8, 5, 2, 5,
    )  # fmt: skip
    assert stats.years(1) == [{"year": 2024, "games": 7}, {"year": 2023, "games": 2}]
    assert [s["slug"] for s in stats.stammtische()] == ["zur-post"]
    both = stats.stammtische(include_private=True)
    assert [(s["slug"], s["games"], s["first_year"], s["last_year"]) for s in both] == [
        ("zum-anker", 1, 2024, 2024),
        ("zur-post", 9, 2023, 2024),
    ]


def test_a_year_without_games_is_empty_not_an_error(stats):
    data = stats.collect(1, 1999)
    assert data["overview"]["games"] == 0
    assert data["verlierer"] == {"ranking": [], "verlierer": [], "safest": [], "min_games": 1}
    assert data["players"] == [] and data["categories"]["total"]["throws"] == 0


def test_queries_are_set_based_and_bind_their_parameters(stats):
    # every statistic answers for every Stammtisch and period at once: keyed rows
    for name in SET_QUERIES:
        assert "stammtisch_id" in queries()[name].sql and "period" in queries()[name].sql
    with pytest.raises(TypeError, match="limit"):
        run(stats.conn, "record_schock_aus")
    # bound, not formatted: SQL in a value is just a (wrong) value
    with pytest.raises(duckdb.ConversionException):
        run(stats.conn, "record_schock_aus", limit="1 OR 1=1")


def test_the_same_queries_give_the_same_numbers_on_sqlite(stats):
    """The benchmark compares with SQLite: the query files are portable SQL."""
    lite = sqlite3.connect(":memory:")
    for table in (*SQLITE_TABLES, "luck_facts"):
        cur = stats.conn.execute(f"SELECT * FROM {table}")
        cols = [d[0] for d in cur.description]
        rows = [
            tuple(v.isoformat(sep=" ") if isinstance(v, datetime) else v for v in row)
            for row in cur.fetchall()
        ]
        lite.execute(f"CREATE TABLE {table} ({', '.join(cols)})")
        lite.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(cols))})", rows)
    duck = stats.collect(1, 2024)
    other = Statistics(lite).collect(1, 2024)

    def plain(value):
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        if isinstance(value, list):
            return [plain(v) for v in value]
        if isinstance(value, datetime):
            return value.isoformat(sep=" ")
        if isinstance(value, float):
            return round(value, 9)
        return value

    assert plain(other) == plain(duck)
