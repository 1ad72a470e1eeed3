"""Game numbers per Stammtisch (migration 0014): a Stammtisch's first game is "Spiel 1", in
the API as ``number`` and in the form; the migration numbers the games there are, on SQLite
and PostgreSQL, and new games continue the count."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import psycopg
import pytest
from conftest import make_table

from api.domain import GameCache, Services
from api.storage import PostgresStore, SQLiteStore
from api.storage.records import GameQuery

PLAYERS = ["Anna", "Bert"]


def test_each_stammtisch_counts_its_own_games_from_one(client: Any) -> None:
    post, falz = make_table(client, "Zur Post"), make_table(client, "Zum Falz")
    for t in (post, falz):
        t.add_players(PLAYERS)
    numbers = []
    for t in (post, falz, post, post, falz):
        game = t.start(PLAYERS)
        numbers.append((t.slug, t.game(game)["number"]))
    assert numbers == [("zur-post", 1), ("zum-falz", 1), ("zur-post", 2), ("zur-post", 3),
                       ("zum-falz", 2)]  # fmt: skip
    listed = post.get("/games").json["items"]
    assert [g["number"] for g in listed] == [3, 2, 1]  # newest first


ST = "INSERT INTO stammtische (slug, name, rules, private, token_hash, created_at) VALUES ({})"
GAME = (
    "INSERT INTO games (stammtisch_id, header, rules, options, played_at, played_at_utc, "
    "played_local, year, source, created_at) VALUES ({})"
)
WHEN = "2026-11-27 20:00:00"


def _fill_old(execute: Any, mark: str) -> None:
    """Two Stammtische and three games, alternating, as rows of the schema before 0014."""
    marks = lambda n: ", ".join([mark] * n)  # noqa: E731
    for slug in ("post", "falz"):
        execute(ST.format(marks(6)), (slug, slug, "{}", False, "h" * 64, WHEN))
    for st in (1, 2, 1):
        execute(GAME.format(marks(10)), (st, "{}", "{}", "{}", None, WHEN, WHEN, 2026, "api", WHEN))


def _fill(store: Any) -> None:
    """Two more games of the first Stammtisch through the services."""
    repo = store.repository()
    try:
        svc = Services(repo, GameCache(4))
        st = svc.stammtisch("post")
        for p in PLAYERS:
            svc.add_player(st, p)
        for _ in range(2):
            svc.start_game(st, {"players": PLAYERS, "starter": "Anna"})
    finally:
        repo.close()


def _numbers(store: Any) -> list[tuple[int, int, int]]:
    repo = store.repository()
    try:
        return [
            (g.id, g.stammtisch_id, g.number)
            for st in (1, 2)
            for g in repo.list_games(GameQuery(st, limit=10))[0]
        ]
    finally:
        repo.close()


def _assert_numbered(store: Any) -> None:
    """The migrated games of :func:`_fill_old` have their numbers per Stammtisch, and new games
    continue the count (the trigger); closes ``store``."""
    try:
        assert sorted(_numbers(store)) == [(1, 1, 1), (2, 2, 1), (3, 1, 2)]
        _fill(store)
        assert sorted(n for _, st, n in _numbers(store) if st == 1) == [1, 2, 3, 4]
    finally:
        store.close()


def test_the_migration_numbers_the_games_there_are_on_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    SQLiteStore(path, until=12).close()
    conn = sqlite3.connect(path)
    _fill_old(conn.execute, "?")
    conn.commit()
    conn.close()
    _assert_numbered(SQLiteStore(path))


def test_the_migration_numbers_the_games_there_are_on_postgresql(pg_cluster: Any) -> None:
    url = pg_cluster.empty_url("numbers_0014")
    try:
        PostgresStore(url, pool_size=2, until=12).close()
        with psycopg.connect(url, autocommit=True) as conn:
            _fill_old(conn.execute, "%s")
        _assert_numbered(PostgresStore(url, pool_size=2))
    finally:
        pg_cluster.drop(url)


@pytest.mark.parametrize("storage", ["sqlite"])
def test_the_form_names_a_game_by_its_number(tmp_path: Path, storage: str) -> None:
    from test_web_pages import Browser, add_players, create, start, text_of

    from api.app import create_app

    app = create_app({"DATABASE": str(tmp_path / "f.sqlite3"), "SECRET_KEY": "f" * 40})
    web = Browser(app)
    create(web, "Erste")  # another Stammtisch with a game first
    other, _ = create(web, "Zweite")
    add_players(web, other)
    game = start(web, other)
    assert "Spiel 1" in text_of(web.get(game)) and game.endswith("/spiel/1")
    mine, _ = create(web, "Dritte")
    add_players(web, mine)
    start(web, mine)
    game = start(web, mine)
    assert game.endswith("/spiel/3")  # the id counts every game, the number this table's
    assert "Spiel 2" in text_of(web.get(game))
    assert "Spiel 2 ·" in text_of(web.get(f"/s/{mine}/spiele"))
    app.extensions["schocken"].store.close()
