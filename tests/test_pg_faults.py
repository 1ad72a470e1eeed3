"""Issue 12, faults and bad input on PostgreSQL: servers killed (SIGKILL) under load, the
database server restarted (``pg_ctl restart -m fast``) or down under load, and a wrong or
unreachable database URL at start.

Under load, "phones" (threads) log games through two ``schocken serve --database-url``
processes (two workers each), as a phone does: every turn with an Idempotency-Key and
If-Match, sent again with the same key to the other server while no answer came or a 503 did.
Afterwards the database's game logs are compared with what was acknowledged, per game and
sequence number: nothing acknowledged may be missing (lost), nothing recorded twice or out of
plan (duplicate).
"""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from pgcluster import Cluster, free_port
from test_api_serve import ROOT, Server, Tisch, request
from test_pg_servers import start_servers

from api.cli import main
from api.domain import DATABASE_UNREACHABLE

#: servers and a PostgreSQL cluster of the module's own, killed and restarted: longer than the
#: run's 120 s default on a busy machine
pytestmark = pytest.mark.timeout(300)

#: the servers' usual rate limit (3000 writes a minute per token)
DEFAULT_RATE = {"SCHOCKEN_WRITE_RATE_PER_MINUTE": "3000"}
#: the failures of a request whose answer never came (a killed server, a cut connection)
NO_ANSWER = (OSError, ValueError, http.client.HTTPException)


