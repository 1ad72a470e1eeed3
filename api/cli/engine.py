"""``schocken replay`` and ``schocken simulate``: the rules engine's commands (no Flask)."""

from __future__ import annotations

import json
import sys
from datetime import datetime
from typing import Any

import click

from ..rules import PRESETS, SchockenError, replay_text, ruleset_from_config, simulate_logs
from .base import command


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


@command("replay", "replay a game log and print the outcome as JSON")
@click.argument("file")
@click.option("--pretty", is_flag=True, help="indent the JSON")
def replay(file: str, pretty: bool) -> int:
    """Print the outcome of the game log FILE (JSON, schemas/GAMELOG.md v1; - for standard input),
    or {"error": …} and exit 1."""
    try:
        if file == "-":
            text = sys.stdin.read()
        else:
            with open(file, encoding="utf-8") as fh:
                text = fh.read()
    except (OSError, UnicodeDecodeError) as err:
        print(_dump({"error": f"Datei kann nicht gelesen werden: {err}"}))
        return 1
    outcome = replay_text(text)
    print(json.dumps(outcome, ensure_ascii=False, indent=2) if pretty else _dump(outcome))
    return 1 if "error" in outcome else 0


@command("simulate", "play random complete games, write them as game logs")
@click.option("--games", "-n", type=int, default=10, help="number of games (default 10)")
@click.option(
    "--preset",
    default="standard",
    type=click.Choice(sorted(PRESETS)),
    help="house rules (default standard)",
)
@click.option(
    "--overrides", metavar="JSON", help="house-rule overrides as JSON, e.g. '{\"deckel\": 5}'"
)
@click.option("--players", type=int, default=4, help="number of players (2-20)")
@click.option("--names", metavar="NAMES", help="comma-separated player names in seat order")
@click.option("--seed", type=int, help="random seed for reproducible games")
@click.option("--start", metavar="ISO", help="played_at of the first game (ISO 8601); then weekly")
@click.option("--detail", is_flag=True, help="record turns throw by throw")
@click.option(
    "--out", "-o", metavar="PATH", help="output file (JSON Lines); default standard output"
)
def simulate(
    games: int,
    preset: str,
    overrides: str | None,
    players: int,
    names: str | None,
    seed: int | None,
    start: str | None,
    detail: bool,
    out: str | None,
) -> int:
    """Write random complete games as game logs, one JSON document per line."""
    try:
        changes = json.loads(overrides) if overrides else {}
        rules = ruleset_from_config({"preset": preset, "overrides": changes})
    except (json.JSONDecodeError, SchockenError) as err:
        print(_dump({"error": getattr(err, "message", str(err))}), file=sys.stderr)
        return 1
    seats: int | list[str] = players
    if names:
        seats = [n.strip() for n in names.split(",") if n.strip()]
    first = datetime.fromisoformat(start) if start else None
    stream = open(out, "w", encoding="utf-8") if out else sys.stdout  # noqa: SIM115
    try:
        for log in simulate_logs(
            rules, games, players=seats, seed=seed, start=first, detail=detail
        ):
            stream.write(_dump(log) + "\n")
    finally:
        if stream is not sys.stdout:
            stream.close()
    return 0


COMMANDS = (replay, simulate)
