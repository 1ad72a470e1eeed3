"""Backups: `schocken export` / `schocken import` round-trip a database exactly; `schocken
backup --server` fetches a consistent backup from the running server; an export folder of the
retired DuckDB store (Parquet) is imported into SQLite as `schocken convert` would convert its
database."""

from __future__ import annotations

import json
import signal

import duckdb
from test_api_serve import call, free_port, serve
from test_storage_convert import old_database
from test_storage_sqlite_backup import filled, sqlite_tables

from api.app import create_app
from api.cli import main
from api.rules import replay_text


def schocken(*argv: str) -> int:
    """``schocken ARGV…`` in this process: its exit code."""
    return main(list(argv), standalone_mode=False)


def tables_of(db) -> dict[str, list[tuple]]:
    """Every table's rows in a stable order (sqlite_sequence too: the next ids)."""
    return sqlite_tables(db)


def filled_database(path) -> None:
    """The database file ``path`` with test_storage_sqlite_backup's games (:func:`filled`)."""
    app = create_app({"DATABASE": str(path)})
    filled(app)
    app.extensions["schocken"].store.close()


def test_export_and_import_round_trip_a_database_exactly(tmp_path, capsys):
    db = tmp_path / "a.sqlite3"
    filled_database(db)
    out = tmp_path / "export"
    assert schocken("export", str(out), "--db", str(db)) == 0
    assert (out / "schocken.sqlite3").exists()
    logs = sorted((out / "logs" / "zur-post").glob("*.json"))
    assert len(logs) == 4
    for path in logs[:3]:  # the imported games replay to an outcome (game logs, schemas/GAMELOG.md)
        assert "error" not in replay_text(path.read_text())
    moved = tmp_path / "elsewhere" / "copy"  # the folder may be moved before importing
    moved.parent.mkdir()
    out.rename(moved)
    db2 = tmp_path / "b.sqlite3"
    assert schocken("import", str(moved), "--db", str(db2)) == 0
    assert tables_of(db2) == tables_of(db)
    assert schocken("import", str(moved), "--db", str(db2)) == 1  # never over an existing file
    assert schocken("export", str(moved), "--db", str(db)) == 1  # never into a full folder
    # the imported database works: migrations done, ids continue, the idempotent answer kept
    app = create_app({"DATABASE": str(db2)})
    client = app.test_client()
    game = client.get("/api/v1/stammtische/zur-post/games/4").json
    assert game["seq"] == 3
    r = client.post("/api/v1/stammtische", json={"name": "Anker"})
    assert r.status_code == 201 and r.json["slug"] == "anker"
    anker = {"Authorization": f"Bearer {r.json['token']}"}
    for name in ("Anna", "Bert"):
        assert (
            client.post(
                "/api/v1/stammtische/anker/players", json={"name": name}, headers=anker
            ).json["id"]
            > 4
        )
    r = client.post(
        "/api/v1/stammtische/anker/games",
        json={"players": ["Anna", "Bert"], "starter": "Anna"},
        headers=anker,
    )
    assert r.json["id"] == 5
    app.extensions["schocken"].store.close()
    capsys.readouterr()


