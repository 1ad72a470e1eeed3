"""Live events through the WSGI body (Flask's test client, any server without the stream hub):
the message format and ids, resume from the stored log, privacy, and the bounded poll.

The hub of ``schocken serve`` is tests/test_api_events_hub.py (in-process) and
tests/test_api_events_serve.py (real servers)."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from conftest import PLAYERS, make_table
from test_hardening_sessions import log_in

from api.app import create_app

ANNA = {"player": "Anna", "dice": [1, 1, 4], "throws": 2, "hand": False}
BERT = {"player": "Bert", "dice": [6, 3, 2], "throws": 1}


def messages(text: str) -> list[dict[str, Any]]:
    """The SSE messages of a body: their fields (``data`` parsed), comments as ``comment``."""
    found = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        fields: dict[str, Any] = {}
        for line in block.split("\n"):
            name, _, value = line.partition(": ")
            if name == "":
                fields["comment"] = value
            else:
                assert name not in fields, block
                fields[name] = json.loads(value) if name == "data" else value
        found.append(fields)
    return found


def events(text: str) -> list[dict[str, Any]]:
    return [m for m in messages(text) if "event" in m]


@pytest.fixture
def table(app: Any) -> Any:
    app.config["EVENT_STREAM_SECONDS"] = 0  # what is stored, then the stream ends
    t = make_table(app.test_client())
    t.add_players(PLAYERS)
    return t


def stream(table: Any, path: str = "", **kw: Any) -> Any:
    return table.client.get(f"/api/v1/stammtische/{table.slug}{path}/events", **kw)


def test_one_message_per_event_with_the_id_on_the_last_of_each_entry(table):
    game = table.start(["Anna", "Bert"])
    assert table.post(f"/games/{game}/turns", ANNA).status_code == 201
    answer = table.post(f"/games/{game}/turns", BERT)  # Bert loses the round: two events
    written = [e["kind"] for e in answer.json["events"]]
    assert len(written) >= 2

    r = stream(table, query_string={"last_event_id": 0})
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    assert r.headers["Cache-Control"] == "no-store"
    assert r.headers["X-Accel-Buffering"] == "no"
    body = r.get_data(as_text=True)
    assert body.startswith("retry: 3000\n\n")
    got = events(body)
    assert [m["event"] for m in got] == ["game_started", "turn_recorded", *written]
    assert [m.get("id") for m in got] == ["1", "2"] + [None] * (len(written) - 1) + ["3"]
    last = got[-1]["data"]
    assert last["kind"] == written[-1] == got[-1]["event"]
    assert last["message"] == answer.json["events"][-1]["message"]
    assert last["data"] == answer.json["events"][-1]["data"]
    assert (last["game_id"], last["seq"], last["position"]) == (game, 2, 3)
    assert last["recorded_at"].endswith("+00:00")

    per_game = events(stream(table, f"/games/{game}", headers={"Last-Event-ID": "0"}).text)
    assert [m.get("id") for m in per_game] == ["1"] + [None] * (len(written) - 1) + ["2"]
    assert [m["data"]["seq"] for m in per_game] == [1] + [2] * len(written)


def test_resume_after_the_last_id_from_the_stored_log(table):
    games = [table.start(["Anna", "Bert"]), table.start(["Clara", "Dieter"], starter="Clara")]
    table.post(f"/games/{games[0]}/turns", ANNA)
    table.post(f"/games/{games[1]}/turns", {**ANNA, "player": "Clara"})

    everything = events(stream(table, query_string={"last_event_id": 0}).text)
    assert [m["data"]["position"] for m in everything] == [1, 2, 3, 4]
    after_2 = events(stream(table, headers={"Last-Event-ID": "2"}).text)
    assert [m["data"]["position"] for m in after_2] == [3, 4]
    # the header (what EventSource sends on a reconnect) wins over the first connect's query
    both = stream(table, headers={"Last-Event-ID": "3"}, query_string={"last_event_id": 1})
    assert [m["data"]["position"] for m in events(both.text)] == [4]
    # without an id: only what comes; beyond the stored ones (a restored backup): the same
    assert events(stream(table).text) == []
    assert events(stream(table, headers={"Last-Event-ID": "99"}).text) == []
    # one game: by seq (the game's ETag), the other game's rows left out
    etag = table.get(f"/games/{games[1]}").headers["ETag"]
    assert etag == '"1"'
    game_1 = events(stream(table, f"/games/{games[1]}", query_string={"last_event_id": 0}).text)
    assert {m["data"]["game_id"] for m in game_1} == {games[1]}
    assert [m["data"]["seq"] for m in game_1] == [1]
    assert events(stream(table, f"/games/{games[1]}", headers={"Last-Event-ID": "1"}).text) == []


def test_a_stream_goes_on_with_what_is_written_meanwhile(app, table):
    app.config.update(EVENT_STREAM_SECONDS=5, EVENT_POLL_SECONDS=0.01)
    game = table.start(["Anna", "Bert"])
    r = stream(table, f"/games/{game}", buffered=False)
    body = iter(r.response)
    assert next(body) == b"retry: 3000\n\n"
    table.post(f"/games/{game}/turns", ANNA)
    got = events(next(body).decode())
    assert [(m["event"], m["id"]) for m in got] == [("turn_recorded", "1")]
    r.close()


def test_heartbeat_comments_and_a_bounded_stream(app, table):
    # a ping every 0.1 s of a 1 s stream: at most 10, and at least 2 unless the stream's
    # thread stalls for 0.8 s (of a 0.35 s stream, a stall of 0.25 s left one)
    app.config.update(EVENT_STREAM_SECONDS=1.0, EVENT_HEARTBEAT_SECONDS=0.1)
    body = stream(table).text
    pings = [m for m in messages(body) if m.get("comment") == "ping"]
    assert 2 <= len(pings) <= 10


def test_a_private_stammtisch_streams_only_with_its_token_or_login(app):
    app.config["EVENT_STREAM_SECONDS"] = 0
    client = app.test_client()
    t = make_table(client, "Geheim", private=True)
    other = make_table(client, "Offen")
    t.add_players(["Anna", "Bert"])
    game = t.start(["Anna", "Bert"])
    nobody = client.get("/api/v1/stammtische/nobody-here/events").json
    for headers in ({}, {"Authorization": f"Bearer {other.token}"}):
        for path in ("/events", f"/games/{game}/events"):
            r = client.get(f"/api/v1/stammtische/{t.slug}{path}", headers=headers)
            assert r.status_code == 404 and r.mimetype == "application/problem+json"
            assert r.json["code"] == nobody["code"] == "stammtisch_not_found"
    ok = client.get(f"/api/v1/stammtische/{t.slug}/events?last_event_id=0", headers=t.auth)
    assert ok.status_code == 200 and [m["event"] for m in events(ok.text)] == ["game_started"]
    phone = log_in(app, t.slug, t.token)  # the pub form's login: the TV page on its origin
    r = phone.get(f"/api/v1/stammtische/{t.slug}/games/{game}/events?last_event_id=0")
    assert r.status_code == 200, r.text
    phone.post(f"/s/{t.slug}/abmelden", data={"csrf_token": _csrf(phone)})
    assert phone.get(f"/api/v1/stammtische/{t.slug}/events").status_code == 404


def _csrf(client: Any) -> str:
    from test_hardening_sessions import csrf

    return csrf(client)


def test_unknown_games_and_bad_ids(table):
    other = make_table(table.client, "Nebenan")
    other.add_players(["Anna", "Bert"])
    foreign = other.start(["Anna", "Bert"])
    r = stream(table, f"/games/{foreign}")
    assert r.status_code == 404 and r.json["code"] == "game_not_found"
    assert stream(table, query_string={"last_event_id": -1}).status_code == 422
    assert stream(table, query_string={"last_event_id": "x"}).status_code == 422
    assert stream(table, query_string={"since": 1}).status_code == 422
    # a Last-Event-ID that is no number is ignored (only new events)
    assert stream(table, headers={"Last-Event-ID": "abc"}).status_code == 200


def test_a_long_resume_comes_in_pages(tmp_path):
    app = create_app({"DATABASE": str(tmp_path / "e.sqlite3"), "EVENT_STREAM_SECONDS": 0})
    try:
        t = make_table(app.test_client())
        t.add_players(["Anna", "Bert"])
        for _ in range(205):  # over one page (api/domain/events.py PAGE)
            t.start(["Anna", "Bert"])
        got = events(t.client.get(f"/api/v1/stammtische/{t.slug}/events?last_event_id=3").text)
        assert [m["data"]["position"] for m in got] == list(range(4, 206))
    finally:
        app.extensions["schocken"].store.close()


def test_a_stream_ends_once_its_stammtisch_is_private(app, table):
    app.config.update(EVENT_STREAM_SECONDS=10, EVENT_HEARTBEAT_SECONDS=0.05)
    r = stream(table, buffered=False)
    body = iter(r.response)
    assert next(body) == b"retry: 3000\n\n"
    assert next(body) == b": ping\n\n"
    assert table.patch("", {"private": True}).status_code == 200
    started = time.monotonic()
    assert b"".join(body) in (b"", b": ping\n\n")  # the next heartbeat ends it
    assert time.monotonic() - started < 2
    r.close()


def test_a_stream_let_in_by_a_login_ends_with_the_logout(app):
    app.config.update(EVENT_STREAM_SECONDS=10, EVENT_HEARTBEAT_SECONDS=0.05)
    t = make_table(app.test_client(), "Geheim", private=True)
    phone = log_in(app, t.slug, t.token)
    r = phone.get(f"/api/v1/stammtische/{t.slug}/events", buffered=False)
    body = iter(r.response)
    assert next(body) == b"retry: 3000\n\n"
    assert next(body) == b": ping\n\n"  # goes on while logged in
    assert next(body) == b": ping\n\n"
    phone.post(f"/s/{t.slug}/abmelden", data={"csrf_token": _csrf(phone)})
    started = time.monotonic()
    assert b"".join(body) in (b"", b": ping\n\n")
    assert time.monotonic() - started < 2
    r.close()
