"""axe-core in the browser tests: the violations of impact serious or critical on a page.

axe-core 4.14.1 is vendored in ``tests/fixtures/axe-core`` (its README says whence) and injected
with ``page.add_script_tag``; the pages of the form forbid inline and injected scripts by their
Content-Security-Policy, so the page must belong to a context made with ``bypass_csp=True``
(:func:`axe_context`). Charts drawn by the dashboard's script are waited for, so axe sees what
a reader sees, and the TV's event stream is waited for, so its board is the live one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

AXE = Path(__file__).resolve().parent / "fixtures" / "axe-core" / "axe.min.js"

#: the impacts that fail a test
SERIOUS = ("serious", "critical")

#: the screen widths every page is checked at: a phone and a desk
WIDTHS = (360, 1440)

#: every chart of the page drawn and the TV's event stream open (other pages pass at once)
READY = (
    "document.querySelectorAll('.js-plotly-plot .main-svg').length >= "
    "document.querySelectorAll('script[data-chart]').length"
    " && ['open', undefined].includes(document.body.dataset.stream)"
)


def axe_context(browser: Any, base_url: str, width: int = WIDTHS[0], **kw: Any) -> Any:
    """A browser context whose pages accept the injected axe-core (CSP bypassed)."""
    return browser.new_context(
        bypass_csp=True,
        viewport={"width": width, "height": 800},
        device_scale_factor=1,
        locale="de-DE",
        base_url=base_url,
        **kw,
    )


def serious_violations(page: Any) -> list[str]:
    """axe-core over the loaded ``page``: one line per violation of impact serious or critical,
    with its rule, its impact and the elements it found (CSS selectors)."""
    page.wait_for_load_state("load")
    page.wait_for_function(READY)
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} – {[n['target'] for n in v['nodes']]}"
        for v in result["violations"]
        if v["impact"] in SERIOUS
    ]


def check_page(page: Any, path: str, name: str, h1: str) -> None:
    """Open ``path`` in ``page`` (at its present width) and fail with every serious or
    critical violation axe-core finds there, or unless the page has the one heading ``h1``
    (axe rates a missing h1 only "moderate")."""
    page.goto(path)
    width = page.viewport_size["width"]
    found = serious_violations(page)
    assert found == [], f"{name} at {width} px: " + "\n".join(found)
    headings = [" ".join(t.split()) for t in page.locator("h1").all_inner_texts()]
    assert headings == [h1], f"{name} at {width} px: h1 {headings}"