def test_backup_goes_through_the_running_server_and_restores(tmp_path, monkeypatch, capsys):
    admin = "-admin-geheim"  # a token may start with "-" (token_urlsafe: 1.5 % of them)
    monkeypatch.setenv("SCHOCKEN_ADMIN_TOKEN", admin)
    db = tmp_path / "data" / "schocken.sqlite3"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = serve(db, port)
    try:
        status, st = call(base, "POST", "/api/v1/stammtische", {"name": "Zur Post"})
        token = st["token"]
        for name in ("Anna", "Bert"):
            call(base, "POST", "/api/v1/stammtische/zur-post/players", {"name": name}, token)
        _, game = call(
            base, "POST", "/api/v1/stammtische/zur-post/games",
            {"players": ["Anna", "Bert"], "starter": "Anna"}, token,
        )  # fmt: skip
        url = f"/api/v1/stammtische/zur-post/games/{game['id']}"
        turn = {"player": "Anna", "dice": [1, 1, 4], "throws": 2}
        assert call(base, "POST", url + "/turns", turn, token)[0] == 201
        assert schocken("backup", str(tmp_path / "wrong"), "--server", base, "--token", token) == 1
        assert "(403)" in capsys.readouterr().err
        assert schocken("backup", str(tmp_path / "b1"), "--server", base) == 0
        assert schocken("backup", str(tmp_path / "b2"), "--server", base, "--token", admin) == 0
        # the server goes on recording; the backup is the moment it was taken
        assert call(base, "POST", url + "/turns", {**turn, "player": "Bert"}, token)[0] == 201
        _, state = call(base, "GET", url)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
    restored = tmp_path / "restored.sqlite3"
    assert schocken("import", str(tmp_path / "b1"), "--db", str(restored)) == 0
    app = create_app({"DATABASE": str(restored)})
    game_then = app.test_client().get(url).json
    assert game_then["seq"] == 1 and state["seq"] == 2
    assert json.loads((tmp_path / "b1" / "logs" / "zur-post" / "1.json").read_text())["events"] == [
        turn
    ]
    app.extensions["schocken"].store.close()
    capsys.readouterr()


def test_backup_takes_a_token_that_starts_with_a_dash(tmp_path, monkeypatch, capsys):
    from api.cli import backup as commands
    from api.domain.backup import tar_folder

    export = tmp_path / "export"
    (export / "logs").mkdir(parents=True)
    (export / "schocken.sqlite3").write_text("")
    sent: list[str] = []

    def fetch(server: str, token: str, timeout: float) -> bytes:
        sent.append(token)
        return tar_folder(export)

    monkeypatch.setattr(commands, "_fetch_backup", fetch)
    monkeypatch.delenv("SCHOCKEN_ADMIN_TOKEN", raising=False)
    monkeypatch.delenv("SCHOCKEN_STORAGE", raising=False)  # a SQLite backup needs no server
    server = ("--server", "http://127.0.0.1:5000")
    for n, argv in enumerate((["--token", "-abc"], ["--token=-abc"], ["--token", "--abc"])):
        assert schocken("backup", str(tmp_path / f"b{n}"), *server, *argv) == 0, argv
        assert (tmp_path / f"b{n}" / "schocken.sqlite3").exists()
    monkeypatch.setenv("SCHOCKEN_ADMIN_TOKEN", "-xyz")
    assert schocken("backup", str(tmp_path / "b3"), *server) == 0
    assert sent == ["-abc", "-abc", "--abc", "-xyz"]
    capsys.readouterr()


def test_an_export_of_the_duckdb_store_imports_as_its_conversion(tmp_path, capsys):
    """The Parquet folder the retired DuckDB store's `schocken export` wrote (its ``EXPORT
    DATABASE``) becomes the SQLite file `schocken convert` makes of the same database."""
    old = old_database(tmp_path)
    conn = duckdb.connect(str(old))
    conn.execute(f"EXPORT DATABASE '{tmp_path / 'export'}' (FORMAT PARQUET)")
    conn.close()
    converted, imported = tmp_path / "converted.sqlite3", tmp_path / "imported.sqlite3"
    assert schocken("convert", "--from", str(old), "--to", str(converted)) == 0
    assert schocken("import", str(tmp_path / "export"), "--db", str(imported)) == 0
    mine, theirs = tables_of(imported), tables_of(converted)
    migrated = {t for t in mine if t != "schema_migrations"}
    assert {t: mine[t] for t in migrated} == {t: theirs[t] for t in migrated}
    assert len(mine["games"]) == 8
    assert schocken("import", str(tmp_path / "export"), "--db", str(imported)) == 1
    capsys.readouterr()
