"""``schocken convert``: a DuckDB database made by the DuckDB adapter becomes a SQLite file with
every row of every table, the token hashes, the audit records and the stored idempotent
responses; replays, exports and statistics are equal on both, and new ids follow the old ones."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any

import duckdb
from conftest import PLAYERS, make_table

from api.app import create_app
from api.cli import main
from api.rules import PRESETS
from api.rules.simulate import simulate_logs
from api.storage import SQLiteStore
from api.storage.records import RESPONSE_COLUMNS, TABLE_COLUMNS
from api.storage.sql import migrations
from api.storage.sqlite.rows import column_kinds, decode_row

TABLES = {**TABLE_COLUMNS, **RESPONSE_COLUMNS}
KEY = {"Idempotency-Key": "turn-of-anna"}
START = datetime(2025, 3, 1, 20, tzinfo=UTC)


def _app(storage: str, path: Any) -> Any:
    return create_app({"STORAGE": storage, "DATABASE": str(path), "TESTING": True})


def _finished_with_finale(t: Any) -> int:
    """A game played over the API, turn by turn, that ends in a Finale."""
    for log in simulate_logs(PRESETS["standard"], 20, players=PLAYERS, seed=3, start=START):
        game = t.start(PLAYERS, log["starter"], played_at=log["played_at"])
        for event in log["events"]:
            r = t.post(f"/games/{game}/turns", event)
            assert r.status_code == 201, (event, r.json)
        outcome = r.json["game"]["outcome"]
        if outcome["loser"] and outcome["finale"]:
            return game
    raise AssertionError("no simulated game with a Finale")


def _record_old_database(path: Any) -> dict[str, Any]:
    """Everything today's DuckDB adapter stores, written over HTTP."""
    app = _app("duckdb", path)
    try:
        t = make_table(app.test_client(), "Zur Post", private=True)
        ids = t.add_players([*PLAYERS, "Elke"])
        assert t.patch(f"/players/{ids[-1]}", {"retired": True}).status_code == 200
        finished = _finished_with_finale(t)
        running = t.start(played_at="2025-06-01T20:00:00+02:00")
        r = t.post(f"/games/{running}/turns", {"player": "Anna", "dice": [1, 1, 4], "throws": 2})
        assert r.status_code == 201
        body = {"player": "Bert", "dice": [1, 4, 6], "aside": [1]}
        assert t.post(f"/games/{running}/throws", body).status_code == 201
        undone = t.start()
        assert t.turn(undone, "Anna", [2, 2, 2], 1).status_code == 201
        r = t.post(f"/games/{undone}/undo", {"by": "Dieter", "reason": "vertippt"})
        assert r.status_code == 201
        (log,) = simulate_logs(PRESETS["standard"], 1, players=PLAYERS, seed=11, start=START)
        r = t.post("/imports", log)
        assert r.status_code == 201
        imported = r.json["id"]
        turn = {"player": "Anna", "dice": [1, 1, 1], "throws": 1}
        idem = t.client.post(f"{t.base}/games/{undone}/turns", json=turn, headers={**t.auth, **KEY})
        assert idem.status_code == 201
    finally:
        app.extensions["schocken"].store.close()
    return {
        "slug": t.slug,
        "token": t.token,
        "games": [finished, running, undone, imported],
        "players": ids,
        "idem": (f"/games/{undone}/turns", turn, idem.json),
    }


def _duck_tables(path: Any, kinds: dict[str, dict[str, str]]) -> dict[str, list[tuple[Any, ...]]]:
    conn = duckdb.connect(str(path), read_only=True)
    try:
        return {
            table: sorted(
                (
                    tuple(
                        json.loads(v) if kinds[table][c] == "JSON" and v is not None else v
                        for c, v in zip(cols, row, strict=True)
                    )
                    for row in conn.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall()  # noqa: S608
                ),
                key=repr,
            )
            for table, cols in TABLES.items()
        }
    finally:
        conn.close()


def _sqlite_tables(path: Any) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, Any]]:
    conn = sqlite3.connect(str(path))
    try:
        kinds = column_kinds(conn)
        rows = {}
        for table, cols in TABLES.items():
            declared = dict(kinds[table])
            spec = tuple((c, declared[c]) for c in cols)
            found = conn.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall()  # noqa: S608
            rows[table] = sorted((tuple(decode_row(spec, row).values()) for row in found), key=repr)
        return rows, {t: dict(k) for t, k in kinds.items()}
    finally:
        conn.close()


def _reads(client: Any, slug: str, token: str, games: list[int]) -> dict[str, Any]:
    """What the API answers about the Stammtisch: every game's state, log and undos, players,
    statistics."""
    auth = {"Authorization": f"Bearer {token}"}
    base = f"/api/v1/stammtische/{slug}"
    paths = ["", "/players", "/games", "/statistics", "/statistics/years"]
    for game in games:
        paths += [f"/games/{game}", f"/games/{game}/log", f"/games/{game}/undos"]
    seen = {}
    for path in paths:
        r = client.get(base + path, headers=auth)
        assert r.status_code == 200, (path, r.json)
        seen[path] = r.json
    return seen


