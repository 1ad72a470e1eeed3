"""The statistics refresher's pause after a round that did work: at least the interval, four
times the round's time and twenty times the CPU it used (its share of a core stays bounded on
a busy server, where DuckDB's two threads use more CPU than the round takes)."""

from __future__ import annotations

import threading
import time

import pytest

from dashboard import refresher


def test_a_round_without_work_waits_the_interval():
    assert refresher.pause_after(1.0, False, took=5.0, cpu=5.0) == 1.0


@pytest.mark.parametrize(
    ("took", "cpu", "pause"),
    [(0.05, 0.04, 1.0), (0.5, 0.05, 2.0), (0.1, 0.2, 4.0), (0.1, 0.0, 1.0)],
)
def test_a_round_with_work_waits_for_its_time_and_its_cpu(took, cpu, pause):
    assert refresher.pause_after(1.0, True, took=took, cpu=cpu) == pytest.approx(pause)


class _Stopping(threading.Event):
    """Records each pause the loop waits for; set after ``rounds`` of them."""

    def __init__(self, rounds: int) -> None:
        super().__init__()
        self.rounds, self.pauses = rounds, []

    def wait(self, timeout: float | None = None) -> bool:
        self.pauses.append(timeout)
        if len(self.pauses) > self.rounds:
            self.set()
        return self.is_set()


def test_the_loop_waits_twenty_times_the_cpu_of_a_round_that_did_work(monkeypatch):
    def busy_round(store: object) -> bool:  # a round that uses about 20 ms of CPU, and works
        started = time.process_time()
        while time.process_time() - started < 0.02:
            pass
        return True

    monkeypatch.setattr(refresher, "adopt", lambda store: None)
    monkeypatch.setattr(refresher, "run_once", busy_round)
    stopping = _Stopping(rounds=2)
    refresher._loop(object(), 0.01, stopping)
    first, *after_work = stopping.pauses
    assert first == 0.01  # the first round waits the interval
    assert after_work and all(p >= refresher.CPU_PAUSE_FACTOR * 0.02 for p in after_work)
