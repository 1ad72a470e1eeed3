"""``schocken serve`` against clients that misbehave at the connection: stalled request heads
and bodies cost no worker (gunicorn's gevent worker, api/cli/serving.py), gunicorn's own error
answers are problem details, and a low open-files limit makes streams beyond the cap a 503
while writes still answer and no worker dies."""

from __future__ import annotations

import json
import os
import select
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from test_api_events_serve import ENV, Sse
from test_api_serve import Server, Tisch, request

HALF_HEAD = b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n"
HALF_BODY = (
    b"POST /api/v1/stammtische HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 4096\r\n\r\n" + b'{"name": "slow ...'
)


def timed(call: Any) -> tuple[float, Any]:
    started = time.monotonic()
    answer = call()
    return time.monotonic() - started, answer


def raw_answer(port: int, data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``data`` on a new connection; the answer's status, headers and body."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)
        raw = b""
        while chunk := sock.recv(65536):
            raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
    return int(lines[0].split()[1]), headers, body


@pytest.fixture(scope="module")
def server(tmp_path_factory: Any) -> Iterator[Server]:
    """Two workers, started with a soft open-files limit of 1,024 below a hard one of 4,096;
    at most 3 streams per client address; the write rate limit on (its default)."""
    db = tmp_path_factory.mktemp("slow") / "data" / "slow.sqlite3"
    env = {
        **ENV,
        "SCHOCKEN_EVENT_STREAMS_PER_CLIENT": "3",
        "SCHOCKEN_WRITE_RATE_PER_MINUTE": "3000",
    }
    started = Server(db, 2, env, limit_files=(1024, 4096), background=False)
    yield started
    started.stop()


@pytest.fixture(scope="module")
def tisch(server: Server) -> Tisch:
    return Tisch(server.base)


def test_stalled_heads_and_bodies_cost_no_worker(server, tisch):
    """100 connections stalled in their head or body (two workers; 80 of them writes with the
    Stammtisch's key, more than a worker's pool of database connections): the health check
    and a recorded turn answer within their usual time (a threaded worker froze until
    gunicorn's 120 s timeout killed it; a write that took its connection before its body
    arrived would empty the pool)."""
    keyed = (
        f"POST {tisch.game}/turns HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {tisch.token}\r\nContent-Type: application/json\r\n"
        "Content-Length: 4096\r\n\r\n{"
    ).encode()
    stalled: list[socket.socket] = []
    try:
        for index in range(100):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            sock.sendall((HALF_HEAD, HALF_BODY, keyed, keyed, keyed)[index % 5])
            stalled.append(sock)
        time.sleep(0.3)
        for seq in range(4):
            took, answer = timed(lambda: request(server.base, "GET", "/api/v1/health"))
            assert answer[0] == 200 and took < 1.0, took
            took, answer = timed(
                lambda seq=seq: request(
                    server.base, "POST", tisch.game + "/turns", tisch.plan[seq], tisch.token
                )
            )
            assert answer[0] == 201 and took < 2.0, (took, answer)
    finally:
        for sock in stalled:
            sock.close()


def test_gunicorns_own_error_answers_are_problem_details(server):
    """A request line gunicorn cannot read (400), a 10 KB address (414), too large header
    fields (431): application/problem+json with a German detail, as every error answer."""
    cases = [
        (b"GARBAGE\r\n\r\n", 400, "bad_request"),
        (b"GET /" + b"a" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
        (
            b"GET / HTTP/1.1\r\nHost: x\r\n" + b"X-Big: " + b"b" * 9000 + b"\r\n\r\n",
            431,
            "header_fields_too_large",
        ),
    ]
    for data, status, code in cases:
        got, headers, body = raw_answer(server.port, data)
        assert got == status, (got, body)
        assert headers["Content-Type"] == "application/problem+json"
        problem = json.loads(body)
        assert problem["status"] == status and problem["code"] == code
        assert problem["type"] == f"/api/v1/problems/{code}"
        assert problem["detail"].startswith("Die ")  # German, for the player
    assert request(server.base, "GET", "/api/v1/health")[0] == 200


def worker_pids(master: int) -> set[int]:
    with open(f"/proc/{master}/task/{master}/children", encoding="ascii") as fh:
        pids = {int(p) for p in fh.read().split()}
    workers = set()
    for pid in pids:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            command = fh.read()
        if b"stats" not in command and b"webhooks" not in command:
            workers.add(pid)
    return workers


def test_a_low_open_files_limit_caps_the_streams_and_crashes_nothing(tmp_path):
    """256 open files (soft and hard): one worker takes 64 connections, 48 of them streams; of
    80 streams opened one after the other the rest get 503 problem details, writes still
    answer, no worker dies; once they close, streams are taken again."""
    limit = 256
    cap = (limit - 192) * 3 // 4  # api/cli/serving.py: connections, then 3/4 of them
    env = {**ENV, "SCHOCKEN_EVENT_STREAMS_PER_CLIENT": "1000"}
    server = Server(
        tmp_path / "data" / "files.sqlite3", 1, env, limit_files=limit, background=False
    )
    crowd: list[Sse] = []
    try:
        tisch = Tisch(server.base)
        workers = worker_pids(server.proc.pid)
        refused = 0
        for _ in range(80):
            client = Sse(server.base, tisch.game + "/events")
            if client.status == 503:
                client.read_until(lambda: False, 2)
                problem = json.loads(client.raw)
                assert problem["code"] == "too_many_streams", problem
                assert client.headers["Content-Type"] == "application/problem+json"
                refused += 1
                client.close()
            else:
                assert client.status == 200
                crowd.append(client)
        assert len(crowd) == cap and refused == 80 - cap
        for seq in range(3):
            answer = request(
                server.base, "POST", tisch.game + "/turns", tisch.plan[seq], tisch.token
            )
            assert answer[0] == 201, answer
        crowd[0].wait_for_id(3)
        crowd[-1].wait_for_id(3)
        for client in crowd:
            client.close()
        crowd.clear()
        time.sleep(1.5)  # the heartbeats find them gone
        again = Sse(server.base, tisch.game + "/events")
        assert again.status == 200
        again.close()
        assert worker_pids(server.proc.pid) == workers  # none died, none restarted
        assert "Too many open files" not in server.log.read_text()
    finally:
        for client in crowd:
            client.close()
        server.stop()


def test_one_client_address_takes_at_most_its_share_of_streams(server, tisch):
    """At most 3 streams per client address and process: with two workers, 3 to 6 streams of
    one address are let in, the rest get 429 problem details."""
    crowd = [Sse(server.base, tisch.url + "/events") for _ in range(8)]
    try:
        statuses = [c.status for c in crowd]
        assert 3 <= statuses.count(200) <= 6 and statuses.count(429) == 8 - statuses.count(200)
        refused = next(c for c in crowd if c.status == 429)
        refused.read_until(lambda: False, 2)
        assert refused.headers["Retry-After"] == "5"
        assert refused.headers["Content-Type"] == "application/problem+json"
        problem = json.loads(refused.raw)
        assert problem["code"] == "too_many_client_streams"
        assert "Adresse" in problem["detail"]
    finally:
        for client in crowd:
            client.close()


def test_the_open_files_limit_is_raised_to_the_hard_one(server):
    """Started with the common soft limit of 1,024 below a hard one of 4,096: the server's
    processes run with 4,096."""
    for pid in {server.proc.pid, *worker_pids(server.proc.pid)}:
        with open(f"/proc/{pid}/limits", encoding="ascii") as fh:
            line = next(x for x in fh if x.startswith("Max open files"))
        assert line.split()[3:5] == ["4096", "4096"], line


def test_a_worker_out_of_open_files_pauses_accepting_and_goes_on(tmp_path):
    """The worker's limit lowered to what it holds plus a few while it runs: of 40 streams
    opened at once, those beyond wait (its accept fails with EMFILE and pauses), none
    crashes it; a kept-alive connection still records a turn, and once the streams close,
    new connections are served again."""
    import http.client
    import resource

    server = Server(tmp_path / "data" / "emfile.sqlite3", 1, ENV, background=False)
    crowd: list[socket.socket] = []
    try:
        tisch = Tisch(server.base)
        (worker,) = worker_pids(server.proc.pid)
        kept = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {tisch.token}"}

        def turn(seq: int) -> int:
            body = json.dumps(tisch.plan[seq])
            kept.request("POST", tisch.game + "/turns", body=body, headers=headers)
            answer = kept.getresponse()
            answer.read()
            return answer.status

        assert turn(0) == 201
        held = len(os.listdir(f"/proc/{worker}/fd"))
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.prlimit(worker, resource.RLIMIT_NOFILE, (held + 8, hard))
        path = f"{tisch.game}/events".encode()
        for _ in range(40):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            sock.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            crowd.append(sock)
        time.sleep(0.5)
        assert turn(1) == 201  # the kept-alive connection is served
        ready, _, _ = select.select(crowd, [], [], 0.5)
        heads = [sock.recv(65536) for sock in ready]
        statuses = [int(head.split()[1]) for head in heads if head]
        assert 0 < statuses.count(200) < 40  # some got in, the rest wait in the backlog
        assert set(statuses) <= {200, 503}  # none failed otherwise (a 500)
        assert "Too many open files" in server.log.read_text()
        for sock in crowd:
            sock.close()
        crowd.clear()
        resource.prlimit(worker, resource.RLIMIT_NOFILE, (hard, hard))
        deadline = time.monotonic() + 5
        while request(server.base, "GET", "/api/v1/health")[0] != 200:
            assert time.monotonic() < deadline
        assert worker_pids(server.proc.pid) == {worker}  # the same worker, alive
        kept.close()
    finally:
        for sock in crowd:
            sock.close()
        server.stop()
