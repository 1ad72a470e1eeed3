"""``schocken copy SOURCE_URL TARGET_URL``: a SQLite database copied into PostgreSQL and back
into a new SQLite file holds every row of every table exactly as before; a target that is not
new is refused untouched."""

from __future__ import annotations

import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from conftest import PLAYERS, make_table

from api.app import create_app
from api.cli import main
from api.rules import PRESETS
from api.rules.simulate import simulate_logs
from api.storage import WebSession
from api.storage.convert import COPIED, CopyError, Reader
from api.storage.webhook_records import Finished
from dashboard.readmodel import refresh


def filled_sqlite(path: Path) -> None:
    """A SQLite database with something in every table: Stammtische, players, finished and
    running games, an idempotent response, the statistics read model, rate-limit counters,
    webhooks and their deliveries."""
    app = create_app({"STORAGE": "sqlite", "DATABASE": str(path), "TESTING": True})
    client = app.test_client()
    table = make_table(client, "Zur Post")
    table.add_players(PLAYERS)
    hook = {"url": "https://chat.example/hook", "kinds": ["game_started", "turn_recorded"]}
    made = table.post("/webhooks", hook).json  # webhooks and their outbox
    assert table.post(f"/webhooks/{made['id']}/ping").status_code == 202
    for log in simulate_logs(PRESETS["standard"], 3, players=PLAYERS, seed=5):
        assert table.post("/imports", log).status_code == 201
    game = table.start()
    r = client.post(
        f"{table.base}/games/{game}/turns",
        json={"player": "Anna", "dice": [1, 1, 4], "throws": 2},
        headers={**table.auth, "Idempotency-Key": "k-1"},
    )
    assert r.status_code == 201, r.json
    make_table(client, "Anker", private=True)
    refresh(app.extensions["schocken"].store.repository())  # the refresher fills the read model
    assert table.get("/statistics/verlierer").status_code == 200
    assert table.patch("", {"name": "Zur Alten Post"}).status_code == 200  # marks it stale
    try:  # a failed login (the counters of the login back-off, where the version has them)
        app.extensions["schocken"].store.repository().failed_attempts(table.slug, 1.5, False)
    except (AttributeError, NotImplementedError):
        pass
    repo = app.extensions["schocken"].store.repository()
    st = repo.get_stammtisch(table.slug)
    assert st is not None
    expires = datetime(2030, 1, 1, tzinfo=UTC)  # a login of the pub form
    repo.add_web_session(WebSession("a" * 64, st.id, st.token_hash, expires))
    # one delivery with every column filled, claimed a minute after its ping was due
    now = datetime.now(UTC).replace(tzinfo=None) + timedelta(minutes=1)
    (out, *_) = repo.claim_deliveries(now, now + timedelta(seconds=60), 1)
    repo.finish_delivery(out.delivery.id, Finished("delivered", now, 204, "kein Fehler", now))
    app.extensions["schocken"].store.close()


def sqlite_rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    conn = sqlite3.connect(path)
    try:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                " AND name <> 'alembic_version' ORDER BY name"
            )
        ]
        return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in tables}
    finally:
        conn.close()


def test_sqlite_to_postgresql_and_back_keeps_every_row_of_every_table(tmp_path, pg_url, capsys):
    first, back = tmp_path / "first.sqlite3", tmp_path / "back.sqlite3"
    filled_sqlite(first)
    before = sqlite_rows(first)
    assert set(before) <= set(COPIED)  # every table of the schema is copied
    assert all(before.values()), [t for t in before if not before[t]]
    assert main(["copy", str(first), pg_url], standalone_mode=False) == 0
    assert main(["copy", pg_url, f"sqlite:///{back}"], standalone_mode=False) == 0
    assert sqlite_rows(back) == before
    out = capsys.readouterr().out
    assert re.search(rf"^game_log +{len(before['game_log'])}$", out, re.MULTILINE), out
    # new rows continue after the copied ids in PostgreSQL
    app = create_app({"DATABASE_URL": pg_url, "TESTING": True})
    try:
        slug = make_table(app.test_client(), "Neu").slug
        st = app.extensions["schocken"].store.repository().get_stammtisch(slug)
        assert st.id == max(r[0] for r in before["stammtische"]) + 1
    finally:
        app.extensions["schocken"].store.close()


def test_a_target_that_is_not_new_is_refused_untouched(tmp_path, pg_url, capsys):
    source = tmp_path / "s.sqlite3"
    filled_sqlite(source)
    assert main(["copy", str(source), pg_url], standalone_mode=False) == 0
    with psycopg.connect(pg_url) as conn:
        games = conn.execute("SELECT count(*) FROM games").fetchone()
    assert main(["copy", str(source), pg_url], standalone_mode=False) == 1
    assert "nicht leer" in capsys.readouterr().err
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM games").fetchone() == games
    assert main(["copy", pg_url, str(source)], standalone_mode=False) == 1
    assert "gibt es schon" in capsys.readouterr().err
    missing = tmp_path / "missing.sqlite3"
    assert main(["copy", str(missing), pg_url], standalone_mode=False) == 1
    assert not missing.exists()
    assert main(["copy", "mysql://x/y", str(tmp_path / "n.sqlite3")], standalone_mode=False) == 1


def test_a_table_only_the_source_has_stops_the_copy_if_it_holds_rows():
    """A source of a newer version (a table the target's schema lacks): nothing is dropped
    silently; an empty such table is no loss."""
    rows: dict[str, list[list[tuple[object, ...]]]] = {"login_failures": [[("x", 1, 1.5)]]}

    def batches(table, _columns):
        yield from rows.get(table, [])

    reader = Reader(frozenset(COPIED), batches)
    target = set(COPIED) - {"login_failures"}
    with pytest.raises(CopyError, match="login_failures"):
        reader.copied(target)
    rows.clear()
    assert set(reader.copied(target)) == target
