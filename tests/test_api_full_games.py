"""Complete games per preset recorded over HTTP give the outcome of `schocken replay`.

Each game is simulated by the engine's simulator (valid by construction), then recorded three
ways: as turn summaries, throw by throw (single throws, with and without "stop"), and as an
import. The API's outcome must equal what `schocken replay` prints for the same log.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime

import pytest
from conftest import make_table

from api.cli import main
from api.rules import PRESETS, ruleset_from_config
from api.rules.simulate import simulate_logs

NAMES = ["Anna", "Bert", "Clara", "Dieter", "Elke"]


def replay_cli(log, tmp_path, capsys):
    path = tmp_path / "game.json"
    path.write_text(json.dumps(log, ensure_ascii=False), encoding="utf-8")
    capsys.readouterr()
    assert main(["replay", str(path)], standalone_mode=False) == 0
    return json.loads(capsys.readouterr().out)


def summaries(log):
    """A log whose turns are all summaries (final dice, throws, hand)."""
    rules = ruleset_from_config(log["rules"])
    from api.rules import parse_event

    events = []
    for e in log["events"]:
        if "detail" in e:
            cmd = parse_event(e, rules)
            events.append(
                {
                    "player": cmd.player,
                    "dice": list(cmd.dice),
                    "throws": cmd.throws,
                    "hand": cmd.hand,
                }
            )
        else:
            events.append(e)
    return {**log, "events": events}


def record_throws(table, game, log, rng):
    """Send every turn in detail as single throws; stop explicitly only sometimes."""
    events = log["events"]
    for i, e in enumerate(events):
        nxt = events[i + 1]["player"] if i + 1 < len(events) else None
        detail = e["detail"]
        for k, t in enumerate(detail):
            body = {"player": e["player"], **t}
            last = k == len(detail) - 1
            if last and (nxt in (None, e["player"]) or rng.random() < 0.5):
                body["stop"] = True
            r = table.post(f"/games/{game}/throws", body)
            assert r.status_code == 201, (i, k, body, r.json)
    return r.json


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_complete_game_per_preset_matches_schocken_replay(client, preset, tmp_path, capsys):
    table = make_table(client, f"Runde {preset}", rules={"preset": preset})
    table.add_players(NAMES)
    start = datetime(2026, 1, 2, 20, 0, tzinfo=UTC)
    (detail_log,) = simulate_logs(
        PRESETS[preset], 1, players=NAMES, seed=len(preset), start=start, detail=True
    )
    summary_log = summaries(detail_log)
    expected = replay_cli(summary_log, tmp_path, capsys)
    assert expected["loser"] is not None
    assert replay_cli(detail_log, tmp_path, capsys) == expected

    # 1. turn summaries
    game = table.start(NAMES, summary_log["starter"], played_at=summary_log["played_at"])
    for e in summary_log["events"]:
        r = table.post(f"/games/{game}/turns", e)
        assert r.status_code == 201, (e, r.json)
    assert r.json["game"]["outcome"] == expected
    assert [e["kind"] for e in r.json["events"]][-1] == "game_lost"
    assert table.get(f"/games/{game}/log").json == summary_log

    # 2. throw by throw
    game = table.start(NAMES, detail_log["starter"], played_at=detail_log["played_at"])
    last = record_throws(table, game, detail_log, random.Random(preset))
    assert last["game"]["outcome"] == expected
    assert table.get(f"/games/{game}/log").json == detail_log

    # 3. import
    r = table.post("/imports", detail_log)
    assert r.status_code == 201 and r.json["outcome"] == expected
    listed = table.get("/games?status=finished").json
    assert listed["total"] == 3 and {g["loser"] for g in listed["items"]} == {expected["loser"]}
