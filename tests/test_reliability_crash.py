"""Crash safety: `schocken serve` killed with SIGKILL three times while 8 threads record 8
games and 4 threads race on one (api/bench/crash_check.py; each kill after at least 10 more
acknowledged writes, however busy the machine). Loopback only; on PostgreSQL two kills (the
database server stays up: what is checked is that the servers' deaths lose and duplicate
nothing). `python -m api.bench.crash_check` runs the longer check (5 kills, 16 games)."""

from __future__ import annotations

import pytest

from api.bench.crash_check import run

#: servers started, killed and started again many times: longer than the run's 120 s default
#: on a busy machine
pytestmark = pytest.mark.timeout(600)


def test_hard_kills_lose_no_acknowledged_write_and_duplicate_nothing():
    result = run(kills=3, seed=7, solo=8)
    assert result["kills"] == 3
    assert result["violations"] == [] and result["unexpected"] == []
    assert result["acknowledged"] >= 30  # the writers really were writing when killed
    assert result["present"] == result["acknowledged"] and result["lost"] == 0
    assert result["duplicates"] == 0
    assert result["retries"] > 0  # writes were cut off by the kills and sent again


def test_hard_kills_of_servers_on_postgresql_lose_and_duplicate_nothing(pg_url):
    result = run(kills=2, seed=7, solo=8, database_url=pg_url)
    assert result["kills"] == 2
    assert result["violations"] == [] and result["unexpected"] == []
    assert result["acknowledged"] >= 20
    assert result["present"] == result["acknowledged"] and result["lost"] == 0
    assert result["duplicates"] == 0
    assert result["retries"] > 0
