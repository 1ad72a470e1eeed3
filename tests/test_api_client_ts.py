"""A TypeScript developer's view: types generated from openapi.yaml alone by openapi-typescript,
requests by openapi-fetch (tests/clients, exact versions in package.json and package-lock.json),
type-checked and compiled by tsc, run by the machine's Node.js against a live server: a
complete game with a throw-by-throw turn, an undo and a handled 409 (tests/clients/src/play.ts).

The npm packages are installed once into tests/clients/node_modules (ignored by git) and reused
while package-lock.json is unchanged. Without node and npm the test is skipped, unless
SCHOCKEN_REQUIRE_NODE is set (.ci/run sets it): then it fails."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

CLIENTS = Path(__file__).resolve().parent / "clients"
STAMP = CLIENTS / "node_modules" / ".schocken-installed"


def run(*command: str, timeout: float = 120) -> str:
    result = subprocess.run(
        command,
        cwd=CLIENTS,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={**os.environ, "npm_config_update_notifier": "false", "npm_config_fund": "false"},
    )
    assert result.returncode == 0, f"{' '.join(command)}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def npm() -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        if os.environ.get("SCHOCKEN_REQUIRE_NODE"):
            pytest.fail("node and npm are needed for the TypeScript client (SCHOCKEN_REQUIRE_NODE)")
        pytest.skip("node and npm are not installed: the TypeScript client is not tested")
    lock = hashlib.sha256(
        (CLIENTS / "package.json").read_bytes() + (CLIENTS / "package-lock.json").read_bytes()
    ).hexdigest()
    if not STAMP.exists() or STAMP.read_text() != lock:
        run(npm, "ci", "--no-audit", "--prefer-offline", timeout=300)
        STAMP.write_text(lock)
    return npm


def test_the_packages_are_pinned_exactly():
    package = json.loads((CLIENTS / "package.json").read_text())
    pinned = {**package["dependencies"], **package["devDependencies"]}
    assert {"openapi-fetch", "openapi-typescript", "typescript"} <= set(pinned)
    assert all(v[0].isdigit() for v in pinned.values()), pinned
    locked = json.loads((CLIENTS / "package-lock.json").read_text())["packages"]
    for name, version in pinned.items():
        assert locked[f"node_modules/{name}"]["version"] == version


def test_a_typescript_client_plays_a_complete_game(npm, api_server):
    run(npm, "run", "--silent", "generate")  # openapi.yaml → build/schema.d.ts
    run(npm, "run", "--silent", "build")  # tsc: type-checks, then compiles to build/js
    summary = json.loads(run("node", "build/js/src/play.js", api_server).strip().splitlines()[-1])
    assert summary["status"] == "finished" and summary["loser"] == "Dieter"
    assert summary["half_losers"] == ["Dieter", "Dieter"] and summary["blattschuss"]
    assert summary["must_stop"] is True
    assert summary["undone"] == "Rückgängig gemacht: Wurf von Dieter (6-6)."
    assert summary["refused"] == [
        {
            "status": 409,
            "code": "turn_not_yours",
            "detail": "Anna ist nicht an der Reihe, sondern Dieter.",
        },
        {
            "status": 409,
            "code": "game_finished",
            "detail": "Das Spiel ist schon vorbei: Dieter hat verloren.",
        },
    ]
