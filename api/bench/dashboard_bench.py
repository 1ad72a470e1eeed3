"""Dashboard benchmark: what a phone downloads for a year page, and how soon it sees a chart.

Run: ``python -m api.bench.dashboard_bench [--years 2] [--runs 3]`` (needs Debian's
``chromium``). It fills a temporary SQLite file with the demo Stammtisch, starts ``schocken
serve`` on it and opens the demo's last year page in headless Chromium at 360×640, each run in
a fresh browser context (an empty cache):

1. first visit: the bytes on the wire (response headers and bodies as received, i.e.
   compressed: the sum of CDP ``Network.loadingFinished.encodedDataLength``) and the time from
   the start of the navigation to the first chart drawn (a ``.main-svg`` of Plotly in the page);
2. repeat visit: the same page opened again after the index (HTML revalidated, assets kept);

once on loopback and once under Chromium's "Fast 3G" preset (``Network.emulateNetworkConditions``:
1.6 Mbit/s down, 750 kbit/s up, 562.5 ms round trip). Targets: first visit ≤ 800 KB, repeat
visit ≤ 60 KB, the first chart on Fast 3G ≤ 4 s. Medians of the runs are printed with the load
average (the machine is shared: a busy one draws later).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .api_bench import start_server, wait_ready
from .loadgen import free_port

#: Chromium DevTools' "Fast 3G" preset, the numbers as the issue states them
FAST_3G = {
    "offline": False,
    "latency": 562.5,  # ms round trip
    "downloadThroughput": 1.6e6 / 8,  # bytes/s
    "uploadThroughput": 750e3 / 8,
}
#: set window.__firstChart to the milliseconds since the navigation began when Plotly has drawn
FIRST_CHART = """
new MutationObserver((_, observer) => {
  if (document.querySelector(".js-plotly-plot .main-svg")) {
    window.__firstChart = performance.now();
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""
FIRST_KB, REPEAT_KB, FAST_3G_SECONDS = 800, 60, 4.0


@dataclass(frozen=True, slots=True)
class Visit:
    transferred: int  # bytes received, headers included
    requests: int
    first_chart: float  # seconds from the start of the navigation


class Phone:
    """One browser context at 360×640 (an empty cache) with its CDP session."""

    def __init__(self, browser: Any, network: dict[str, Any] | None = None) -> None:
        self.context = browser.new_context(
            viewport={"width": 360, "height": 640}, is_mobile=True, has_touch=True, locale="de-DE"
        )
        self.context.add_init_script(FIRST_CHART)
        self.page = self.context.new_page()
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("Network.enable")
        if network:
            self.cdp.send("Network.emulateNetworkConditions", network)
        self._received: dict[str, int] = {}
        self.cdp.on("Network.loadingFinished", self._finished)

    def _finished(self, event: dict[str, Any]) -> None:
        self._received[event["requestId"]] = int(event["encodedDataLength"])

    def visit(self, url: str, charts: bool = True) -> Visit:
        """Open ``url``, wait for its load event (and its first chart)."""
        self._received.clear()
        self.page.goto(url, wait_until="load", timeout=60_000)
        first = 0.0
        if charts:
            self.page.wait_for_function("window.__firstChart !== undefined", timeout=60_000)
            first = float(self.page.evaluate("window.__firstChart")) / 1000
        self.page.wait_for_timeout(200)  # the last loadingFinished events
        return Visit(sum(self._received.values()), len(self._received), first)

    def close(self) -> None:
        self.context.close()


def first_and_repeat(browser: Any, base: str, page: str, network: dict[str, Any] | None = None
                     ) -> tuple[Visit, Visit]:  # fmt: skip
    """The first visit of ``base + page`` in an empty cache, then (after the index) again."""
    phone = Phone(browser, network)
    try:
        first = phone.visit(base + page)
        phone.visit(base, charts=False)
        return first, phone.visit(base + page)
    finally:
        phone.close()


def warm_up(base: str, page: str) -> None:
    """The statistics refreshed and the assets compressed (once per server) before measuring."""
    from dashboard.assets import names

    for path in (page, *names().values()):
        ask = urllib.request.Request(base + path, headers={"Accept-Encoding": "br, gzip"})
        with urllib.request.urlopen(ask, timeout=120) as answer:
            answer.read()


def launch(playwright: Any) -> Any:
    path = shutil.which("chromium")
    if path is None:
        raise SystemExit("Debian's chromium is needed: apt-get install -y chromium")
    return playwright.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-gpu"])


def _demo_database(folder: Path, years: int) -> tuple[Path, int]:
    """A SQLite file with the demo; returns it and the demo's last year."""
    from api.app import create_app
    from dashboard.demo import create_demo

    db = folder / "bench.sqlite3"
    app = create_app({"STORAGE": "sqlite", "DATABASE": str(db)})
    store = app.extensions["schocken"].store
    try:
        create_demo(store, years=years, first_year=2026 - years, seed=7)
    finally:
        store.close()
    return db, 2025


def _row(label: str, runs: list[tuple[Visit, Visit]]) -> str:
    first = statistics.median(v.transferred for v, _ in runs) / 1000
    repeat = statistics.median(r.transferred for _, r in runs) / 1000
    chart = statistics.median(v.first_chart for v, _ in runs)
    again = statistics.median(r.first_chart for _, r in runs)
    return (f"{label:<10} {first:8.1f} KB {runs[0][0].requests:3d} req {chart:6.2f} s   "
            f"{repeat:6.1f} KB {runs[0][1].requests:3d} req {again:6.2f} s")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--years", type=int, default=2, help="years of demo games")
    parser.add_argument("--runs", type=int, default=3, help="fresh visits per network")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="dashboard-bench-") as tmp:
        db, year = _demo_database(Path(tmp), args.years)
        port = free_port()
        os.environ["SCHOCKEN_DASHBOARD_DIR"] = str(Path(tmp) / "site")
        server = start_server(port, db, "default")
        try:
            wait_ready(port)
            base, page = f"http://127.0.0.1:{port}/dashboard/", f"demo/{year}.html"
            warm_up(base, page)
            print(f"dashboard year page /dashboard/{page}, 360×640, median of {args.runs} runs")
            print(f"{'':<10} {'first visit: bytes, requests, first chart':<40}   repeat visit")
            with sync_playwright() as pw:
                browser = launch(pw)
                for label, network in (("loopback", None), ("Fast 3G", FAST_3G)):
                    runs = [
                        first_and_repeat(browser, base, page, network) for _ in range(args.runs)
                    ]
                    print(_row(label, runs), flush=True)
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"targets: first visit ≤ {FIRST_KB} KB, repeat ≤ {REPEAT_KB} KB, "
          f"first chart on Fast 3G ≤ {FAST_3G_SECONDS:.0f} s")  # fmt: skip
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
