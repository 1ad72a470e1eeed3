"""Crash safety: `schocken serve` killed with SIGKILL five times while 16 threads record 16
games and 4 threads race on one (api/bench/crash_check.py). Loopback only, about 30 s."""

from __future__ import annotations

from api.bench.crash_check import run


def test_five_hard_kills_lose_no_acknowledged_write_and_duplicate_nothing():
    result = run(kills=5, seed=7)
    assert result["kills"] == 5
    assert result["violations"] == [] and result["unexpected"] == []
    assert result["acknowledged"] >= 50  # the writers really were writing when killed
    assert result["present"] == result["acknowledged"] and result["lost"] == 0
    assert result["duplicates"] == 0
    assert result["retries"] > 0  # writes were cut off by the kills and sent again
