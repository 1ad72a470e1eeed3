"""Where a test run's time goes: the seconds of each test file, from a run's JUnit XML.

Run the suite with ``pytest --durations=80 --junitxml=/tmp/ts.xml`` (under
``/usr/bin/time -v`` for the run's CPU time), then ``python -m api.bench.suite_times
/tmp/ts.xml [--top 40]``. It prints the tests' summed time (setup, call and teardown: a
module fixture counts in its first test), then the files, longest first, with their number
of tests, and the load average now. On 2 workers the run's wall time is at least half the sum,
and at least the longest file's (``--dist loadfile``: a file stays on one worker).
"""

from __future__ import annotations

import argparse
import os
import xml.etree.ElementTree as ET
from collections import Counter


def per_file(path: str) -> tuple[dict[str, float], Counter[str]]:
    """Seconds and tests per test file (``tests/test_x.py``; ``README.md`` for its doctest)."""
    seconds: dict[str, float] = {}
    tests: Counter[str] = Counter()
    for case in ET.parse(path).iter("testcase"):  # noqa: S314 - our own run's report
        name = case.get("classname") or "?"
        parts = name.split(".")
        file = f"tests/{parts[1]}.py" if parts[0] == "tests" and len(parts) > 1 else parts[0]
        seconds[file] = seconds.get(file, 0.0) + float(case.get("time") or 0)
        tests[file] += 1
    return seconds, tests


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junitxml", help="the run's --junitxml file")
    parser.add_argument("--top", type=int, default=40, help="how many files to list")
    args = parser.parse_args(argv)
    seconds, tests = per_file(args.junitxml)
    total = sum(seconds.values())
    print(f"{total:.0f} s in {sum(tests.values())} tests, {len(seconds)} files")
    for file, spent in sorted(seconds.items(), key=lambda item: -item[1])[: args.top]:
        print(f"{spent:8.1f} s {tests[file]:5d} tests  {file}")
    print("load average", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
