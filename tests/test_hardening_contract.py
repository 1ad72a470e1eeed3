"""Contract slips (issue 13, item 9): an unknown query parameter is refused on every operation
that takes query parameters (statistics like game lists), and wall-clock times are documented as
what they are (no offset), on SQLite (the HTTP suites' store). The response conformance of the statistics with
finished games is checked by schemathesis in test_api_contract.py."""

from __future__ import annotations

import re
import shutil
import sqlite3

import pytest

from api.app import create_app

QUERY_OPERATIONS = ["/statistics", "/statistics/players", "/statistics/records", "/games"]


@pytest.mark.parametrize("path", QUERY_OPERATIONS)
def test_an_unknown_query_parameter_is_422(table, path):
    r = table.get(path + "?yaer=2024", headers=table.auth)
    assert r.status_code == 422, r.json
    assert "yaer" in r.json["errors"]["query"]
    assert table.get(path + "?year=2024", headers=table.auth).status_code == 200


def test_wall_clock_times_are_strings_with_a_pattern_not_rfc3339_date_times():
    spec = create_app({"STORAGE": "memory", "TESTING": True}).test_client().get("/openapi.json")
    found = 0
    for name, schema in spec.json["components"]["schemas"].items():
        for field in ("played_local", "first_game", "last_game"):
            prop = schema.get("properties", {}).get(field)
            if prop is not None:
                found += 1
                assert "format" not in prop, (name, field)
                assert re.fullmatch(prop["pattern"], "2025-03-07T20:15:00"), (name, field)
    assert found >= 5


def test_a_clean_stop_leaves_a_complete_database_file(tmp_path):
    """SIGTERM to ``schocken serve`` (2 workers): the WAL is checkpointed into the file and
    removed, so a copy of the ``.sqlite3`` file alone holds every table and every write."""
    from test_api_serve import Server, Tisch

    db = tmp_path / "data" / "schocken.sqlite3"
    db.parent.mkdir()
    server = Server(db, workers=2)
    try:
        tische = [Tisch(server.base) for _ in range(3)]
    finally:
        server.stop()
    assert server.proc.returncode == 0, server.log.read_text()
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    copy = tmp_path / "copy.sqlite3"
    shutil.copyfile(db, copy)  # the file alone, as a careless backup would take it
    conn = sqlite3.connect(copy)
    try:
        slugs = {row[0] for row in conn.execute("SELECT slug FROM stammtische")}
        games = conn.execute("SELECT count(*) FROM games").fetchone()[0]
    finally:
        conn.close()
    assert slugs == {t.slug for t in tische} and games == len(tische)
