"""What an outside probe broke (issue 13), item by item: does each fix hold?

Every item of the probe has regression tests that failed on the main it was found on; they run
on every store (the in-memory fake and SQLite). This module runs them in one pytest process
(from a source checkout: the tests are not in the wheel) and reports per item: "holds" when
each of its tests passed, "BROKEN" with the failing tests otherwise.

    python -m api.bench.hardening_probes          # or as part of api.bench.reliability_report
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Item:
    number: int
    title: str
    #: pytest selections (a file, or file::test-name prefix)
    tests: tuple[str, ...]


ITEMS = (
    Item(
        1,
        "Rate limits keyed on the identity, the form's creation and login limited",
        ("tests/test_hardening_limits.py",),
    ),
    Item(
        2,
        "Storage failures are 503 with Retry-After, /health says so",
        ("tests/test_reliability_unavailable.py",),
    ),
    Item(3, "Names are plain text in every chart", ("tests/test_dashboard_markup.py",)),
    Item(
        4,
        "Unencodable text and out-of-range dates are 422",
        ("tests/test_hardening_input.py",),
    ),
    Item(
        5, "Idempotency keys belong to the credential or client", ("tests/test_hardening_keys.py",)
    ),
    Item(
        6,
        "Start-up and folder errors: one line, the real cause; instance data per database",
        ("tests/test_hardening_startup.py",),
    ),
    Item(
        7,
        "Sessions can be revoked; no token hash in the cookie",
        ("tests/test_hardening_sessions.py",),
    ),
    Item(
        8,
        "Names normalized, invisible/bidi/look-alike names refused, clean reasons",
        ("tests/test_hardening_names.py",),
    ),
    Item(
        9,
        "Contract slips: dates, unknown query parameters, examples, clean stop",
        ("tests/test_hardening_contract.py", "tests/test_api_contract.py"),
    ),
)


@dataclass
class Result:
    item: Item
    passed: int = 0
    failed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return self.passed > 0 and not self.failed and not self.missing


def _file_of(selection: str) -> str:
    return selection.split("::", 1)[0]


def run(items: tuple[Item, ...] = ITEMS) -> list[Result]:
    """Run every item's tests in one pytest process; the results per item."""
    results = [Result(item) for item in items]
    files = sorted({_file_of(s) for item in items for s in item.tests})
    present = [f for f in files if (ROOT / f).exists()]
    for result in results:
        result.missing = [s for s in result.item.tests if _file_of(s) not in present]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", f"--junitxml={report}", *present],
            cwd=ROOT,
            capture_output=True,
            check=False,
        )  # fmt: skip
        cases = ET.parse(report).getroot().iter("testcase") if report.exists() else iter(())
        for case in cases:
            path = case.get("classname", "").replace(".", "/") + ".py"
            name = f"{path}::{case.get('name', '')}"
            bad = any(case.find(tag) is not None for tag in ("failure", "error"))
            for result in results:
                if any(name.startswith(s) for s in result.item.tests):
                    if bad:
                        result.failed.append(name)
                    elif case.find("skipped") is None:
                        result.passed += 1
    return results


def render(results: list[Result]) -> str:
    lines = ["Issue 13: what an outside probe broke, item by item"]
    for r in results:
        verdict = "holds" if r.holds else "BROKEN"
        detail = f"{r.passed} checks passed"
        if r.failed:
            detail += f"; failed: {', '.join(r.failed[:3])}"
        if r.missing:
            detail += f"; no tests at {', '.join(r.missing)}"
        lines.append(f"  {r.item.number}. {r.item.title:<78} {verdict}  ({detail})")
    return "\n".join(lines)


def main() -> int:
    results = run()
    print(render(results))
    return 0 if all(r.holds for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
