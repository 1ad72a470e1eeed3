"""Issue 12, many servers: two ``schocken serve --database-url`` processes, two workers each,
on two ports, share one PostgreSQL database (of the run's throwaway cluster,
tests/pgcluster.py). Nothing correctness depends on lives in one process: two phones on one
game, an Idempotency-Key retry that lands on the other server, the same key sent to both at
once, the rate limit, and a game's cached state (by its version) all hold across them.

The servers and the request helpers are those of the SQLite pair (tests/test_api_serve.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from pgcluster import Cluster
from test_api_serve import TURNS, Server, Tisch, both_at_once, one_of_two_phones_wins, request
from test_api_serve import (
    test_a_stammtisch_made_private_in_one_process_is_private_in_the_other as made_private_elsewhere,
)
from test_api_serve import test_the_rate_limit_holds_across_processes as rate_limit_across

#: the rate limit of the pair: 20 writes at once per token, then one a second
RATE = {"SCHOCKEN_WRITE_RATE_PER_MINUTE": "60", "SCHOCKEN_WRITE_RATE_BURST": "20"}


def start_servers(
    folder: Any, url: str, count: int, workers: int = 2, env: dict[str, str] | None = None
) -> list[Server]:
    """``count`` servers on the PostgreSQL database ``url`` (all stopped again if one fails),
    with ``env`` (default: the low rate limit :data:`RATE`)."""
    servers: list[Server] = []
    try:
        for _ in range(count):
            servers.append(
                Server(folder / "data" / "none", workers, env or RATE, url=url, background=False)
            )
    except BaseException:
        for server in servers:
            server.kill()
        raise
    return servers


@pytest.fixture(scope="module")
def pg_pair(pg_cluster: Cluster, tmp_path_factory: Any) -> Iterator[tuple[str, str, str]]:
    """Two servers (2 workers each) on one fresh database: their bases and the URL."""
    url = pg_cluster.fresh_url()
    folder = tmp_path_factory.mktemp("pgpair")
    a, b = start_servers(folder, url, 2)
    yield a.base, b.base, url
    for server in (a, b):
        server.stop()
    pg_cluster.drop(url)


def log_of(url: str, tisch: Tisch) -> list[tuple[int, str]]:
    """(seq, kind) of the game's stored log, read from the database itself."""
    game_id = int(tisch.game.rsplit("/", 1)[1])
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT seq, kind FROM game_log WHERE game_id = %s ORDER BY seq", [game_id]
        )
        return [(int(seq), str(kind)) for seq, kind in rows.fetchall()]


def test_two_phones_on_two_servers_one_201_one_412(pg_pair):
    a, b, url = pg_pair
    tisch = Tisch(a)
    one_of_two_phones_wins(tisch, (a, b), 6)
    assert [seq for seq, _ in log_of(url, tisch)] == list(range(1, 7))


def test_an_idempotent_retry_on_the_other_server_is_recorded_once(pg_pair):
    a, b, url = pg_pair
    tisch = Tisch(a)
    key = {"Idempotency-Key": uuid.uuid4().hex, "If-Match": '"0"'}
    first = request(a, "POST", tisch.game + "/turns", TURNS[0], tisch.token, key)
    for base in (b, a, b):  # the phone did not hear the answer: again, on either server
        again = request(base, "POST", tisch.game + "/turns", TURNS[0], tisch.token, key)
        assert again[:2] == first[:2] and first[0] == 201
        assert again[2].get("Idempotent-Replayed") == "true"
    assert len(log_of(url, tisch)) == 1


def test_the_same_key_sent_to_both_servers_at_once_records_once(pg_pair):
    a, b, url = pg_pair
    tisch = Tisch(a)
    for seq in range(4):
        key = {"Idempotency-Key": uuid.uuid4().hex}
        answers = both_at_once(
            lambda base, body=tisch.plan[seq], key=key: request(
                base, "POST", tisch.game + "/turns", body, tisch.token, key
            ),
            (a, b),
        )
        assert [s for s, _, _ in answers] == [201, 201], answers
        assert answers[0][1] == answers[1][1]
        assert sorted(h.get("Idempotent-Replayed", "-") for _, _, h in answers) == ["-", "true"]
    assert [seq for seq, _ in log_of(url, tisch)] == list(range(1, 5))


def test_a_write_on_one_server_is_seen_by_the_next_write_on_the_other(pg_pair):
    a, b, _ = pg_pair
    tisch = Tisch(a)
    for base in (a, b):  # both workers of both servers have the game at seq 0 in their caches
        for _ in range(4):
            assert request(base, "GET", tisch.game)[1]["seq"] == 0
    for seq in range(6):
        base = (a, b)[seq % 2]
        answer = request(base, "POST", tisch.game + "/turns", tisch.plan[seq], tisch.token)
        assert answer[0] == 201 and answer[1]["seq"] == seq + 1, answer[1]
    assert request(b, "POST", tisch.game + "/undo", {}, tisch.token)[0] == 201
    for base in (a, b):
        game = request(base, "GET", tisch.game)[1]
        assert game["seq"] == 7
    moved = request(a, "POST", tisch.game + "/turns", tisch.plan[5], tisch.token)
    assert moved[0] == 201 and moved[1]["seq"] == 8


def test_a_stammtisch_made_private_on_one_server_is_private_on_the_other(pg_pair):
    made_private_elsewhere(pg_pair[:2])  # the SQLite pair's test, on two PostgreSQL servers


def test_the_rate_limit_is_shared_by_the_servers(pg_pair):
    rate_limit_across(pg_pair[:2])  # the SQLite pair's test: 20 at once, then one a second


def test_serve_on_postgresql_says_when_the_shared_secrets_are_not_configured(monkeypatch, capsys):
    from api.cli.server import _shared_secrets_hint

    for key in ("SCHOCKEN_SECRET_KEY", "SCHOCKEN_ADMIN_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    _shared_secrets_hint()
    said = capsys.readouterr().err
    assert "SCHOCKEN_SECRET_KEY und SCHOCKEN_ADMIN_TOKEN nicht gesetzt" in said
    monkeypatch.setenv("SCHOCKEN_SECRET_KEY", "k" * 64)
    _shared_secrets_hint()
    said = capsys.readouterr().err
    assert "SCHOCKEN_ADMIN_TOKEN nicht gesetzt" in said and "SECRET_KEY" not in said
    monkeypatch.setenv("SCHOCKEN_ADMIN_TOKEN", "admin")
    _shared_secrets_hint()
    assert capsys.readouterr().err == ""