def test_a_duckdb_database_converts_into_an_equal_sqlite_database(tmp_path, capsys):
    old, new = tmp_path / "old.duckdb", tmp_path / "new.sqlite3"
    made = _record_old_database(old)
    capsys.readouterr()
    assert main(["convert", "--from", str(old), "--to", str(new)], standalone_mode=False) == 0
    out = capsys.readouterr().out
    for table in TABLES:
        assert table in out

    # every row of every table, value for value (decoded by the SQLite adapter's rules)
    copied, kinds = _sqlite_tables(new)
    original = _duck_tables(old, kinds)
    assert copied == original
    assert all(copied[t] for t in TABLES)
    assert any(row[2] == "undo" for row in copied["game_log"])
    assert any(row[3] == "finale" for row in copied["deckel_moves"])

    # the SQLite store opens it as up to date (the versions of DuckDB's bookkeeping)
    store = SQLiteStore(new)
    assert store.migrate() == []
    duck = duckdb.connect(str(old), read_only=True)
    versions = duck.execute("SELECT version, name FROM schema_migrations ORDER BY 1").fetchall()
    duck.close()
    assert store.applied() == [(v, n) for v, n, _ in migrations("api.storage.sqlite")]
    assert versions == store.applied()[: len(versions)]  # 0006+: SQLite only
    store.close()

    # replays, exports, undos, players and statistics read the same on both
    apps = {"duckdb": _app("duckdb", old), "sqlite": _app("sqlite", new)}
    try:
        seen = {
            name: _reads(app.test_client(), made["slug"], made["token"], made["games"])
            for name, app in apps.items()
        }
        assert seen["sqlite"] == seen["duckdb"]
        _write_on_the_new_database(apps["sqlite"], made)
    finally:
        for app in apps.values():
            app.extensions["schocken"].store.close()


def _write_on_the_new_database(app: Any, made: dict[str, Any]) -> None:
    """The old token writes, the stored idempotent answer is replayed, new ids follow."""
    client = app.test_client()
    auth = {"Authorization": f"Bearer {made['token']}"}
    base = f"/api/v1/stammtische/{made['slug']}"
    path, turn, answer = made["idem"]
    again = client.post(base + path, json=turn, headers={**auth, **KEY})
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json == answer
    r = client.post(f"{base}/games/{made['games'][1]}/throws", json={"player": "Bert", "dice": [1, 4], "stop": True}, headers=auth)  # fmt: skip
    assert r.status_code == 201, r.json
    assert client.post(base + "/games", json={"players": PLAYERS, "starter": "Anna"}).status_code == 401  # fmt: skip
    r = client.post(base + "/games", json={"players": PLAYERS, "starter": "Anna"}, headers=auth)
    assert r.status_code == 201 and r.json["id"] == max(made["games"]) + 1
    r = client.post(base + "/players", json={"name": "Fritz"}, headers=auth)
    assert r.status_code == 201 and r.json["id"] == max(made["players"]) + 1
    r = client.post("/api/v1/stammtische", json={"name": "Krone"})
    assert r.status_code == 201
    store = app.extensions["schocken"].store
    repo = store.repository()
    assert repo.get_stammtisch(r.json["slug"]).id == repo.get_stammtisch(made["slug"]).id + 1


def test_converting_onto_an_existing_file_is_refused_and_changes_nothing(tmp_path, capsys):
    old, new = tmp_path / "old.duckdb", tmp_path / "new.sqlite3"
    app = _app("duckdb", old)
    make_table(app.test_client())
    app.extensions["schocken"].store.close()
    new.write_bytes(b"schon da")
    before = old.read_bytes()
    capsys.readouterr()
    assert main(["convert", "--from", str(old), "--to", str(new)], standalone_mode=False) == 1
    assert "gibt es schon" in capsys.readouterr().err
    assert new.read_bytes() == b"schon da" and old.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.sqlite3", "old.duckdb"]


def test_a_missing_source_is_refused_and_creates_nothing(tmp_path, capsys):
    new = tmp_path / "new.sqlite3"
    args = ["convert", "--from", str(tmp_path / "nix.duckdb"), "--to", str(new)]
    assert main(args, standalone_mode=False) == 1
    assert "gibt es nicht" in capsys.readouterr().err and not new.exists()


def test_an_older_duckdb_schema_is_refused_and_leaves_no_target(tmp_path, capsys):
    old, new = tmp_path / "old.duckdb", tmp_path / "new.sqlite3"
    _app("duckdb", old).extensions["schocken"].store.close()
    conn = duckdb.connect(str(old))
    conn.execute("DELETE FROM schema_migrations WHERE version > 3")
    conn.close()
    assert main(["convert", "--from", str(old), "--to", str(new)], standalone_mode=False) == 1
    assert "Schema-Version 3" in capsys.readouterr().err and not new.exists()
