"""Backups of a PostgreSQL deployment: ``schocken backup/export --database-url`` copy the
database in one snapshot into a backup folder (a SQLite file plus the game logs, the same
folder a SQLite backup is), ``schocken import --database-url`` fills an empty PostgreSQL
database from it, and ``POST /api/v1/admin/backup`` works on PostgreSQL too. Every table
arrives row for row; a database that is not empty is refused untouched."""

from __future__ import annotations

import io
import json
import tarfile

import click
import psycopg
import pytest
from test_storage_copy import filled_sqlite, sqlite_rows

from api.app import create_app
from api.cli import main
from api.rules import replay_text


def schocken(*argv: str) -> int:
    return main(list(argv), standalone_mode=False)


@pytest.fixture
def filled_pg(tmp_path, pg_url):
    """A PostgreSQL database with something in every table, and its rows as SQLite holds them."""
    first = tmp_path / "first.sqlite3"
    filled_sqlite(first)
    assert schocken("copy", str(first), pg_url) == 0
    return pg_url, sqlite_rows(first)


def test_backup_of_postgresql_restores_into_an_empty_database_row_for_row(
    tmp_path, filled_pg, pg_cluster, capsys
):
    url, rows = filled_pg
    out = tmp_path / "backup"
    assert schocken("backup", str(out), "--database-url", url) == 0
    assert "4 game logs" in capsys.readouterr().out
    assert sqlite_rows(out / "schocken.sqlite3") == rows
    logs = sorted((out / "logs" / "zur-post").glob("*.json"))
    assert len(logs) == 4  # 3 imported, 1 running
    assert all("error" not in replay_text(p.read_text()) for p in logs[:3])
    target = pg_cluster.fresh_url()
    try:
        assert schocken("import", str(out), "--database-url", target) == 0
        back = tmp_path / "back.sqlite3"
        assert schocken("copy", target, str(back)) == 0
        assert sqlite_rows(back) == rows
        # a second import into the now full database is refused and changes nothing
        assert schocken("import", str(out), "--database-url", target) == 1
        assert "nicht leer" in capsys.readouterr().err
        again = tmp_path / "again.sqlite3"
        assert schocken("copy", target, str(again)) == 0
        assert sqlite_rows(again) == rows
    finally:
        pg_cluster.drop(target)


def test_export_takes_the_url_from_the_environment_and_never_fills_a_full_folder(
    tmp_path, filled_pg, monkeypatch, capsys
):
    url, rows = filled_pg
    monkeypatch.setenv("SCHOCKEN_DATABASE_URL", url)
    out = tmp_path / "export"
    assert schocken("export", str(out)) == 0
    assert sqlite_rows(out / "schocken.sqlite3") == rows
    assert schocken("export", str(out)) == 1
    assert "abgebrochen" in capsys.readouterr().err
    with pytest.raises(click.UsageError, match="one database"):
        schocken("backup", str(tmp_path / "x"), "--db", "a.sqlite3", "--database-url", url)


def test_import_into_postgresql_refuses_a_folder_that_is_no_backup(tmp_path, pg_url, capsys):
    folder = tmp_path / "leer"
    folder.mkdir()
    assert schocken("import", str(folder), "--database-url", pg_url) == 1
    assert "kein Backup-Ordner" in capsys.readouterr().err
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM stammtische").fetchone() == (0,)


def test_the_admin_backup_endpoint_works_on_postgresql(tmp_path, filled_pg):
    url, rows = filled_pg
    app = create_app({"DATABASE_URL": url, "ADMIN_TOKEN": "admin-geheim", "TESTING": True})
    try:
        client = app.test_client()
        r = client.post("/api/v1/admin/backup", headers={"Authorization": "Bearer admin-geheim"})
        assert r.status_code == 200 and r.mimetype == "application/gzip"
        with tarfile.open(fileobj=io.BytesIO(r.data), mode="r:gz") as tar:
            tar.extractall(tmp_path / "got", filter="data")
        got = sqlite_rows(tmp_path / "got" / "schocken.sqlite3")
        assert got.pop("rate_limits")  # the backup request itself took a token
        assert got == {t: r for t, r in rows.items() if t != "rate_limits"}
        log = json.loads((tmp_path / "got" / "logs" / "zur-post" / "1.json").read_text())
        assert log["events"]
    finally:
        app.extensions["schocken"].store.close()


def test_the_admin_backup_of_a_server_without_database_is_a_clear_409():
    app = create_app({"STORAGE": "memory", "ADMIN_TOKEN": "admin-geheim", "TESTING": True})
    r = app.test_client().post(
        "/api/v1/admin/backup", headers={"Authorization": "Bearer admin-geheim"}
    )
    assert r.status_code == 409
    assert "nichts zu sichern" in r.json["message"]


def test_the_demo_and_the_static_site_work_on_postgresql(tmp_path, pg_url, capsys):
    assert schocken("demo", "--database-url", pg_url, "--years", "1", "--seed", "3") == 0
    said = capsys.readouterr().err
    assert "Schreibschlüssel" in said and "Datenbank postgresql://" in said
    with psycopg.connect(pg_url) as conn:
        games = conn.execute("SELECT count(*) FROM game_facts").fetchone()
    assert games is not None and games[0] >= 45  # a year of Fridays
    assert schocken("demo", "--database-url", pg_url) == 0  # there already: nothing to do
    assert "Nichts zu tun" in capsys.readouterr().err
    out = tmp_path / "site"
    assert schocken("dashboard", "build", "--out", str(out), "--database-url", pg_url) == 0
    assert (out / "demo" / "index.html").is_file()