@dataclass
class Phone:
    """A thread logging the games of one Stammtisch through ``bases`` in turn; see the
    module's text. ``acked``: game -> the sequence numbers acknowledged (201)."""

    bases: list[str]
    tisch: Tisch
    acked: dict[int, set[int]] = field(default_factory=dict)
    unknown: dict[int, int] = field(default_factory=dict)  # game -> seq sent, no answer yet
    answers: list[tuple[float, int, dict[str, Any], dict[str, str]]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    sent: int = 0
    unanswered: int = 0  # attempts without an answer (a killed server, a cut connection)
    error: BaseException | None = None  # what ended the phone before its time

    def start(self) -> threading.Thread:
        thread = threading.Thread(target=self.guarded, daemon=True)
        thread.start()
        return thread

    def guarded(self) -> None:
        try:
            self.run()
        except BaseException as err:  # noqa: BLE001 - reported by hang_up
            self.error = err

    def send(self, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any] | None:
        """One attempt on the next server: (status, body), or None without an answer."""
        base = self.bases[self.sent % len(self.bases)]
        self.sent += 1
        try:
            status, answer, head = request(base, "POST", path, body, self.tisch.token, headers)
        except NO_ANSWER:
            self.unanswered += 1
            time.sleep(0.02)
            return None
        self.answers.append((time.monotonic(), status, answer, head))
        if status == 503:
            time.sleep(0.05)
            return None
        return status, answer

    def until_answered(self, path: str, body: Any, headers: dict[str, str]) -> Any:
        """Send again (the same key) until an answer other than 503 comes, or the end."""
        while not self.stop.is_set():
            answered = self.send(path, body, headers)
            if answered is not None:
                status, answer = answered
                assert status == 201, (status, answer)
                return answer
        return None

    def run(self) -> None:
        game = int(self.tisch.game.rsplit("/", 1)[1])
        while not self.stop.is_set():
            self.acked.setdefault(game, set())
            for seq, turn in enumerate(self.tisch.plan):
                headers = {"Idempotency-Key": uuid.uuid4().hex, "If-Match": f'"{seq}"'}
                self.unknown[game] = seq + 1
                answer = self.until_answered(f"{self.tisch.url}/games/{game}/turns", turn, headers)
                if answer is None:
                    return
                assert answer["seq"] == seq + 1, answer
                self.acked[game].add(seq + 1)
                del self.unknown[game]
            body = {"players": ["Anna", "Bert"], "starter": "Anna"}
            created = self.until_answered(
                f"{self.tisch.url}/games", body, {"Idempotency-Key": uuid.uuid4().hex}
            )
            if created is None:
                return
            game = created["id"]


def load(bases: list[str], phones: int = 4) -> list[Phone]:
    """``phones`` phones, each with a Stammtisch and a game of its own, started."""
    started = [Phone(bases, Tisch(bases[i % len(bases)])) for i in range(phones)]
    for phone in started:
        phone.thread = phone.start()  # type: ignore[attr-defined]
    return started


def hang_up(phones: list[Phone]) -> None:
    for phone in phones:
        phone.stop.set()
    for phone in phones:
        phone.thread.join(30)  # type: ignore[attr-defined]
        assert not phone.thread.is_alive()  # type: ignore[attr-defined]
        assert phone.error is None, repr(phone.error)


def tally(url: str, phones: list[Phone]) -> dict[str, int]:
    """Acknowledged, stored, lost (acknowledged, not stored), duplicate (stored beyond the
    turns sent or out of plan) and in flight (sent, no answer), over every phone's games;
    attempts without an answer, and answers replayed for a key sent again."""
    counts = dict.fromkeys(("acked", "stored", "lost", "dup", "in_flight"), 0)
    counts["unanswered"] = sum(phone.unanswered for phone in phones)
    counts["replayed"] = sum(
        h.get("Idempotent-Replayed") == "true" for p in phones for _, _, _, h in p.answers
    )
    with psycopg.connect(url) as conn:
        for phone in phones:
            for game, acked in phone.acked.items():
                rows = conn.execute(
                    "SELECT seq, body FROM game_log WHERE game_id = %s ORDER BY seq", [game]
                ).fetchall()
                stored = [int(seq) for seq, _ in rows]
                assert stored == list(range(1, len(stored) + 1)), (game, stored)
                in_flight = 1 if game in phone.unknown else 0
                planned = [t["dice"] for t in phone.tisch.plan]
                out_of_plan = sum(body["dice"] != planned[seq - 1] for seq, body in rows)
                counts["acked"] += len(acked)
                counts["stored"] += len(stored)
                counts["in_flight"] += in_flight
                counts["lost"] += len(acked - set(stored))
                counts["dup"] += max(0, len(stored) - len(acked) - in_flight) + out_of_plan
    return counts


def load_average() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def test_a_killed_server_and_then_all_of_them_lose_no_acknowledged_write(pg_cluster, tmp_path):
    url = pg_cluster.fresh_url()
    servers = start_servers(tmp_path, url, 2, env=DEFAULT_RATE)
    try:
        phones = load([s.base for s in servers])
        time.sleep(1.0)
        servers[0].kill()  # master and workers at once, mid-request
        before = sum(len(a) for p in phones for a in p.acked.values())
        time.sleep(1.0)  # the phones go on through the other server
        after = sum(len(a) for p in phones for a in p.acked.values())
        servers[1].kill()  # and now every server
        hang_up(phones)
        counts = tally(url, phones)
        print(f"\nSIGKILL one, then all: {counts}; {load_average()}")
        assert counts["lost"] == 0 and counts["dup"] == 0, counts
        assert after > before > 0  # the load went on after the first kill
        again = start_servers(tmp_path, url, 1, env=DEFAULT_RATE)[
            0
        ]  # a server starts on what was left
        try:
            for phone in phones:
                for game, acked in phone.acked.items():
                    path = f"{phone.tisch.url}/games/{game}"
                    status, state, _ = request(again.base, "GET", path)
                    assert status == 200 and state["seq"] >= max(acked, default=0)
        finally:
            again.stop()
    finally:
        for server in servers:
            server.kill()
        pg_cluster.drop(url)


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[Cluster]:
    """A PostgreSQL server of this module's own, to restart and stop."""
    cluster = Cluster()
    yield cluster
    cluster.stop()


#: the servers' admin token: /health names the cause of an outage only to it
ADMIN = "admin-der-fehlerproben"


@pytest.fixture(scope="module")
def pair_of_own(own_cluster: Cluster, tmp_path_factory: Any) -> Iterator[list[Server]]:
    url = own_cluster.database_url("postgres")
    env = {**DEFAULT_RATE, "SCHOCKEN_ADMIN_TOKEN": ADMIN}
    servers = start_servers(tmp_path_factory.mktemp("faults"), url, 2, env=env)
    yield servers
    for server in servers:
        server.stop()


def first_write_after(phones: list[Phone], moment: float) -> float:
    """Seconds from ``moment`` to the first 201 answered after it."""
    times = [t for p in phones for t, status, _, _ in p.answers if status == 201 and t > moment]
    return min(times) - moment


def test_a_restart_of_postgresql_under_load_loses_nothing(own_cluster, pair_of_own):
    url = own_cluster.database_url("postgres")
    phones = load([s.base for s in pair_of_own])
    time.sleep(0.7)
    started = time.monotonic()
    own_cluster.restart()  # pg_ctl restart -m fast
    ready = time.monotonic()
    time.sleep(1.5)
    hang_up(phones)
    counts = tally(url, phones)
    refused = [(a, h) for p in phones for _, status, a, h in p.answers if status == 503]
    took = first_write_after(phones, ready)
    print(
        f"\npg_ctl restart -m fast under load: restart {ready - started:.2f} s, first write "
        f"{took:.2f} s after it, {len(refused)} × 503; {counts}; {load_average()}"
    )
    assert counts["lost"] == 0 and counts["dup"] == 0, counts
    assert all(h.get("Retry-After") and a["message"] == DATABASE_UNREACHABLE for a, h in refused)
    assert took < 1.5
    assert all(server.proc.poll() is None for server in pair_of_own)


def test_postgresql_down_answers_503_health_says_so_and_the_servers_reconnect(
    own_cluster, pair_of_own
):
    tisch = Tisch(pair_of_own[0].base)
    own_cluster.halt()
    try:
        for server in pair_of_own:
            started = time.monotonic()
            status, answer, head = request(
                server.base, "POST", tisch.game + "/turns", tisch.plan[0], tisch.token
            )
            assert time.monotonic() - started < 3
            assert status == 503 and answer["message"] == DATABASE_UNREACHABLE, answer
            assert int(head["Retry-After"]) > 0
            status, health, head = request(server.base, "GET", "/api/v1/health")
            assert status == 503 and health["status"] == "degraded" and "Retry-After" in head
            assert health == {"status": "degraded", "storage": "postgresql"}  # no host, no cause
            status, health, head = request(server.base, "GET", "/api/v1/health", token=ADMIN)
            assert status == 503 and health["status"] == "degraded" and "Retry-After" in head
            assert health["database"].startswith("PostgreSQL unreachable: "), health
            with pytest.raises(urllib.error.HTTPError) as page:  # the pub's web page
                urllib.request.urlopen(f"{server.base}/s/{tisch.slug}/", timeout=10)
            assert page.value.code == 503 and page.value.headers["Retry-After"]
            assert DATABASE_UNREACHABLE in page.value.read().decode()
    finally:
        own_cluster.resume()
    ready, status = time.monotonic(), 0
    while status != 201 and time.monotonic() - ready < 10:
        body = tisch.plan[0]
        headers = {"Idempotency-Key": "after-the-outage"}
        status = request(pair_of_own[1].base, "POST", tisch.game + "/turns", body, tisch.token,
                         headers)[0]  # fmt: skip
    took = time.monotonic() - ready
    print(f"\nfirst write {took:.2f} s after PostgreSQL is back; {load_average()}")
    assert status == 201 and took < 1.5
    for server in pair_of_own:
        assert request(server.base, "GET", "/api/v1/health")[0] == 200
        assert server.proc.poll() is None  # the same processes


# A wrong or unreachable database URL at start: one line, exit code 1, no password shown.

SECRET = "geheim-123"


@pytest.fixture(scope="module")
def bad_urls(own_cluster: Cluster) -> dict[str, tuple[str, str]]:
    """name -> (URL, what the line must say)."""
    where = f"host={own_cluster.folder}&port={own_cluster.port}"
    return {
        "unreachable": (
            f"postgresql://postgres:{SECRET}@127.0.0.1:{free_port()}/schocken",
            "ist nicht erreichbar",
        ),
        "no such database": (f"postgresql://postgres:{SECRET}@/nope?{where}", "gibt es nicht"),
        "no such user": (f"postgresql://niemand:{SECRET}@/postgres?{where}", "lässt uns nicht an"),
        "password in the query": (
            f"postgresql://postgres@/x?port=1&host={own_cluster.folder}&password={SECRET}",
            "ist nicht erreichbar",
        ),
        "wrong scheme": (f"mysql://postgres:{SECRET}@localhost/schocken", "keine PostgreSQL-URL"),
        "no URL": (f"localhost/schocken password={SECRET}", "keine PostgreSQL-URL"),
        "a connection string": (
            f"host={own_cluster.folder} port=1 password={SECRET}",
            "ist nicht erreichbar",
        ),
    }


COMMANDS = {
    "serve": ["serve", "--port", "1", "--database-url"],
    "stats refresh": ["stats", "refresh", "--database-url"],
    "stats refresh --watch": ["stats", "refresh", "--watch", "--database-url"],
    "rebuild": ["rebuild", "--database-url"],
    "dashboard build": ["dashboard", "build", "--out", "site", "--database-url"],
    "demo": ["demo", "--years", "1", "--database-url"],
}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_bad_database_url_stops_a_command_with_one_line(
    command, bad_urls, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # where "site" would be written
    for name, (url, says) in bad_urls.items():
        assert main([*COMMANDS[command], url], standalone_mode=False) == 1, name
        out, err = capsys.readouterr()
        line = err.strip()
        assert "\n" not in line and says in line and SECRET not in out + err, (name, line)
        assert not (tmp_path / "site").exists()


def test_copy_names_the_database_it_cannot_reach(bad_urls, capsys, tmp_path):
    for name, (url, _) in bad_urls.items():
        if "://" not in url:
            continue  # a file name to copy
        assert main(["copy", url, str(tmp_path / "x.sqlite3")], standalone_mode=False) == 1
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and SECRET not in err, (name, err)
        assert not (tmp_path / "x.sqlite3").exists()


def test_serve_on_an_unreachable_database_exits_without_a_traceback(bad_urls):
    url = bad_urls["unreachable"][0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCHOCKEN_")}
    for args in (["serve", "--database-url", url], ["demo"]):
        done = subprocess.run(
            [sys.executable, "-m", "api.cli", *args],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
            env={**env, "SCHOCKEN_DATABASE_URL": url},
        )  # fmt: skip
        assert done.returncode == 1, done
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
        assert "ist nicht erreichbar" in done.stderr and SECRET not in done.stderr


def test_the_demo_goes_into_the_database_of_the_url(pg_url, capsys):
    assert main(["demo", "--years", "1", "--database-url", pg_url], standalone_mode=False) == 0
    assert "Demo-Stammtisch" in capsys.readouterr().err
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM games").fetchone()[0] > 40


def test_a_database_lost_during_a_command_ends_it_with_one_line(capsys):
    from api.cli.base import command
    from api.storage import StorageUnreachable

    @command("lost", "loses its database")
    def lost() -> int:
        raise StorageUnreachable("PostgreSQL unreachable: server closed the connection")

    assert lost.main([], standalone_mode=False) == 1
    err = capsys.readouterr().err
    assert err == (
        "Die Datenbank ist gerade nicht verfügbar, abgebrochen: PostgreSQL unreachable: "
        "server closed the connection\n"
    )
