"""The built site in headless Chromium (Debian's, through Playwright): every page renders its
charts with no console error and no request anywhere but file:// (or 127.0.0.1 when the server
serves it). Screenshots go to artifacts/dashboard/ (phone and desktop width).

Without Chromium the tests are skipped, unless ``CI`` is set: then they fail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from test_api_serve import Server
from test_web_browser import browser_type_launch_args  # noqa: F401 - Debian's Chromium, skip/fail

from api.app import create_app
from api.bench.snapshot import connection_for
from api.storage import MemoryStore
from dashboard.demo import create_demo
from dashboard.site import build_site
from dashboard.stats import Statistics

pytestmark = pytest.mark.browser

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts" / "dashboard"
PAGES = ["index.html", "demo/index.html", "demo/2024.html", "demo/2025.html"]


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory) -> tuple[Path, dict[int, list[str]]]:
    """Two demo years built into a folder; the Verlierer des Jahres of each year."""
    out = tmp_path_factory.mktemp("site")
    store = MemoryStore()
    create_demo(store, years=2, first_year=2024, seed=11)
    with connection_for(store.repository()) as cur:
        build_site(cur, out)
        stats = Statistics(cur)
        losers = {}
        for year in (2024, 2025):
            games = stats.overview(1, year)["games"]
            losers[year] = [r["name"] for r in stats.verlierer(1, year, games)["verlierer"]]
    return out, losers


class Visit:
    """One browser context that records console errors and refuses every other host."""

    def __init__(self, browser: Any, width: int, allowed: set[str]) -> None:
        self.allowed = allowed
        self.outside: list[str] = []
        self.errors: list[str] = []
        self.context = browser.new_context(
            viewport={"width": width, "height": 900}, device_scale_factor=1, locale="de-DE"
        )
        self.context.set_default_timeout(15000)
        self.context.route("**/*", self._guard)
        self.page = self.context.new_page()
        self.page.on("pageerror", lambda err: self.errors.append(str(err)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)

    def _guard(self, route: Any) -> None:
        url = urlsplit(route.request.url)
        if url.scheme in ("file", "data") or url.hostname in self.allowed:
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def open(self, url: str) -> int:
        """Load a page and wait until every chart is drawn; returns the number of charts."""
        self.page.goto(url)
        charts = self.page.locator(".js-plotly-plot").count()
        self.page.wait_for_function(
            "n => document.querySelectorAll('.js-plotly-plot .main-svg').length >= n", arg=charts
        )
        return charts

    def close(self) -> None:
        self.context.close()


@pytest.mark.parametrize("width", [390, 1280])
def test_every_page_renders_from_file_without_errors_or_network(browser, demo_site, width):
    out, losers = demo_site
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    visit = Visit(browser, width, allowed=set())
    try:
        for page in PAGES:
            charts = visit.open((out / page).as_uri())
            assert charts >= (0 if page == "index.html" else 5), page
            if page.startswith("demo/20"):
                year = int(page[5:9])
                big = visit.page.locator("#verlierer-des-jahres .big").inner_text()
                assert big == " und ".join(losers[year])
            if width == 390:  # nothing wider than the phone but the scrollable tables
                overflow = visit.page.evaluate(
                    "document.documentElement.scrollWidth - document.documentElement.clientWidth"
                )
                assert overflow <= 0, page
            name = page.replace("/", "-").removesuffix(".html")
            visit.page.screenshot(path=ARTIFACTS / f"{name}-{width}.png", full_page=True)
        assert visit.errors == []
        assert visit.outside == []
    finally:
        visit.close()


def test_the_server_serves_the_dashboard_to_a_browser(browser, tmp_path):
    """`schocken serve --workers 2` renders the pages from the read model in either process."""
    db = tmp_path / "data" / "s.sqlite3"
    app = create_app({"DATABASE": str(db), "DASHBOARD_DIR": str(tmp_path / "site")})
    create_demo(app.extensions["schocken"].store, years=1, first_year=2025, seed=2)
    app.extensions["schocken"].store.close()
    served = Server(db, workers=2, env={"SCHOCKEN_DASHBOARD_DIR": str(tmp_path / "site")})
    visit = Visit(browser, 390, allowed={"127.0.0.1"})
    try:
        base = f"{served.base}/dashboard/"
        assert visit.open(base) == 0
        visit.page.get_by_role("link", name="Demo-Stammtisch „Zur Post“").click()
        visit.page.get_by_role("link", name="2025", exact=True).first.click()
        visit.page.wait_for_url("**/demo/2025.html")
        assert visit.open(visit.page.url) >= 5
        assert "Verlierer des Jahres 2025" in visit.page.inner_text("#verlierer-des-jahres")
        assert visit.errors == [] and visit.outside == []
    finally:
        visit.close()
        served.stop()
