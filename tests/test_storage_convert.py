"""``schocken convert`` on a database the retired DuckDB store wrote (the committed fixture
``tests/fixtures/duckdb_v5.duckdb.gz``, made by today's main with
``tests/fixtures/make_duckdb_fixture.py``): every Stammtisch, player, game, token hash, audit
record (undo), fact row and stored idempotent response arrives in the new SQLite file; every
game exports (replays) and reads as it did on DuckDB, the facts equal those of DuckDB and a
replay of the logs, new ids follow the old ones. Also: the conversion on the first start, and
what is refused."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import threading
from datetime import date, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest
from conftest import PLAYERS
from flask import Flask

from api.app import create_app
from api.cli import main
from api.cli.server import open_app
from api.storage import SQLiteStore
from api.storage.convert import DUCKDB_VERSION, convert_on_first_start
from api.storage.records import FACT_COLUMNS, RESPONSE_COLUMNS, TABLE_COLUMNS
from api.storage.sql import migrations as package_migrations
from api.storage.sqlite.store import column_kinds
from api.storage.statements import decode

FIXTURES = Path(__file__).parent / "fixtures"
TABLES = {**TABLE_COLUMNS, **RESPONSE_COLUMNS}
EXPECTED: dict[str, Any] = json.loads(
    (FIXTURES / "duckdb_v5.expected.json").read_text(encoding="utf-8")
)


def old_database(folder: Path, name: str = "old.duckdb") -> Path:
    """The fixture, decompressed into ``folder``."""
    path = folder / name
    with gzip.open(FIXTURES / "duckdb_v5.duckdb.gz", "rb") as src, path.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return path


def _cell(value: Any) -> Any:
    """A value as the fixture's JSON holds it (see make_duckdb_fixture.py)."""
    if isinstance(value, str) and value[:1] in "[{":
        return json.loads(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def sqlite_facts(path: Path) -> tuple[dict[str, list[list[Any]]], dict[str, int], dict[str, str]]:
    """Every fact row (decoded, sorted as the fixture's), the row count of every table and the
    token hashes of the SQLite file ``path``."""
    conn = sqlite3.connect(str(path))
    try:
        kinds = {table: dict(columns) for table, columns in column_kinds(conn).items()}
        facts, counts = {}, {}
        for table, columns in TABLES.items():
            spec = tuple((c, kinds[table][c]) for c in columns)
            rows = conn.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()  # noqa: S608
            counts[table] = len(rows)
            if table in FACT_COLUMNS:
                decoded = (
                    [_cell(decode(k, v)) for (_, k), v in zip(spec, row, strict=True)]
                    for row in rows
                )
                facts[table] = sorted(decoded, key=json.dumps)
        hashes = dict(conn.execute("SELECT slug, token_hash FROM stammtische").fetchall())
        return facts, counts, hashes
    finally:
        conn.close()


def _app(path: Path) -> Any:
    return create_app({"DATABASE": str(path), "TESTING": True})


def test_the_fixture_converts_into_an_equal_sqlite_database(tmp_path, capsys):
    old, new = old_database(tmp_path), tmp_path / "new.sqlite3"
    before = old.read_bytes()
    assert main(["convert", "--from", str(old), "--to", str(new)], standalone_mode=False) == 0
    out = capsys.readouterr().out
    assert all(table in out for table in TABLES) and f"into {new}" in out
    assert old.read_bytes() == before  # only read

    facts, counts, hashes = sqlite_facts(new)
    assert counts == EXPECTED["counts"] and all(counts.values())
    assert facts == EXPECTED["facts"]
    assert hashes == {slug: seen["token_hash"] for slug, seen in EXPECTED["stammtische"].items()}

    store = SQLiteStore(new)  # opened as up to date, the versions of the DuckDB file recorded
    assert store.migrate() == []
    assert (
        store.applied()[:DUCKDB_VERSION]
        == [(v, n) for v, n, _ in package_migrations("api.storage.sqlite")][:5]
    )
    store.close()

    app = _app(new)
    try:
        _reads_equal(app.test_client())
        assert main(["rebuild", "--db", str(new)], standalone_mode=False) == 0  # replay
        assert sqlite_facts(new)[0] == EXPECTED["facts"]
        _writes_go_on(app.test_client(), new)
    finally:
        app.extensions["schocken"].store.close()


def contains(actual: Any, expected: Any) -> bool:
    """``actual`` holds everything of ``expected`` (dicts may have gained keys since the
    fixture was made; lists have the same length, element by element; values are equal)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and contains(actual[k], v) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(contains(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


def _reads_equal(client: Any) -> None:
    """Every game's export (the replay: exactly, schemas/GAMELOG.md v1) and undo history, its state,
    the players, the game list and the Stammtisch read as the DuckDB store answered (answers
    that gain a field later still hold every value the fixture recorded)."""
    for slug, seen in EXPECTED["stammtische"].items():
        auth = {"Authorization": f"Bearer {seen['token']}"}
        base = f"/api/v1/stammtische/{slug}"

        def get(path: str, base: str = base, auth: dict[str, str] = auth) -> Any:
            r = client.get(base + path, headers=auth)
            assert r.status_code == 200, (path, r.json)
            return r.json

        assert contains(get(""), seen["stammtisch"])
        assert contains(get("/players"), seen["players"])
        assert contains(get("/games"), seen["games_list"])
        for game, read in seen["games"].items():
            assert get(f"/games/{game}/log") == read["log"], game
            assert contains(get(f"/games/{game}/undos"), read["undos"]), game
            assert contains(get(f"/games/{game}"), read["state"]), game
    undos = [u for s in EXPECTED["stammtische"].values() for g in s["games"].values() for u in g["undos"]]  # fmt: skip
    assert len(undos) == 2


def _writes_go_on(client: Any, path: Path) -> None:
    """The old tokens write, stored idempotent answers are replayed, new ids follow."""
    st = EXPECTED["stammtische"]
    for key, sent in EXPECTED["idempotent"].items():
        slug = next(s for s, seen in st.items() if sent["path"].split("/")[2] in seen["games"])
        headers = {"Authorization": f"Bearer {st[slug]['token']}", "Idempotency-Key": key}
        again = client.post(f"/api/v1/stammtische/{slug}{sent['path']}", json=sent["body"], headers=headers)  # fmt: skip
        assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    auth = {"Authorization": f"Bearer {st['zur-post']['token']}"}
    base = "/api/v1/stammtische/zur-post"
    r = client.post(f"{base}/games/4/throws", json={"player": "Dieter", "dice": [6, 5, 4], "stop": True}, headers=auth)  # fmt: skip
    assert r.status_code == 201, r.json  # the throw-by-throw turn left open goes on
    body = {"players": PLAYERS, "starter": "Anna"}
    assert client.post(base + "/games", json=body).status_code == 401
    r = client.post(base + "/games", json=body, headers=auth)
    assert r.status_code == 201 and r.json["id"] == EXPECTED["counts"]["games"] + 1
    r = client.post(base + "/players", json={"name": "Fritz"}, headers=auth)
    assert r.status_code == 201 and r.json["id"] == EXPECTED["counts"]["players"] + 1
    r = client.post("/api/v1/stammtische", json={"name": "Adler"})
    assert r.status_code == 201
    conn = sqlite3.connect(str(path))
    ids = conn.execute("SELECT slug, id FROM stammtische").fetchall()
    conn.close()
    assert dict(ids)["adler"] == EXPECTED["counts"]["stammtische"] + 1


def test_the_first_start_converts_the_old_default_database_and_keeps_it(
    tmp_path, monkeypatch, capsys
):
    instance = tmp_path / "instance"
    instance.mkdir()
    old = old_database(instance, "schocken.duckdb")
    before = old.read_bytes()
    monkeypatch.setattr(Flask, "auto_find_instance_path", lambda self: str(instance))
    monkeypatch.delenv("SCHOCKEN_DATABASE", raising=False)
    monkeypatch.delenv("SCHOCKEN_STORAGE", raising=False)
    app = create_app({"TESTING": True})
    try:
        assert app.config["DATABASE"] == str(instance / "schocken.sqlite3")
        told = capsys.readouterr().err
        assert "umgewandelt" in told and "converted" in told and told.count("\n") == 1
        _reads_equal(app.test_client())
    finally:
        app.extensions["schocken"].store.close()
    assert old.read_bytes() == before
    app = create_app({"TESTING": True})  # the second start: nothing to convert
    app.extensions["schocken"].store.close()
    assert capsys.readouterr().err == ""


def test_processes_starting_at_once_convert_once(tmp_path):
    """Two starts racing on the first start: one conversion becomes the database, the other
    is thrown away; no half-made file is ever opened and nothing is left beside it."""
    old, new = old_database(tmp_path, "schocken.duckdb"), tmp_path / "schocken.sqlite3"
    told: list[str | None] = []
    barrier = threading.Barrier(2)

    def start() -> None:
        barrier.wait()
        told.append(convert_on_first_start(new, old))

    threads = [threading.Thread(target=start) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(told) == 2 and sum(t is not None for t in told) == 1
    assert sqlite_facts(new)[1] == EXPECTED["counts"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["schocken.duckdb", "schocken.sqlite3"]
    assert convert_on_first_start(new, old) is None  # there already


def test_storage_duckdb_is_gone_with_a_pointer_to_convert(tmp_path, monkeypatch, capsys):
    with pytest.raises(ValueError, match="schocken convert"):
        create_app({"STORAGE": "duckdb", "DATABASE": str(tmp_path / "x.duckdb")})
    monkeypatch.setenv("SCHOCKEN_STORAGE", "duckdb")
    with pytest.raises(ValueError, match="SCHOCKEN_STORAGE=duckdb"):
        create_app({"DATABASE": str(tmp_path / "x.sqlite3")})
    monkeypatch.delenv("SCHOCKEN_STORAGE")
    old = old_database(tmp_path)
    assert open_app(str(old)) is None  # `schocken serve --db old.duckdb`
    assert "schocken convert --from" in capsys.readouterr().err


def test_converting_onto_an_existing_file_is_refused_and_changes_nothing(tmp_path, capsys):
    old, new = old_database(tmp_path), tmp_path / "new.sqlite3"
    new.write_bytes(b"schon da")
    before = old.read_bytes()
    assert main(["convert", "--from", str(old), "--to", str(new)], standalone_mode=False) == 1
    assert "gibt es schon" in capsys.readouterr().err
    assert new.read_bytes() == b"schon da" and old.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.sqlite3", "old.duckdb"]


def test_a_missing_source_is_refused_and_creates_nothing(tmp_path, capsys):
    new = tmp_path / "new.sqlite3"
    args = ["convert", "--from", str(tmp_path / "nix.duckdb"), "--to", str(new)]
    assert main(args, standalone_mode=False) == 1
    assert "gibt es nicht" in capsys.readouterr().err and not new.exists()


@pytest.mark.parametrize("version", [3, 6])
def test_another_duckdb_schema_version_is_refused_and_leaves_no_target(tmp_path, capsys, version):
    old, new = old_database(tmp_path), tmp_path / "new.sqlite3"
    conn = duckdb.connect(str(old))
    conn.execute("DELETE FROM schema_migrations WHERE version > 3")
    if version > DUCKDB_VERSION:
        conn.execute("INSERT INTO schema_migrations VALUES (4, 'a', now()), (5, 'b', now())")
        conn.execute("INSERT INTO schema_migrations VALUES (6, 'future', now())")
    conn.close()
    assert main(["convert", "--from", str(old), "--to", str(new)], standalone_mode=False) == 1
    err = capsys.readouterr().err
    assert f"Schema-Version {version}" in err and "nur Version 5" in err
    assert not new.exists() and not Path(f"{new}-wal").exists()


def test_a_file_that_is_no_schocken_database_is_refused(tmp_path, capsys):
    old, new = tmp_path / "other.duckdb", tmp_path / "new.sqlite3"
    duckdb.connect(str(old)).close()
    assert main(["convert", "--from", str(old), "--to", str(new)], standalone_mode=False) == 1
    assert "keine Schocken-Datenbank" in capsys.readouterr().err and not new.exists()
