"""The ``schocken`` command.

Engine commands live here (``replay``, ``simulate``); the server's commands (``serve``,
``openapi``, ``rebuild``, …) register themselves from :mod:`api.cli_server` so that the engine
commands never import Flask.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from api.rules import PRESETS, SchockenError, replay_text, ruleset_from_config
from api.rules.simulate import simulate_logs


def _dump(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)


def cmd_replay(args: argparse.Namespace) -> int:
    """Print the outcome of a game log (GAMELOG.md), or ``{"error": …}`` and exit 1."""
    try:
        if args.file == "-":
            text = sys.stdin.read()
        else:
            with open(args.file, encoding="utf-8") as fh:
                text = fh.read()
    except (OSError, UnicodeDecodeError) as err:
        print(_dump({"error": f"Datei kann nicht gelesen werden: {err}"}))
        return 1
    outcome = replay_text(text)
    print(_dump(outcome) if not args.pretty else json.dumps(outcome, ensure_ascii=False, indent=2))
    return 1 if "error" in outcome else 0


def cmd_simulate(args: argparse.Namespace) -> int:
    """Write N random complete games as game logs, one JSON document per line."""
    try:
        overrides = json.loads(args.overrides) if args.overrides else {}
        rules = ruleset_from_config({"preset": args.preset, "overrides": overrides})
    except (json.JSONDecodeError, SchockenError) as err:
        print(_dump({"error": getattr(err, "message", str(err))}), file=sys.stderr)
        return 1
    players: int | list[str] = args.players
    if args.names:
        players = [n.strip() for n in args.names.split(",") if n.strip()]
    start = datetime.fromisoformat(args.start) if args.start else None
    out = open(args.out, "w", encoding="utf-8") if args.out else sys.stdout  # noqa: SIM115
    try:
        for log in simulate_logs(
            rules, args.games, players=players, seed=args.seed, start=start, detail=args.detail
        ):
            out.write(_dump(log) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="schocken", description="Schocken scorekeeper: rules engine, API and statistics."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("replay", help="replay a game log and print the outcome as JSON")
    p.add_argument("file", help="game log (JSON, GAMELOG.md v1); - for standard input")
    p.add_argument("--pretty", action="store_true", help="indent the JSON")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("simulate", help="play random complete games, write them as game logs")
    p.add_argument("--games", "-n", type=int, default=10, help="number of games (default 10)")
    p.add_argument("--preset", default="standard", choices=sorted(PRESETS))
    p.add_argument("--overrides", help="house-rule overrides as JSON, e.g. '{\"deckel\": 5}'")
    p.add_argument("--players", type=int, default=4, help="number of players (2-20)")
    p.add_argument("--names", help="comma-separated player names in seat order")
    p.add_argument("--seed", type=int, help="random seed for reproducible games")
    p.add_argument("--start", help="played_at of the first game (ISO 8601); then weekly")
    p.add_argument("--detail", action="store_true", help="record turns throw by throw")
    p.add_argument("--out", "-o", help="output file (JSON Lines); default standard output")
    p.set_defaults(func=cmd_simulate)

    try:
        server = importlib.import_module("api.cli_server")
    except ModuleNotFoundError as err:
        if err.name != "api.cli_server":
            raise
    else:
        server.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
