"""The webhooks' transactional outbox and its sender, on every store: deliveries are written in
the write's transaction (a refused write leaves none, an undo delivers ``undone``), only for the
chosen kinds; the sender signs verifiably (checked by the Standard Webhooks library), retries a
receiver that times out, answers 500, redirects or is down for an hour per the schedule (a fake
clock), then marks the delivery failed; a redelivery keeps the idempotency id."""

from __future__ import annotations

import json
import socket
import threading
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from conftest import STORES
from standardwebhooks import Webhook as Verifier

from api.domain.base import utcnow
from api.domain.sender import SCHEDULE, TIMEOUT, Sender

pytestmark = pytest.mark.stores(*STORES)  # the outbox is the stores': every store


class Clock:
    """A fake clock (naive UTC) the test moves on. It starts a minute ahead of the real one:
    what the app writes in the test's first minute (the outbox stamps deliveries with the real
    clock) is due at once, however slowly a loaded machine runs the test."""

    def __init__(self) -> None:
        self.now = utcnow() + timedelta(minutes=1)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


class Receiver:
    """A webhook receiver on localhost: every request (headers, body) is kept; ``status``,
    ``location`` and ``hang`` say what to do with the next ones: a status, a redirect, or no
    answer at all until the test ends (a receiver that times out, whatever the load)."""

    def __init__(self) -> None:
        self.got: list[tuple[dict[str, str], bytes]] = []
        self.status, self.hang, self.location = 204, False, None
        self.body = b""
        self.released = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.got.append(({k.lower(): v for k, v in self.headers.items()}, body))
                if receiver.hang:
                    receiver.released.wait()
                    return
                self.send_response(receiver.status)
                if receiver.location:
                    self.send_header("Location", receiver.location)
                self.send_header("Content-Length", str(len(receiver.body)))
                self.end_headers()
                self.wfile.write(receiver.body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def bodies(self) -> list[dict]:
        return [json.loads(body) for _, body in self.got]

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/hook"  # nobody listens there


def hook(table, url, kinds):
    r = table.post("/webhooks", {"url": url, "kinds": kinds})
    assert r.status_code == 201, r.json
    return r.json


def log(table, made):
    r = table.get(f"/webhooks/{made['id']}/deliveries?page_size=100", headers=table.auth)
    assert r.status_code == 200, r.json
    return r.json["items"]


@pytest.fixture
def sender(app, request):
    """A sender on a fake clock, without jitter (rand 0.5). Its deadline per attempt is the
    product's (10 s: a loopback delivery meets it on the busiest machine), or the test's
    ``request.param`` (a short one, for a receiver that never answers)."""
    clock = Clock()
    repo = app.extensions["schocken"].store.repository()
    timeout = getattr(request, "param", TIMEOUT)
    s = Sender(repo, clock=clock, timeout=timeout, rand=lambda: 0.5, loopback=True)
    s.clock_ = clock
    yield s
    s.close()


def lose_game(table, game):
    """Anna's Schock aus twice: Dieter loses both halves and the game (Blattschuss)."""
    for _half in (1, 2):
        assert table.turn(game, "Dieter", [2, 3, 5], 1, hand=True).status_code == 201
        last = table.turn(game, "Anna", [1, 1, 1], 1, hand=True)
        assert last.status_code == 201
    return last.json


def test_deliveries_are_written_with_the_write_and_only_for_chosen_kinds(table, sender, receiver):
    every = hook(table, receiver.url, ["game_started", "turn_recorded", "undone"])
    lost = hook(table, receiver.url, ["game_lost"])
    game = table.start(["Dieter", "Anna"], starter="Dieter")
    assert [d["message_id"] for d in log(table, every)] == [f"{every['id']}-1-0"]
    refused = table.turn(game, "Anna", [1, 1, 1], 1)  # not her turn: 409, nothing stored
    assert refused.status_code == 409 and len(log(table, every)) == 1
    assert table.turn(game, "Dieter", [2, 3, 5], 1).status_code == 201
    assert table.post(f"/games/{game}/undo", {"by": "Dieter"}).status_code == 201
    assert [(d["position"], d["kind"]) for d in log(table, every)] == [
        (3, "undone"),
        (2, "turn_recorded"),
        (1, "game_started"),
    ]  # newest first
    assert log(table, lost) == []

    assert sender.run_once() == 3 and sender.run_once() == 0
    kinds = sorted(b["kind"] for b in receiver.bodies())
    assert kinds == ["game_started", "turn_recorded", "undone"]
    turn = next(b for b in receiver.bodies() if b["kind"] == "turn_recorded")
    assert turn["data"]["player"] == "Dieter" and turn["data"]["dice"] == "2-3-5"
    assert (turn["game_id"], turn["seq"], turn["position"]) == (game, 1, 2)
    assert turn["stammtisch"] == table.slug and turn["message"]
    assert all(d["state"] == "delivered" and d["last_status"] == 204 for d in log(table, every))

    last = lose_game(table, game)  # game_lost only once the game is lost
    index = [e["kind"] for e in last["events"]].index("game_lost")
    assert [d["event_index"] for d in log(table, lost)] == [index]
    assert sender.run_once() == 5  # Dieter's and Anna's 4 turns, and the game lost
    (gone,) = [b for b in receiver.bodies() if b["kind"] == "game_lost"]
    assert gone["data"]["player"] == "Dieter" and gone["message"].startswith("Dieter")


def test_a_paused_webhook_gets_nothing_new(table, sender, receiver):
    made = hook(table, receiver.url, ["game_started"])
    table.patch(f"/webhooks/{made['id']}", {"active": False})
    table.start(["Dieter", "Anna"], starter="Dieter")
    assert log(table, made) == [] and sender.run_once() == 0


def test_the_signature_verifies_with_the_standard_webhooks_library(table, sender, receiver):
    made = hook(table, receiver.url, ["game_started"])
    table.start(["Dieter", "Anna"], starter="Dieter")
    sender.clock_.now = utcnow()  # the library checks the timestamp against its own clock
    assert sender.run_once() == 1
    headers, body = receiver.got[0]
    assert headers["webhook-id"] == f"{made['id']}-1-0"
    event = Verifier(made["secret"]).verify(body, headers)
    assert event["kind"] == "game_started" and event["data"]["players"] == ["Dieter", "Anna"]
    assert headers["content-type"] == "application/json"
    with pytest.raises(Exception, match="signature"):  # another secret, or a changed body
        Verifier(table.post(f"/webhooks/{made['id']}/secret").json["secret"]).verify(body, headers)
    with pytest.raises(Exception, match="signature"):
        Verifier(made["secret"]).verify(body.replace(b"Dieter", b"Dietre"), headers)


FAULTS = ["500", "timeout", "redirect", "down"]


def retried_until_failed(table, sender, made, receiver_got=None):
    """Runs the sender through the whole schedule; the attempts' times, relative to the first
    (due when the outbox wrote it: the clock starts there)."""
    (delivery,) = log(table, made)
    due = datetime.fromisoformat(delivery["next_attempt_at"]).replace(tzinfo=None)
    sender.clock_.now = start = due
    times = []
    for wait in (0, *SCHEDULE):
        sender.clock_.advance(wait - 1)
        assert sender.run_once() == 0  # not due a second early
        sender.clock_.advance(1)
        assert sender.run_once() == 1
        times.append((sender.clock_.now - start).total_seconds())
    sender.clock_.advance(10 * 86400)
    assert sender.run_once() == 0  # failed: never again by itself
    return times


@pytest.mark.parametrize(
    ("fault", "sender"),
    [pytest.param(f, 0.1 if f == "timeout" else TIMEOUT, id=f) for f in FAULTS],
    indirect=["sender"],
)
def test_a_failing_receiver_is_retried_per_schedule_then_failed(table, sender, receiver, fault):
    url = closed_port_url() if fault == "down" else receiver.url
    receiver.status = {"500": 500, "timeout": 204, "redirect": 301}.get(fault, 204)
    receiver.hang = fault == "timeout"  # no answer: cut off after the sender's 0.1 s
    receiver.location = "https://elsewhere.example/" if fault == "redirect" else None
    made = hook(table, url, ["game_started"])
    table.start(["Dieter", "Anna"], starter="Dieter")
    times = retried_until_failed(table, sender, made)
    assert times == [0, 10, 70, 370, 2170, 9370, 30970]
    (delivery,) = log(table, made)
    assert delivery["state"] == "failed" and delivery["attempts"] == 7
    unreachable = (
        f"Keine Antwort innerhalb von {sender.timeout:g} s "
        "(nicht erreichbar, abgewiesen oder zu langsam)."
    )
    expected = {
        "500": (500, "Antwort 500 (erwartet: 2xx)."),
        "timeout": (None, unreachable),
        "redirect": (301, "Antwort 301: Weiterleitungen werden nicht gefolgt."),
        "down": (None, unreachable),  # the same text: which ports are open stays unsaid
    }[fault]
    assert (delivery["last_status"], delivery["last_error"]) == expected
    if fault != "down":  # the same idempotency id every time
        assert {h["webhook-id"] for h, _ in receiver.got} == {delivery["message_id"]}
        assert len(receiver.got) == 7


def test_a_receiver_down_for_an_hour_still_gets_it(table, sender, receiver):
    made = hook(table, receiver.url, ["game_started"])
    table.patch(f"/webhooks/{made['id']}", {"url": closed_port_url()})
    table.start(["Dieter", "Anna"], starter="Dieter")
    start = sender.clock_.now
    while sender.clock_.now - start < timedelta(hours=1):
        sender.run_once()
        sender.clock_.advance(5)
    (delivery,) = log(table, made)
    assert delivery["state"] == "pending" and delivery["attempts"] == 5
    table.patch(f"/webhooks/{made['id']}", {"url": receiver.url})  # back up
    sender.clock_.advance(2 * 3600)
    assert sender.run_once() == 1 and len(receiver.got) == 1
    (delivery,) = log(table, made)
    assert delivery["state"] == "delivered" and delivery["attempts"] == 6


def test_a_redelivery_is_one_more_attempt_with_the_same_id(table, sender, receiver):
    made = hook(table, receiver.url, ["game_started"])
    table.start(["Dieter", "Anna"], starter="Dieter")
    assert sender.run_once() == 1
    (delivery,) = log(table, made)
    r = table.post(f"/webhooks/{made['id']}/deliveries/{delivery['id']}/redeliver")
    assert r.status_code == 202 and r.json["state"] == "pending"
    assert sender.run_once() == 1
    assert [h["webhook-id"] for h, _ in receiver.got] == [delivery["message_id"]] * 2
    (again,) = log(table, made)
    assert again["state"] == "delivered" and again["attempts"] == 2


def test_a_ping_is_sent_like_any_delivery(table, sender, receiver):
    made = hook(table, receiver.url, ["game_lost"])
    ping = table.post(f"/webhooks/{made['id']}/ping").json
    assert sender.run_once() == 1
    ((headers, body),) = receiver.got
    assert headers["webhook-id"] == ping["message_id"]
    event = json.loads(body)
    assert event["kind"] == "ping" and event["data"] == {"webhook_id": made["id"]}
    assert event["stammtisch"] == table.slug and "Testnachricht" in event["message"]


def test_a_deleted_webhook_takes_its_deliveries_along(table, sender, receiver):
    made = hook(table, receiver.url, ["game_started"])
    table.start(["Dieter", "Anna"], starter="Dieter")
    assert table.client.delete(f"{table.base}/webhooks/{made['id']}", headers=table.auth)
    assert sender.run_once() == 0 and receiver.got == []


def test_the_log_forgets_finished_deliveries_after_30_days_and_keeps_pending_ones(
    table, sender, receiver
):
    made = hook(table, receiver.url, ["game_started", "turn_recorded"])
    game = table.start(["Dieter", "Anna"], starter="Dieter")
    assert sender.run_once() == 1  # game_started: delivered
    table.patch(f"/webhooks/{made['id']}", {"active": False})
    assert table.turn(game, "Dieter", [2, 3, 5], 1).status_code == 201  # paused: none made
    table.patch(f"/webhooks/{made['id']}", {"active": True})
    assert table.turn(game, "Anna", [2, 3, 4], 1).status_code == 201
    table.patch(f"/webhooks/{made['id']}", {"active": False})  # its delivery waits, pending
    sender.clock_.advance(29 * 86400)
    assert sender.run_once() == 0 and len(log(table, made)) == 2
    sender.clock_.advance(2 * 86400)  # an hour since the last purge, 31 days after
    assert sender.run_once() == 0
    assert [(d["position"], d["state"]) for d in log(table, made)] == [(3, "pending")]
    table.patch(f"/webhooks/{made['id']}", {"active": True})  # resumed: sent
    assert sender.run_once() == 1 and receiver.bodies()[-1]["data"]["player"] == "Anna"


def test_a_delivery_carries_the_event_as_the_event_stream_sends_it(app, table, sender, receiver):
    from api.http.sse import encode

    hook(table, receiver.url, ["game_started", "turn_recorded", "round_lost"])
    game = table.start(["Dieter", "Anna"], starter="Dieter")
    assert table.turn(game, "Dieter", [2, 3, 5], 1).status_code == 201
    assert table.turn(game, "Anna", [6, 6, 6], 1).status_code == 201  # Dieter loses the round
    assert sender.run_once() == 4
    repo = app.extensions["schocken"].store.repository()
    rows = repo.stammtisch_events(repo.get_stammtisch(table.slug).id, 0, 100)
    streamed = [
        json.loads(line.removeprefix("data: "))
        for row in rows
        for line in encode(row, by_game=False).decode().splitlines()
        if line.startswith("data: ")
    ]
    sent = [{k: v for k, v in body.items() if k != "stammtisch"} for body in receiver.bodies()]
    key = lambda e: (e["position"], e["kind"])  # noqa: E731
    assert sorted(sent, key=key) == sorted(streamed, key=key)
    assert {b["stammtisch"] for b in receiver.bodies()} == {table.slug}
