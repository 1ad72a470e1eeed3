"""How many tests the default run has, by kind, and of the per-store ones by store:
``python tests/count_tests.py`` from the repository root (it collects twice, ~1 min).

A test's kind is its file's (the first pattern below that matches); the browser tests are the
ones marked ``browser``, whatever their file."""

from __future__ import annotations

import fnmatch
import re
import subprocess
import sys
from collections import Counter

#: file patterns per kind, the first match wins
KINDS = [
    ("rules engine", ["test_rules_*", "test_cli_engine.py"]),
    (
        "reliability/fault",
        [
            "test_reliability_*",
            "test_pg_*",
            "test_webhooks_outbox.py",
            "test_webhooks_isolation.py",
            "test_webhooks_sender.py",
            "test_api_serve.py",
            "test_api_events_serve.py",
            "test_api_events_hub.py",
            "test_api_slow_clients.py",
            "test_stats_refresher_stop.py",
        ],
    ),  # fmt: skip
    (
        "storage",
        [
            "test_storage_*",
            "test_stats_readmodel.py",
            "test_stats_postgres.py",
            "test_stats_queries.py",
            "test_webhooks_storage.py",
        ],
    ),  # fmt: skip
    (
        "docs/quality",
        [
            "README.md",
            "test_docs.py",
            "test_quality.py",
            "test_architecture.py",
            "test_packaging.py",
            "test_mutation_config.py",
            "*vocabulary.py",
            "test_schemas_*",
            "test_config.py",
        ],
    ),  # fmt: skip
    ("HTTP/web", ["*"]),
]
STORE = re.compile(r"[\[-](memory|sqlite|postgresql)[\]-]")


def collect(marks: str = "not slow") -> list[str]:
    """The node ids of the default run (its addopts, but one -q: ids, not counts per file)."""
    argv = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-o", "addopts=",
            "--doctest-glob=README.md", "-p", "no:cacheprovider", "-m", marks]  # fmt: skip
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if "::" in line]


def kind(test: str) -> str:
    name = test.split("::", 1)[0].rsplit("/", 1)[-1]
    return next(k for k, patterns in KINDS if any(fnmatch.fnmatch(name, p) for p in patterns))


def main() -> None:
    tests = collect()
    browser = set(collect("browser and not slow"))
    counts: Counter[str] = Counter()
    stores: Counter[tuple[str, str]] = Counter()
    for test in tests:
        k = "browser" if test in browser else kind(test)
        counts[k] += 1
        found = STORE.search(test)
        if found:
            stores[k, found.group(1)] += 1
    print(f"{len(tests)} tests")
    for k, n in counts.most_common():
        per = ", ".join(f"{s} {stores[k, s]}" for s in ("memory", "sqlite", "postgresql"))
        print(f"  {k:18} {n:5}   (by store: {per})")


if __name__ == "__main__":
    main()
