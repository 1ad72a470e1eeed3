"""Where a test run's time goes: the seconds and the CPU of each test file, from a run's JUnit
XML.

Run the suite with ``pytest -p api.bench.suite_times --junitxml=/tmp/ts.xml`` (under
``/usr/bin/time -v`` for the run's CPU time), then ``python -m api.bench.suite_times
/tmp/ts.xml [--top 40] [--by cpu]``. It prints the tests' summed time (setup, call and
teardown: a module fixture counts in its first test, its teardown in the last) and CPU, then
the files, longest first, with their number of tests, and the load average now. On 2 workers
the run's wall time is at least half the sum, and at least the longest file's (``--dist
loadfile``: a file stays on one worker).

The CPU of a test (``-p api.bench.suite_times``, a pytest plugin: a ``cpu`` property of each
test case in the XML) is that of the worker's process tree over the test (:func:`tree_cpu`):
the worker, the servers, browsers and programs it started, and those of their children that
ended meanwhile. Not in it: processes that left the tree (the PostgreSQL cluster, which
``pg_ctl`` starts detached).
"""

from __future__ import annotations

import argparse
import os
import xml.etree.ElementTree as ET
from collections import Counter
from typing import Any

import pytest

from .procstat import tree

_TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu(pid: int | None = None) -> float:
    """User + system CPU seconds of a process, its live descendants, and the descendants each
    of them reaped (from /proc)."""
    ticks = 0
    for p in tree(os.getpid() if pid is None else pid):
        try:
            with open(f"/proc/{p}/stat", encoding="ascii") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return ticks / _TICK


_STARTED: dict[str, float] = {}


def pytest_runtest_logstart(nodeid: str, location: Any) -> None:
    """Before a test's setup (module fixtures made for it count in it)."""
    _STARTED[nodeid] = tree_cpu()


@pytest.hookimpl(tryfirst=True)  # before any implementation that returns the report
def pytest_runtest_makereport(item: Any, call: Any) -> None:
    """After a test's teardown, before its report: the CPU as a JUnit property."""
    if call.when == "teardown" and item.nodeid in _STARTED:
        spent = tree_cpu() - _STARTED.pop(item.nodeid)
        item.user_properties.append(("cpu", f"{spent:.2f}"))


def per_file(path: str) -> tuple[dict[str, float], Counter[str], dict[str, float]]:
    """Seconds, tests and CPU seconds per test file (``tests/test_x.py``; ``README.md`` for its
    doctest)."""
    seconds: dict[str, float] = {}
    tests: Counter[str] = Counter()
    cpu: dict[str, float] = {}
    for case in ET.parse(path).iter("testcase"):  # noqa: S314 - our own run's report
        name = case.get("classname") or "?"
        parts = name.split(".")
        file = f"tests/{parts[1]}.py" if parts[0] == "tests" and len(parts) > 1 else parts[0]
        seconds[file] = seconds.get(file, 0.0) + float(case.get("time") or 0)
        tests[file] += 1
        for prop in case.iter("property"):
            if prop.get("name") == "cpu":
                cpu[file] = cpu.get(file, 0.0) + float(prop.get("value") or 0)
    return seconds, tests, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junitxml", help="the run's --junitxml file")
    parser.add_argument("--top", type=int, default=40, help="how many files to list")
    parser.add_argument("--by", choices=("time", "cpu"), default="time", help="the order")
    args = parser.parse_args(argv)
    seconds, tests, cpu = per_file(args.junitxml)
    total = sum(seconds.values())
    used = f", {sum(cpu.values()):.0f} s CPU" if cpu else ""
    print(f"{total:.0f} s{used} in {sum(tests.values())} tests, {len(seconds)} files")
    order = cpu if args.by == "cpu" else seconds
    for file in sorted(seconds, key=lambda f: -order.get(f, 0.0))[: args.top]:
        spent = f" {cpu.get(file, 0.0):7.1f} s CPU" if cpu else ""
        print(f"{seconds[file]:8.1f} s{spent} {tests[file]:5d} tests  {file}")
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
