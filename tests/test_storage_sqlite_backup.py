"""Backups of a SQLite database without its server: `schocken backup DIR --db FILE` (and
`schocken export`) copy the file with SQLite's online backup API while the server goes on
writing – one consistent moment – plus the game logs; `schocken import` restores it exactly."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import duckdb
from conftest import PLAYERS, Table, make_table, play_at_once

from api.app import create_app
from api.cli import main
from api.rules import PRESETS, replay_text
from api.rules.simulate import simulate_logs
from api.storage import SQLiteStore
from api.storage.sql import migrations as package_migrations


def schocken(*argv: str) -> int:
    """``schocken ARGV…`` in this process: its exit code."""
    return main(list(argv), standalone_mode=False)


def sqlite_tables(path: Path) -> dict[str, list[tuple]]:
    """Every table's rows (sqlite_sequence too: the next ids) in a stable order."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
        return {n: sorted(conn.execute(f'SELECT * FROM "{n}"').fetchall(), key=repr) for n in names}
    finally:
        conn.close()


def sqlite_app(path: Path):
    return create_app({"STORAGE": "sqlite", "DATABASE": str(path), "TESTING": True})


def filled(app) -> Table:
    """Three imported games, one running game with an idempotent turn, an undo and a turn."""
    table = make_table(app.test_client(), "Zur Post")
    table.add_players(PLAYERS)
    for log in simulate_logs(PRESETS["nrw"], 3, players=PLAYERS, seed=5):
        assert table.post("/imports", log).status_code == 201
    game = table.start()
    auth = {**table.auth, "Idempotency-Key": "k1"}
    turn = {"player": "Anna", "dice": [1, 1, 4], "throws": 2}
    r = table.client.post(f"{table.base}/games/{game}/turns", json=turn, headers=auth)
    assert r.status_code == 201
    assert (
        table.post(f"/games/{game}/undo", {"by": "Bert", "reason": "vertippt"}).status_code == 201
    )
    assert table.turn(game, "Anna", [6, 6, 6], 1).status_code == 201
    return table


def facts_equal_a_rebuild(app) -> int:
    """Every game's stored facts equal its facts replayed from the log; the number of games."""
    from api.http.context import services

    with app.app_context():
        svc = services()
        stored = {g: svc.repo.read_facts(g) for g in svc.repo.game_ids()}
        assert svc.rebuild() == len(stored)
        assert {g: svc.repo.read_facts(g) for g in svc.repo.game_ids()} == stored
    return len(stored)


def test_a_backup_taken_while_turns_are_recorded_is_one_consistent_moment(tmp_path, capsys):
    live = tmp_path / "live.sqlite3"
    app = sqlite_app(live)
    table = make_table(app.test_client(), "Post")
    table.add_players(PLAYERS)
    logs = list(simulate_logs(PRESETS["standard"], 4, players=PLAYERS, seed=3))
    writers, errors = play_at_once(app, table, logs)
    backups: list[Path] = []
    during = 0
    while any(th.is_alive() for th in writers) or not backups:
        out = tmp_path / f"b{len(backups)}"
        assert schocken("backup", str(out), "--db", str(live)) == 0
        during += any(th.is_alive() for th in writers)
        backups.append(out)
    for th in writers:
        th.join()
    assert errors == [] and during >= 1
    app.extensions["schocken"].store.close()
    versions = [(v, name) for v, name, _ in package_migrations("api.storage.sqlite")]
    for n, out in enumerate(backups):
        copy = out / "schocken.sqlite3"
        conn = sqlite3.connect(copy)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # one file
        conn.close()
        restored = tmp_path / f"r{n}.sqlite3"
        assert schocken("import", str(out), "--db", str(restored)) == 0
        assert sqlite_tables(restored) == sqlite_tables(copy)
        assert SQLiteStore(restored).applied() == versions  # migrations current
        back = sqlite_app(restored)
        games = facts_equal_a_rebuild(back)
        back.extensions["schocken"].store.close()
        files = sorted((out / "logs" / "post").glob("*.json"))
        assert len(files) == games
        for path in files:  # each log is the game as stored in the copy
            doc = json.loads(path.read_text())
            seq = sqlite3.connect(copy).execute(
                "SELECT count(*) FROM game_log WHERE game_id = ?", [int(path.stem)]
            )
            assert len(doc["events"]) == seq.fetchone()[0]
    final = backups[-1] / "logs" / "post"
    assert all("error" not in replay_text(p.read_text()) for p in final.glob("*.json"))
    capsys.readouterr()


