"""A third-party developer's view: generate a Python client from openapi.yaml alone with
openapi-python-client, then play against a live server with it: a round with throws and an
undo, and a complete game driven by the turn state (throw by throw, stop only when
turn.must_stop says so, an undo, a 409 handled by its code)."""

from __future__ import annotations

import importlib
import json
import queue
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def client_package(tmp_path_factory):
    out = tmp_path_factory.mktemp("generated")
    config = out / "config.yaml"
    config.write_text("post_hooks: []\npackage_name_override: schocken_client\n")
    tool = Path(sys.executable).parent / "openapi-python-client"
    command = str(tool) if tool.exists() else shutil.which("openapi-python-client")
    assert command, "openapi-python-client is not installed: pip install -e '.[test]'"
    result = subprocess.run(
        [
            command,
            "generate",
            "--path",
            str(ROOT / "openapi.yaml"),
            "--config",
            str(config),
            "--meta",
            "none",
            "--output-path",
            str(out / "schocken_client"),
        ],  # fmt: skip
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(out))
    yield "schocken_client"
    sys.path.remove(str(out))
    for name in [m for m in sys.modules if m.startswith("schocken_client")]:
        del sys.modules[name]


def op(pkg: str, tag: str, name: str):
    return importlib.import_module(f"{pkg}.api.{tag}.{name}")


def test_a_generated_client_plays_a_round_records_throws_and_undoes(client_package, api_server):
    pkg = client_package
    client_mod = importlib.import_module(f"{pkg}.client")
    models = importlib.import_module(f"{pkg}.models")

    anonymous = client_mod.Client(base_url=api_server)
    assert op(pkg, "health", "get_health").sync(client=anonymous).status == "ok"
    created = op(pkg, "stammtische", "create_stammtisch").sync(
        client=anonymous, body=models.StammtischCreate(name="Zur Post")
    )
    assert isinstance(created, models.StammtischCreated)
    table = client_mod.AuthenticatedClient(base_url=api_server, token=created.token)
    for name in ("Anna", "Bert", "Clara", "Dieter"):
        op(pkg, "players", "add_player").sync(
            "zur-post", client=table, body=models.PlayerCreate(name=name)
        )
    game = op(pkg, "games", "start_game").sync(
        "zur-post",
        client=table,
        body=models.GameStart(players=["Anna", "Bert", "Clara", "Dieter"], starter="Anna"),
    )
    assert isinstance(game, models.Game) and game.outcome.state.mitte == 13

    record_turn = op(pkg, "games", "record_turn")
    for player, dice, throws, hand in [
        ("Anna", [1, 1, 4], 3, False),
        ("Bert", [3, 4, 5], 3, False),
        ("Clara", [5, 5, 5], 1, True),
    ]:
        result = record_turn.sync(
            "zur-post",
            game.id,
            client=table,
            body=models.TurnRequest(player=player, dice=dice, throws=throws, hand=hand),
        )
        assert isinstance(result, models.WriteResult), result
    # Dieter throws throw by throw
    record_throw = op(pkg, "games", "record_throw")
    record_throw.sync(
        "zur-post", game.id, client=table,
        body=models.ThrowRequest(player="Dieter", dice=[6, 3, 1], aside=[6]),
    )  # fmt: skip
    result = record_throw.sync(
        "zur-post", game.id, client=table,
        body=models.ThrowRequest(player="Dieter", dice=[3, 2], stop=True),
    )  # fmt: skip
    messages = [e.message for e in result.events]
    assert messages[-1] == "Dieter bekommt 4 Deckel aus der Mitte – Schock 4 von Anna."
    assert result.game.outcome.state.stacks["Dieter"] == 4

    # a move the rules forbid comes back as the documented error
    error = record_turn.sync(
        "zur-post", game.id, client=table,
        body=models.TurnRequest(player="Anna", dice=[2, 2, 2], throws=1),
    )  # fmt: skip
    assert isinstance(error, models.Error) and error.status == 409
    assert error.code == "turn_not_yours" and error.type_ == "/api/v1/problems/turn_not_yours"
    assert error.message == "Anna ist nicht an der Reihe, sondern Dieter."

    undone = op(pkg, "games", "undo_last_entry").sync(
        "zur-post", game.id, client=table, body=models.UndoRequest(by="Anna")
    )
    assert undone.events[0].kind == "undone"
    assert undone.game.open_turn.player == "Dieter"  # the last throw was undone, not the first
    log = op(pkg, "games", "export_game_log").sync("zur-post", game.id, client=anonymous)
    assert [e.to_dict()["player"] for e in log.events] == ["Anna", "Bert", "Clara"]
    assert undone.game.open_turn.throws[0].aside == [6]


