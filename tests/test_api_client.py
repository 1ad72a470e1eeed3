"""A third-party developer's view: generate a Python client from openapi.yaml alone with
openapi-python-client, then play a short game against a live server with it."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from werkzeug.serving import make_server

from api.app import create_app

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


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    app = create_app({"DATABASE": str(tmp_path_factory.mktemp("client") / "c.sqlite3")})
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    app.extensions["schocken"].store.close()


def op(pkg: str, tag: str, name: str):
    return importlib.import_module(f"{pkg}.api.{tag}.{name}")


def test_a_generated_client_plays_a_round_records_throws_and_undoes(client_package, server):
    pkg = client_package
    client_mod = importlib.import_module(f"{pkg}.client")
    models = importlib.import_module(f"{pkg}.models")

    anonymous = client_mod.Client(base_url=server)
    assert op(pkg, "health", "get_health").sync(client=anonymous).status == "ok"
    created = op(pkg, "stammtische", "create_stammtisch").sync(
        client=anonymous, body=models.StammtischCreate(name="Zur Post")
    )
    assert isinstance(created, models.StammtischCreated)
    table = client_mod.AuthenticatedClient(base_url=server, token=created.token)
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
