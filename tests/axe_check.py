"""axe-core 4.14.1 in the browser tests: the accessibility rules a page breaks.

``tests/fixtures/axe-core/`` holds ``axe.min.js`` and its LICENSE (MPL-2.0) as npm ships them
(``npm pack axe-core@4.14.1``). The script is injected into the page under test with Playwright's
``add_script_tag``; the strict Content-Security-Policy of our pages forbids that, so the browser
context is made with ``bypass_csp=True`` (for this check only: the other tests keep the policy).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE = Path(__file__).resolve().parent / "fixtures" / "axe-core" / "axe.min.js"
#: the impacts that fail a page
SERIOUS = ("serious", "critical")

_RUN = """async (impacts) => {
  const result = await axe.run(document, { resultTypes: ["violations"] });
  return result.violations
    .filter((v) => impacts.includes(v.impact))
    .map((v) => `${v.impact} ${v.id}: ${v.help} – ` +
      v.nodes.slice(0, 5).map((n) => n.target.join(" ")).join(", "));
}"""


def axe_violations(page: Any, impacts: tuple[str, ...] = SERIOUS) -> list[str]:
    """The violations of ``impacts`` on the page as it is now, one line each (rule, help,
    up to five elements)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    return list(page.evaluate(_RUN, list(impacts)))