class Table:
    """What a client author writes around the generated client: one Stammtisch's game."""

    def __init__(self, pkg: str, server: str, name: str, players: list[str]) -> None:
        self.pkg, self.models = pkg, importlib.import_module(f"{pkg}.models")
        client_mod = importlib.import_module(f"{pkg}.client")
        with client_mod.Client(base_url=server) as anonymous:
            created = op(pkg, "stammtische", "create_stammtisch").sync(
                client=anonymous, body=self.models.StammtischCreate(name=name)
            )
        self.slug = created.slug
        self.client = client_mod.AuthenticatedClient(base_url=server, token=created.token)
        for player in players:
            body = self.models.PlayerCreate(name=player)
            op(pkg, "players", "add_player").sync(self.slug, client=self.client, body=body)
        body = self.models.GameStart(players=players, starter=players[0])
        self.game = op(pkg, "games", "start_game").sync(self.slug, client=self.client, body=body)

    def _write(self, name: str, body):
        result = op(self.pkg, "games", name).sync(
            self.slug, self.game.id, client=self.client, body=body
        )
        assert isinstance(result, self.models.WriteResult), result
        self.game = result.game
        return result

    def turn(self, player: str, dice: list[int], throws: int, hand: bool = False):
        body = self.models.TurnRequest(player=player, dice=dice, throws=throws, hand=hand)
        return self._write("record_turn", body).game

    def throw(self, player: str, dice=None, aside=None, stop: bool = False):
        body = self.models.ThrowRequest(player=player, stop=stop)
        if dice is not None:
            body.dice = dice
        if aside is not None:
            body.aside = aside
        return self._write("record_throw", body).game

    def done(self, player: str):
        """The player is done: stop only when the turn state says a stop is needed."""
        if self.game.turn.open_ is not None and self.game.turn.must_stop:
            return self.throw(player, stop=True)
        return self.game

    def undo(self, by: str):
        return self._write("undo_last_entry", self.models.UndoRequest(by=by, reason="vertippt"))

    def refused_turn(self, player: str, dice: list[int], throws: int):
        body = self.models.TurnRequest(player=player, dice=dice, throws=throws, hand=throws == 1)
        return op(self.pkg, "games", "record_turn").sync_detailed(
            self.slug, self.game.id, client=self.client, body=body
        )


def test_a_generated_client_plays_a_complete_game_driven_by_the_turn_state(
    client_package, api_server
):
    """Anna and Dieter play until the game is over (Dieter loses both halves: Blattschuss).

    Dieter's first turn goes throw by throw; the client sends ``stop`` only when
    ``turn.must_stop`` says so, undoes a throw on the way, and handles a 409 by its code."""
    table = Table(client_package, api_server, "Zum Anker", ["Anna", "Dieter"])
    models, turn = table.models, table.game.turn
    assert (turn.player, turn.opener, turn.limit, turn.limit_fixed) == ("Anna", "Anna", 3, False)
    state = table.turn("Anna", [2, 3, 5], 3)  # Anna opens with three throws: the limit is 3
    assert (state.turn.player, state.turn.limit, state.turn.limit_fixed) == ("Dieter", 3, True)

    # the wrong player's turn: a 409 with the typed error model and its stable code
    response = table.refused_turn("Anna", [1, 1, 1], 1)
    assert response.status_code == 409 and isinstance(response.parsed, models.Error)
    assert response.parsed.code is models.ErrorCode.TURN_NOT_YOURS
    assert response.parsed.detail == "Anna ist nicht an der Reihe, sondern Dieter."

    # Dieter throw by throw: 6-3-1, the one set aside; ended now, 6-3-1 beats Anna's 5-3-2
    state = table.throw("Dieter", [6, 3, 1], aside=[1])
    opened = state.turn.open_
    assert (opened.throws_used, opened.throws_left, opened.kept, opened.dice_in_cup) == (
        1, 2, [1], 2,
    )  # fmt: skip
    assert opened.can_stop and opened.next_player == "Anna" and not state.turn.must_stop
    state = table.throw("Dieter", [6, 6])  # a slip of the finger: undone, then the real throw
    assert state.turn.open_.throws_used == 2
    undone = table.undo(by="Dieter")
    assert undone.events[0].kind == "undone" and undone.game.turn.open_.throws_used == 1
    state = table.throw("Dieter", [2, 2])  # 2-2-1 loses to 5-3-2: Dieter would open next
    assert state.turn.open_.throws_left == 1 and state.turn.open_.next_player == "Dieter"
    assert state.turn.must_stop  # no entry of Anna's can end this turn
    state = table.done("Dieter")
    assert state.turn.open_ is None and state.outcome.state.stacks["Dieter"] == 1
    assert (state.turn.player, state.turn.round_of_half) == ("Dieter", 2)

    # Anna's Schock aus ends the half, twice: Dieter holds every Deckel, then Blattschuss
    for half in (1, 2):
        assert state.turn.half == half and state.turn.player == "Dieter"
        table.turn("Dieter", [2, 3, 5], 1, hand=True)
        state = table.turn("Anna", [1, 1, 1], 1, hand=True)
    assert state.status == "finished" and state.turn is None
    assert state.outcome.half_losers == ["Dieter", "Dieter"] and state.outcome.blattschuss
    assert state.outcome.loser == "Dieter"
    over = table.refused_turn("Anna", [1, 1, 1], 1)
    assert over.status_code == 409 and over.parsed.code is models.ErrorCode.GAME_FINISHED


