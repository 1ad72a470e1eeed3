"""A game's answer keeps each resolved round's JSON (made once per game, not per answer): the
outcome it shows is the engine's own serialisation at every step, after an undo too, and an
answer made earlier is not changed by later entries."""

from __future__ import annotations

import copy
from datetime import datetime

import pytest

from api.domain.runtime import GameRuntime
from api.rules import PRESETS
from api.rules.log import parse_header
from api.rules.simulate import simulate_logs
from api.storage import LogEntry

AT = datetime(2025, 3, 1, 20)


def entries(events: list[dict]) -> list[LogEntry]:
    return [
        LogEntry(1, seq, "penalty" if "penalty" in body else "turn", body, AT)
        for seq, body in enumerate(events, start=1)
    ]


@pytest.mark.parametrize("preset", ["standard", "wolbeck", "nrw"])
def test_the_kept_rounds_json_is_the_engines_at_every_step(preset):
    for log in simulate_logs(PRESETS[preset], 3, players=4, seed=11, detail=True):
        header, _ = parse_header(log)
        rt = GameRuntime.new(header)
        shown: list[tuple[dict, dict]] = []  # (an answer's outcome, a deep copy of it then)
        for entry in entries(log["events"]):
            rt.feed(entry)
            outcome = rt.outcome_json()
            assert outcome == rt.game.outcome().to_json()
            shown.append((outcome, copy.deepcopy(outcome)))
        assert rt.game.rounds, "the game resolved rounds"
        for outcome, then in shown:  # later entries changed no earlier answer
            assert outcome == then
        # an undo replays a new runtime: its rounds' JSON is made again from its game
        log_entries = rt.entries
        undone = GameRuntime.replay(header, log_entries[:-1], log_entries[-1].seq + 1)
        assert undone.outcome_json() == undone.game.outcome().to_json()
