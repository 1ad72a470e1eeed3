"""Retries, two phones on one game, and hostile input, through the Flask test client (on the
in-memory fake and on DuckDB); two apps on one SQLite file stand for two server processes."""

from __future__ import annotations

import logging
import threading

import pytest
from conftest import PLAYERS, STORES, Table, make_table

from api.app import create_app

pytestmark = pytest.mark.stores(*STORES)  # the reliability tests run on every store

TURN = {"player": "Anna", "dice": [1, 1, 4], "throws": 2}


def send(table, path, body, headers):
    """POST with the table's token and extra headers."""
    return table.client.post(table.base + path, json=body, headers={**table.auth, **headers})


def state_of(app, game):
    """The game's log and facts as stored: what a rejected request must leave alone."""
    with app.app_context():
        from api.http.context import services

        repo = services().repo
        return repo.load_log(game), repo.read_facts(game)


# --------------------------------------------------------------------------- Idempotency-Key
def test_a_retried_turn_with_the_same_key_is_answered_again_and_recorded_once(app, table):
    game = table.start()
    key = {"Idempotency-Key": "turn-1-of-anna"}
    first = send(table, f"/games/{game}/turns", TURN, key)
    again = send(table, f"/games/{game}/turns", TURN, key)
    assert first.status_code == again.status_code == 201
    assert again.json == first.json and again.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in first.headers
    log, facts = state_of(app, game)
    assert [e.seq for e in log] == [1] and len(facts["turn_facts"]) == 1


def test_the_replay_is_the_original_answer_even_after_the_game_moved_on(table):
    game = table.start()
    key = {"Idempotency-Key": "k-anna"}
    first = send(table, f"/games/{game}/turns", TURN, key)
    assert table.turn(game, "Bert", [6, 3, 2], 2).status_code == 201
    again = send(table, f"/games/{game}/turns", TURN, key)
    assert again.status_code == 201 and again.json == first.json
    assert table.game(game)["seq"] == 2


def test_the_same_key_with_another_body_is_422_and_records_nothing(app, table):
    game = table.start()
    key = {"Idempotency-Key": "one-key"}
    assert send(table, f"/games/{game}/turns", TURN, key).status_code == 201
    before = state_of(app, game)
    other = {"player": "Bert", "dice": [6, 3, 2], "throws": 2}
    r = send(table, f"/games/{game}/turns", other, key)
    assert r.status_code == 422 and "Idempotency-Key" in r.json["errors"]["headers"]
    assert "andere Anfrage" in r.json["message"]
    assert state_of(app, game) == before


def test_keys_belong_to_one_stammtisch(client, table):
    other = make_table(client, "Zum Anker")
    other.add_players(PLAYERS)
    mine, theirs = table.start(), other.start()
    key = {"Idempotency-Key": "shared-key"}
    a = send(table, f"/games/{mine}/turns", TURN, key)
    b = send(other, f"/games/{theirs}/turns", TURN, key)
    assert a.status_code == b.status_code == 201 and "Idempotent-Replayed" not in b.headers
    assert b.json["game"]["stammtisch"] == other.slug


def test_every_write_accepts_a_key_and_a_rejected_write_keeps_its_key_free(table):
    game = table.start()
    key = {"Idempotency-Key": "not-your-turn"}
    r = send(table, f"/games/{game}/turns", {**TURN, "player": "Bert"}, key)
    assert r.status_code == 409
    # the key was not used up: the corrected request under the same key goes through
    r = send(table, f"/games/{game}/turns", {**TURN, "player": "Bert"}, key)
    assert r.status_code == 409
    r = send(table, "/players", {"name": "Erika"}, {"Idempotency-Key": "p1"})
    again = send(table, "/players", {"name": "Erika"}, {"Idempotency-Key": "p1"})
    assert r.status_code == again.status_code == 201 and again.json == r.json
    assert [p["name"] for p in table.get("/players").json].count("Erika") == 1
    r = send(table, f"/games/{game}/undo", None, {"Idempotency-Key": "u"})
    assert r.status_code == 409  # nothing to undo yet