def readme_bot() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```python\n# fmt: off\n# bot.py", 1)[1].split("```", 1)[0]
    assert len(("# bot.py" + block).splitlines()) <= 15  # the README promises a short bot
    return "# bot.py" + block


@pytest.fixture
def webhook_receiver():
    """A chat's webhook receiver on localhost: every JSON body posted to it, in a queue."""
    received: queue.Queue[dict] = queue.Queue()

    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            received.put(json.loads(self.rfile.read(length)))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    receiver = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{receiver.server_port}/hook", received
    receiver.shutdown()
    receiver.server_close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """``schocken serve`` on a SQLite file, one worker: its master runs the webhook sender."""
    from api.bench.loadgen import free_port

    folder = tmp_path_factory.mktemp("served")
    port, log = free_port(), folder / "serve.log"
    command = [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--workers", "1",
               "--db", str(folder / "bot.sqlite3")]  # fmt: skip
    with open(log, "w") as out:
        proc = subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not answers(base + "/api/v1/health"):
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    yield base
    proc.terminate()
    proc.wait(30)


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5):
            return True
    except OSError:
        return False


def test_the_readme_bot_receives_the_webhooks_and_posts_every_lost_game(
    client_package, served, webhook_receiver, tmp_path
):
    """End to end: a real server (its sender), the README's bot as the webhook receiver, a
    fake chat. A forged delivery is refused (401) and posts nothing."""
    from api.bench.loadgen import free_port

    chat, received = webhook_receiver
    table = Table(client_package, served, "Zur Linde", ["Dieter", "Anna"])
    port = free_port()
    body = table.models.WebhookCreate(url=f"http://127.0.0.1:{port}/", kinds=["game_lost"])
    made = op(client_package, "webhooks", "add_webhook").sync(
        table.slug, client=table.client, body=body
    )
    assert made.secret.startswith("whsec_")
    bot = tmp_path / "bot.py"
    bot.write_text(readme_bot(), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, str(bot), str(port), made.secret, chat], stderr=subprocess.DEVNULL
    )  # its access log
    try:
        deadline = time.monotonic() + 20
        while not bot_listens(port):
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.05)
        forged = urllib.request.Request(
            f"http://127.0.0.1:{port}/", b'{"kind": "game_lost", "message": "Anna verliert"}',
            {"webhook-id": "1-1-0", "webhook-timestamp": str(int(time.time())),
             "webhook-signature": "v1,AAAA", "Content-Type": "application/json"},
        )  # fmt: skip
        with pytest.raises(urllib.error.HTTPError, match="401"):
            urllib.request.urlopen(forged, timeout=10)
        for _half in (1, 2):  # Anna's Schock aus twice: Dieter loses the game (Blattschuss)
            table.turn("Dieter", [2, 3, 5], 1, hand=True)
            game = table.turn("Anna", [1, 1, 1], 1, hand=True)
        assert game.status == "finished" and game.outcome.loser == "Dieter"
        assert received.get(timeout=20) == {
            "text": "Dieter verliert das Spiel und zahlt die Runde."
        }
        with pytest.raises(queue.Empty):  # nothing else, nothing twice
            received.get(timeout=1.5)
        log = op(client_package, "webhooks", "list_webhook_deliveries").sync(
            table.slug, made.id, client=table.client
        )
        assert [(d.state, d.attempts, d.last_status) for d in log.items] == [("delivered", 1, 204)]
        assert process.poll() is None  # still listening
    finally:
        process.kill()
        process.wait(timeout=10)
        table.client.__exit__()  # its kept-alive connection to the server


def bot_listens(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