def test_backup_and_import_restore_every_table_exactly(tmp_path, capsys):
    live = tmp_path / "data" / "live.sqlite3"
    app = sqlite_app(live)  # the "server" keeps its connections open (and its WAL unmerged)
    table = filled(app)
    before = sqlite_tables(live)
    out, again = tmp_path / "backup", tmp_path / "export"
    assert schocken("backup", str(out), "--db", str(live)) == 0
    assert schocken("export", str(again), "--db", str(live)) == 0  # the same, named export
    assert table.turn(4, "Bert", [2, 2, 3], 1).status_code == 201  # the server goes on
    assert table.post("/players", {"name": "Emil"}).status_code == 201
    assert sqlite_tables(out / "schocken.sqlite3") == before
    assert sqlite_tables(again / "schocken.sqlite3") == before
    assert schocken("backup", str(out), "--db", str(live)) == 1  # never into a full folder
    logs = sorted((out / "logs" / "zur-post").glob("*.json"), key=lambda p: int(p.stem))
    assert len(logs) == 4
    for path in logs[:3]:  # the imported games replay to their outcome with `schocken replay`
        assert schocken("replay", str(path)) == 0
    assert json.loads(logs[3].read_text())["events"] == [
        {"player": "Anna", "dice": [6, 6, 6], "throws": 1}
    ]
    moved = tmp_path / "elsewhere" / "copy"  # the folder may be moved before importing
    moved.parent.mkdir()
    out.rename(moved)
    restored = tmp_path / "restored.sqlite3"
    assert schocken("import", str(moved), "--db", str(restored)) == 0
    assert sqlite_tables(restored) == before
    conn = sqlite3.connect(restored)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    assert schocken("import", str(moved), "--db", str(restored)) == 1  # never over a file
    other = tmp_path / "other.sqlite3"
    other.write_bytes(b"not mine")
    assert schocken("import", str(moved), "--db", str(other)) == 1
    assert other.read_bytes() == b"not mine"
    assert "Import abgebrochen" in capsys.readouterr().err
    app.extensions["schocken"].store.close()
    back = sqlite_app(restored)  # the restored database works: ids continue, answers kept
    client = back.test_client()
    assert client.get("/api/v1/stammtische/zur-post/games/4").json["seq"] == 3
    r = client.post("/api/v1/stammtische", json={"name": "Anker"})
    assert r.status_code == 201 and r.json["slug"] == "anker"
    assert facts_equal_a_rebuild(back) == 4
    back.extensions["schocken"].store.close()
    capsys.readouterr()


def test_a_writer_in_another_process_does_not_hold_the_backup_up(tmp_path, capsys):
    """A process holding the write lock with an uncommitted row: the backup neither waits for
    it nor contains the row."""
    live = tmp_path / "live.sqlite3"
    app = sqlite_app(live)
    filled(app)
    app.extensions["schocken"].store.close()
    script = textwrap.dedent(f"""
        import sqlite3, sys
        conn = sqlite3.connect({str(live)!r}, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("DELETE FROM game_log")
        print("ready", flush=True)
        sys.stdin.readline()
        conn.execute("ROLLBACK")
    """)
    proc = subprocess.Popen(  # noqa: S603 - this interpreter, a fixed script
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        store = SQLiteStore(live, busy_timeout=0.5)
        try:
            store.backup_to(tmp_path / "copy.sqlite3")
        finally:
            store.close()
    finally:
        proc.communicate("\n", timeout=10)
    assert sqlite_tables(tmp_path / "copy.sqlite3") == sqlite_tables(live)
    assert sqlite_tables(live)["game_log"]
    capsys.readouterr()


def test_the_storage_setting_and_the_admin_endpoint_give_the_same_backup(
    tmp_path, monkeypatch, capsys
):
    live = tmp_path / "live.sqlite3"
    app = sqlite_app(live)
    filled(app)
    app.config["ADMIN_TOKEN"] = "admin-geheim"
    r = app.test_client().post(
        "/api/v1/admin/backup", headers={"Authorization": "Bearer admin-geheim"}
    )
    assert r.status_code == 200 and r.mimetype == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(r.data), mode="r:gz") as tar:
        tar.extractall(tmp_path / "http", filter="data")
    before = sqlite_tables(live)
    assert sqlite_tables(tmp_path / "http" / "schocken.sqlite3") == before
    assert len(list((tmp_path / "http" / "logs" / "zur-post").glob("*.json"))) == 4
    monkeypatch.setenv("SCHOCKEN_STORAGE", "sqlite")  # no --db: the configured SQLite file
    monkeypatch.setenv("SCHOCKEN_DATABASE", str(live))
    assert schocken("backup", str(tmp_path / "env")) == 0
    assert sqlite_tables(tmp_path / "env" / "schocken.sqlite3") == before
    assert schocken("rebuild") == 0  # the other commands find the SQLite file too
    after = sqlite_tables(live)
    after.pop("stats_stale"), before.pop("stats_stale")  # rebuilt facts: statistics to redo
    assert after == before
    monkeypatch.delenv("SCHOCKEN_STORAGE")
    monkeypatch.delenv("SCHOCKEN_DATABASE")
    assert schocken("rebuild", "--db", str(live)) == 0  # a SQLite file is told by its header
    assert schocken("backup", str(tmp_path / "x"), "--db", str(tmp_path / "none.sqlite3")) == 1
    duck = tmp_path / "d.duckdb"
    duckdb.connect(str(duck)).close()
    assert schocken("backup", str(tmp_path / "y"), "--db", str(duck)) == 1  # convert it first
    assert "schocken convert --from" in capsys.readouterr().err
    app.extensions["schocken"].store.close()