def test_creating_a_stammtisch_twice_with_one_key_gives_the_same_token_once_stored(app, client):
    body = {"name": "Zur Linde"}
    first = client.post("/api/v1/stammtische", json=body, headers={"Idempotency-Key": "new-st"})
    again = client.post("/api/v1/stammtische", json=body, headers={"Idempotency-Key": "new-st"})
    assert first.status_code == again.status_code == 201
    assert again.json == first.json  # the token again, so a retrying client is not locked out
    assert client.get("/api/v1/stammtische/zur-linde-2").status_code == 404
    with app.app_context():
        from api.http.context import services

        repo = services().repo
        stammtisch = services().stammtisch("zur-linde")
        assert stammtisch.token_hash != first.json["token"]
        from api.http.idempotency import key_hash

        stored = repo.get_response(0, key_hash("127.0.0.1\0new-st"))  # the client's key
    assert stored is not None and first.json["token"].encode() not in stored.body


@pytest.mark.parametrize("key", ["", "x" * 256, "mit leerzeichen", "ümlaut"])
def test_a_malformed_key_is_422(table, key):
    game = table.start()
    r = send(table, f"/games/{game}/turns", TURN, {"Idempotency-Key": key})
    assert r.status_code == 422 and "Idempotency-Key" in r.json["errors"]["headers"]
    assert table.game(game)["seq"] == 0


def test_old_keys_are_forgotten_after_the_retention(app, table):
    from datetime import timedelta

    from api.domain import utcnow

    game = table.start()
    key = {"Idempotency-Key": "old"}
    assert send(table, f"/games/{game}/turns", TURN, key).status_code == 201
    with app.app_context():
        from api.http.context import services
        from api.storage import StorageConflict  # noqa: F401  (port imported for its adapters)

        repo = services().repo
        st_id = services().stammtisch(table.slug).id
        from api.http.idempotency import key_hash

        with repo.transaction():
            repo.purge_responses(utcnow() - timedelta(hours=24))
        assert repo.get_response(st_id, key_hash("old")) is not None  # kept at least 24 h
        with repo.transaction():
            repo.purge_responses(utcnow() + timedelta(seconds=1))
        assert repo.get_response(st_id, key_hash("old")) is None


# --------------------------------------------------------------------------- ETag / If-Match
def test_reading_and_writing_a_game_carry_its_version_as_etag(table):
    game = table.start()
    assert table.get(f"/games/{game}").headers["ETag"] == '"0"'
    r = table.turn(game, "Anna", [1, 1, 4], 2)
    assert r.headers["ETag"] == '"1"' and r.json["game"]["seq"] == 1
    assert table.get(f"/games/{game}").headers["ETag"] == '"1"'


def test_a_stale_if_match_is_412_with_the_current_state_and_records_nothing(app, table):
    game = table.start()
    etag = table.get(f"/games/{game}").headers["ETag"]
    assert table.turn(game, "Anna", [1, 1, 4], 2).status_code == 201  # the other phone
    before = state_of(app, game)
    body = {"player": "Bert", "dice": [6, 3, 2], "throws": 2}
    r = send(table, f"/games/{game}/turns", body, {"If-Match": etag})
    assert r.status_code == 412 and r.headers["ETag"] == '"1"'
    assert r.json["code"] == "precondition_failed" and "Stand 1" in r.json["detail"]
    assert r.content_type == "application/problem+json" and r.json["status"] == 412
    assert (
        r.json["game"]["seq"] == 1 and r.json["game"]["outcome"]["state"]["next_player"] == "Bert"
    )
    assert state_of(app, game) == before
    r = send(table, f"/games/{game}/turns", body, {"If-Match": '"1"'})
    assert r.status_code == 201
    for match in ("*", 'W/"{}"', '"99", "{}"'):
        seq = table.game(game)["seq"]
        r = send(table, f"/games/{game}/undo", None, {"If-Match": match.format(seq)})
        assert r.status_code == 201, match
        assert (
            send(table, f"/games/{game}/turns", body, {"If-Match": f'"{seq + 1}"'}).status_code
            == 201
        )


def test_malformed_input_is_422_before_the_version_is_compared(table):
    game = table.start()
    bad = {"player": "Anna", "dice": [1, 7, 4], "throws": 2}
    r = send(table, f"/games/{game}/turns", bad, {"If-Match": '"5"'})
    assert r.status_code == 422


def test_four_phones_with_the_same_version_one_wins_three_get_412(tmp_path):
    app = create_app({"STORAGE": "sqlite", "DATABASE": str(tmp_path / "r.sqlite3")})
    table = make_table(app.test_client(), "Post")
    table.add_players(PLAYERS)
    game = table.start()
    barrier = threading.Barrier(4)
    statuses: list[int] = []

    def phone(i: int) -> None:
        t = Table(app.test_client(), table.slug, table.token)
        barrier.wait()
        r = send(t, f"/games/{game}/turns", TURN, {"If-Match": '"0"', "Idempotency-Key": f"p{i}"})
        statuses.append(r.status_code)

    threads = [threading.Thread(target=phone, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert sorted(statuses) == [201, 412, 412, 412]
    assert table.game(game)["seq"] == 1
    app.extensions["schocken"].store.close()


def test_the_backup_needs_the_admin_token_not_a_stammtischs(client, table):
    """401 with WWW-Authenticate without it (also for another scheme), 403 for another token;
    with it, a SQLite or PostgreSQL database is backed up, the in-memory fake cannot be (409)."""
    client.application.config["ADMIN_TOKEN"] = "admin-geheim"
    url = "/api/v1/admin/backup"
    for headers in ({}, {"Authorization": "Basic YWRtaW46eA=="}, {"Authorization": "Bearer "}):
        r = client.post(url, headers=headers)
        assert r.status_code == 401 and "Admin-Schlüssel" in r.json["message"]
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
    r = client.post(url, headers=table.auth)
    assert r.status_code == 403 and "nicht der Admin-Schlüssel" in r.json["message"]
    r = client.post(url, headers={"Authorization": "Bearer admin-geheim"})
    memory = client.application.config["STORAGE"] == "memory"
    assert r.status_code == (409 if memory else 200)


# --------------------------------------------------------------------------- two processes
@pytest.fixture(params=["sqlite", "postgresql"])
def two_apps(request, tmp_path):
    """Two apps on one SQLite file or PostgreSQL database: each its own connections and cache,
    as two processes (on PostgreSQL: two servers)."""
    config = {"STORAGE": "sqlite", "DATABASE": str(tmp_path / "two.sqlite3")}
    if request.param == "postgresql":
        config = {"DATABASE_URL": request.getfixturevalue("pg_url")}
    apps = create_app(config), create_app(config)
    yield apps
    for app in apps:
        app.extensions["schocken"].store.close()


def test_a_cached_game_moved_on_by_another_process_is_replayed_not_refused(two_apps):
    a, b = two_apps
    ta = make_table(a.test_client())
    ta.add_players(PLAYERS)
    tb = Table(b.test_client(), ta.slug, ta.token)
    game = ta.start()
    assert ta.game(game)["seq"] == 0  # a caches the game
    assert tb.turn(game, "Anna", [1, 1, 4], 2).status_code == 201
    r = ta.turn(game, "Bert", [6, 3, 2], 1)
    assert r.status_code == 201 and r.json["seq"] == 2, r.json
    assert ta.game(game) == tb.game(game)
    r = send(tb, f"/games/{game}/turns", TURN, {"If-Match": '"1"'})
    assert r.status_code == 412 and r.json["game"]["seq"] == 2


def test_a_new_game_rolled_back_leaves_nothing_cached_when_its_id_comes_again(
    two_apps, monkeypatch
):
    """SQLite gives a rolled-back game's id to the next game: a's cache must not show a's
    failed game under it (PostgreSQL's sequences do not, but the cache must not care)."""
    from api.storage import StorageUnavailable

    a, b = two_apps
    adapter = type(a.extensions["schocken"].store.repository())
    ta = make_table(a.test_client())
    ta.add_players(PLAYERS)
    tb = Table(b.test_client(), ta.slug, ta.token)

    def full(_self, _response):
        raise StorageUnavailable("SQLite: database or disk is full")

    monkeypatch.setattr(adapter, "save_response", full)
    body = {"players": ["Anna", "Bert"], "starter": "Anna"}
    assert send(ta, "/games", body, {"Idempotency-Key": "k1"}).status_code == 503
    monkeypatch.undo()
    game = tb.start(["Clara", "Dieter"], starter="Clara")
    assert ta.game(game)["players"] == tb.game(game)["players"]
    assert ta.turn(game, "Clara", [1, 1, 4], 2).status_code == 201


def test_a_stammtisch_changed_in_another_process_is_seen_at_once(two_apps):
    a, b = two_apps
    ta = make_table(a.test_client())
    tb = Table(b.test_client(), ta.slug, ta.token)
    assert tb.get().status_code == 200
    assert ta.patch("", {"private": True, "name": "Neuer Name"}).status_code == 200
    assert tb.get().status_code == 404  # private now: hidden
    assert tb.get(headers=tb.auth).json["name"] == "Neuer Name"


# --------------------------------------------------------------------------- hostile input
def test_writes_beyond_the_rate_limit_get_429_with_retry_after():
    app = create_app({"STORAGE": "memory", "WRITE_RATE_PER_MINUTE": 60, "WRITE_RATE_BURST": 3})
    client = app.test_client()
    table = make_table(client)  # one write from this address
    other = make_table(client, "Anker")
    assert [table.post("/players", {"name": n}).status_code for n in ("A", "B", "C")] == [201] * 3
    r = table.post("/players", {"name": "D"})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    seconds = int(r.headers["Retry-After"])
    when = "einer Sekunde" if seconds == 1 else f"{seconds} Sekunden"
    assert r.json["code"] == "rate_limited" and f"bitte in {when} noch" in r.json["message"]
    assert table.get("/players").status_code == 200  # reads are not limited
    assert other.post("/players", {"name": "D"}).status_code == 201  # another token
    assert [p["name"] for p in table.get("/players").json] == ["A", "B", "C"]


def test_the_rate_limit_on_a_full_disk_is_503_not_500(two_apps, monkeypatch):
    import sqlite3

    from api.storage.sqlite.repository import Counters

    a, _ = two_apps
    table = make_table(a.test_client())

    def full(*_args):
        raise sqlite3.OperationalError("database or disk is full")

    if a.config["STORAGE"] == "postgresql":  # the server ends the connection (as at a restart)
        ends = "SELECT pg_terminate_backend(pg_backend_pid())"
        from api.storage import PostgresRepository

        monkeypatch.setitem(PostgresRepository._sql_of, "take_token", ends)  # noqa: SLF001
    else:
        monkeypatch.setattr(Counters, "take", full)
    r = table.post("/players", {"name": "Anna"})
    assert r.status_code == 503 and r.headers["Retry-After"] == "5"
    monkeypatch.undo()
    assert table.post("/players", {"name": "Anna"}).status_code == 201


def test_the_default_rate_limit_leaves_a_busy_pub_table_alone(table):
    game = table.start()
    statuses = {table.turn(game, "Anna", [1, 1, 4], 2).status_code}
    for _ in range(60):
        statuses.add(table.post(f"/games/{game}/undo").status_code)
        statuses.add(table.turn(game, "Anna", [1, 1, 4], 2).status_code)
    assert statuses == {201}


def test_json_nested_too_deep_is_422_not_a_crash(app, table):
    game = table.start()
    before = state_of(app, game)
    deep = "[" * 100000 + "]" * 100000
    r = table.client.post(
        f"{table.base}/games/{game}/turns",
        data=deep,
        headers={**table.auth, "Content-Type": "application/json"},
    )
    assert r.status_code == 422 and "verschachtelt" in r.json["message"]
    nested: object = 1
    for _ in range(40):
        nested = {"x": nested}
    r = table.post("/imports", {"players": PLAYERS, "starter": "Anna", "events": [nested]})
    assert r.status_code == 422
    assert state_of(app, game) == before


def test_unknown_fields_are_rejected_and_change_nothing(app, table):
    game = table.start()
    r = table.post(f"/games/{game}/turns", {**TURN, "deckel": 13})
    assert r.status_code == 422 and "deckel" in r.json["errors"]["json"]
    r = table.post("/games", {"players": PLAYERS, "starter": "Anna", "admin": True})
    assert r.status_code == 422 and "admin" in r.json["errors"]["json"]
    assert table.game(game)["seq"] == 0


def test_limits_on_players_names_and_events_per_import(table):
    many = [f"P{i}" for i in range(21)]
    r = table.post("/games", {"players": many, "starter": "P0"})
    assert r.status_code == 422 and "players" in r.json["errors"]["json"]
    r = table.post("/imports", {"players": many, "starter": "P0"})
    assert r.status_code == 422 and "players" in r.json["errors"]["json"]
    r = table.post("/imports", {"players": ["A" * 41, "Bert"], "starter": "Bert"})
    assert r.status_code == 422
    r = table.post("/players", {"name": "x" * 41})
    assert r.status_code == 422 and "name" in r.json["errors"]["json"]
    r = table.client.post("/api/v1/stammtische", json={"name": "y" * 81})
    assert r.status_code == 422
    from schemas.games import MAX_IMPORT_EVENTS

    events = [{"player": "Anna", "dice": [1, 1, 4], "throws": 1}] * (MAX_IMPORT_EVENTS + 1)
    r = table.post("/imports", {"players": PLAYERS, "starter": "Anna", "events": events})
    assert r.status_code == 422 and "events" in r.json["errors"]["json"]
    assert table.get("/games").json["total"] == 0


def test_oversized_bodies_are_413_with_the_one_error_shape(table):
    r = table.post("/imports", {"players": PLAYERS, "starter": "Anna", "x": "y" * 1_100_000})
    assert r.status_code == 413 and r.json["code"] == "payload_too_large"


def test_html_pages_send_security_headers(client):
    for path in ("/", "/docs"):
        r = client.get(path)
        assert r.status_code == 200 and r.mimetype == "text/html", path
        csp = r.headers["Content-Security-Policy"]
        assert "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0], path
        assert "frame-ancestors 'none'" in csp
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        assert r.headers["X-Frame-Options"] == "DENY"


def test_the_docs_page_allows_exactly_its_own_inline_script_by_hash(client):
    from api.http.headers import csp_for

    page = client.get("/docs")
    assert page.headers["Content-Security-Policy"] == csp_for(page.data)
    assert "'sha256-" in page.headers["Content-Security-Policy"]
    assert "'sha256-" not in csp_for(b"<script src='/x.js'></script>")


def test_tokens_never_reach_the_logs(app, table, caplog):
    game = table.start()
    wrong = Table(table.client, table.slug, "falsch-" + table.token[::-1])
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("schocken-test").debug("capturing")
        table.turn(game, "Anna", [1, 1, 4], 2)
        table.turn(game, "Anna", [1, 1, 4], 2)  # 409
        wrong.turn(game, "Bert", [6, 3, 2], 2)  # 403
        send(table, f"/games/{game}/turns", {"x": 1}, {"Idempotency-Key": "k"})
        table.client.post(
            "/login", data={"slug": table.slug, "token": table.token}, follow_redirects=True
        )
    text = "\n".join(r.getMessage() + str(r.args) + str(r.exc_text) for r in caplog.records)
    assert caplog.records  # the capture works
    assert table.token not in text and wrong.token not in text


def test_names_with_line_breaks_or_control_characters_are_rejected(client, table):
    # a carriage return in a Stammtisch name once broke its statistics (found by fuzzing)
    r = client.post("/api/v1/stammtische", json={"name": "Zur\rPost"})
    assert r.status_code == 422 and "Steuerzeichen" in r.json["errors"]["json"]["name"][0]
    assert table.post("/players", {"name": "An\nna"}).status_code == 422
    assert table.post("/players", {"name": "Änne Müller-Lüdenscheidt"}).status_code == 201
    r = table.post("/imports", {"players": ["A\x00", "Bert"], "starter": "Bert"})
    assert r.status_code == 422 and table.get("/games").json["total"] == 0
