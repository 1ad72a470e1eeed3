"""The rules engine in the phone's browser: what it weighs and how long it takes to start.

Run: ``python -m api.bench.engine_browser_bench [--runs 2]`` from a checkout (needs Debian's
``chromium``). It starts ``schocken serve`` (its defaults) on a temporary SQLite file, makes a
Stammtisch and a game through the REST API, and opens the game page in headless Chromium
(390×664) through the game's invite link, as a second phone would the first time:

* **page**: the bytes the game page's first visit transferred before the engine loads (every
  response of the page's own requests except ``/engine/…``, headers included: CDP
  ``Network.loadingFinished``), and its first contentful paint; target ≤ 150 KB;
* **engine**: the bytes of the engine's files as served to a browser that takes Brotli and to
  one that takes only gzip (Chromium over plain HTTP may not ask for Brotli): the worker
  script, the Pyodide runtime and standard library, and the engine bundle;
* **cold**: a new context (empty caches) — from the navigation's start until
  ``SchockenEngine.ready`` resolved, and the engine's own split (runtime loaded, bundle
  unpacked, ``api.table.browser`` imported);
* **warm**: the same page visited again in that context (the service worker now controls it
  and holds the engine's files; the browser compiled the WebAssembly before).

Each without and with Chromium's 4× CPU throttling (CDP ``Emulation.setCPUThrottlingRate`` on
the page's session; whether Chromium applies it to the engine's Web Worker as well is
Chromium's matter: compare the figures). Medians of ``--runs`` runs, printed with the load
average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .api_bench import start_server, wait_ready
from .dashboard_bench import launch
from .form_bench import Table
from .loadgen import free_port

PAGE_KB = 150
READY = "() => window.SchockenEngine.ready.then(() => ({...window.SchockenEngine.timings}))"
#: milliseconds from the navigation's start to the moment the engine is ready, in the page
MARK_READY = """
(function () {
  function watch() {
    if (!window.SchockenEngine) return;
    window.SchockenEngine.ready.then(function () { window.__engineReady = performance.now(); });
  }
  document.addEventListener("DOMContentLoaded", watch);
})();
"""
FCP = "() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0"


@dataclass(frozen=True, slots=True)
class Start:
    ready_ms: float  # from the navigation's start to SchockenEngine.ready
    runtime_ms: float
    bundle_ms: float
    import_ms: float
    page_bytes: int  # the page's own requests, /engine/ excluded
    first_paint_ms: float


class Phone:
    """A new browser context (empty caches) at 390×664, with a CDP session on its page."""

    def __init__(self, browser: Any, base: str, cpu: float) -> None:
        self.context = browser.new_context(
            viewport={"width": 390, "height": 664}, is_mobile=True, has_touch=True,
            locale="de-DE", base_url=base,
        )  # fmt: skip
        self.context.set_default_timeout(180_000)
        self.context.add_init_script(MARK_READY)
        self.page = self.context.new_page()
        self.cdp = self.context.new_cdp_session(self.page)
        self.cdp.send("Network.enable")
        self.cdp.send("Emulation.setCPUThrottlingRate", {"rate": cpu})
        self._urls: dict[str, str] = {}
        self._received: dict[str, int] = {}
        self.cdp.on("Network.requestWillBeSent", self._sent)
        self.cdp.on("Network.loadingFinished", self._finished)

    def _sent(self, event: dict[str, Any]) -> None:
        self._urls[event["requestId"]] = event["request"]["url"]

    def _finished(self, event: dict[str, Any]) -> None:
        self._received[event["requestId"]] = int(event["encodedDataLength"])

    def visit(self, url: str) -> Start:
        self._received.clear()
        self.page.goto(url, wait_until="load")
        timings = self.page.evaluate(READY)
        self.page.wait_for_function("() => window.__engineReady !== undefined")
        ready = float(self.page.evaluate("window.__engineReady"))
        self.page.wait_for_timeout(300)  # the last loadingFinished events
        page_bytes = sum(
            size
            for request, size in self._received.items()
            if "/engine/" not in self._urls.get(request, "")
        )
        return Start(
            ready,
            float(timings["runtime"]),
            float(timings["bundle"]),
            float(timings["import"]),
            page_bytes,
            float(self.page.evaluate(FCP)),
        )

    def close(self) -> None:
        self.context.close()


def engine_bytes(base: str, files: list[str], encoding: str) -> int:
    """The engine's files as served to a browser that accepts ``encoding`` (body bytes)."""
    total = 0
    for path in files:
        ask = urllib.request.Request(base + path, headers={"Accept-Encoding": encoding})
        with urllib.request.urlopen(ask, timeout=120) as answer:
            total += len(answer.read())  # urllib does not decode: the bytes as sent
    return total


def invite_link(browser: Any, table: Table, game: str) -> tuple[str, list[str]]:
    """The game's invite link and the engine's files (as the page names them), read by a
    phone logged in with the key."""
    context = browser.new_context(base_url=table.base)
    page = context.new_page()
    page.goto("/")
    page.fill("#login-slug", table.slug)
    page.fill("#login-token", table.token)
    page.get_by_role("button", name="Öffnen").click()
    page.wait_for_load_state("load")
    page.goto(game)
    link = page.locator("#invite-link").text_content() or ""
    files = (page.locator("meta[name=schocken-engine]").get_attribute("data-files") or "").split()
    context.close()
    return link, files


def _median(values: list[float]) -> float:
    return statistics.median(values)


def measure(browser: Any, link: str, cpu: float, runs: int) -> tuple[list[Start], list[Start]]:
    cold, warm = [], []
    for _ in range(runs):
        phone = Phone(browser, link.split("/einladung/")[0], cpu)
        try:
            cold.append(phone.visit(link))
            game = phone.page.url
            phone.page.wait_for_timeout(1000)  # the service worker keeps the engine's files
            warm.append(phone.visit(game))
        finally:
            phone.close()
    return cold, warm


def _row(label: str, starts: list[Start]) -> str:
    def m(attr: str) -> float:
        return _median([getattr(s, attr) for s in starts])

    return (
        f"{label:<16} {m('ready_ms'):>9.0f} {m('runtime_ms'):>9.0f} {m('bundle_ms'):>8.0f}"
        f" {m('import_ms'):>8.0f} {m('first_paint_ms'):>8.0f} {m('page_bytes') / 1000:>9.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="cold and warm starts per CPU rate")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="engine-browser-bench-") as tmp:
        port = free_port()
        server = start_server(port, Path(tmp) / "bench.sqlite3", "default")
        try:
            wait_ready(port)
            table = Table(f"http://127.0.0.1:{port}")
            game = table.new_game()
            with sync_playwright() as pw:
                browser = launch(pw)
                link, files = invite_link(browser, table, game)
                sizes = {e: engine_bytes(table.base, files, e) for e in ("br, gzip", "gzip")}
                results = {cpu: measure(browser, link, cpu, args.runs) for cpu in (1.0, 4.0)}
                browser.close()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"the rules engine in Chromium (Pyodide), game page via invite link, {args.runs} runs")
    print(
        f"engine files ({len(files)}): {sizes['br, gzip'] / 1e6:.2f} MB with Brotli, "
        f"{sizes['gzip'] / 1e6:.2f} MB with gzip only (transferred, compressed)"
    )
    print(f"{'':<16} {'ready ms':>9} {'runtime':>9} {'bundle':>8} {'import':>8} {'FCP ms':>8}"
          f" {'page KB':>9}")  # fmt: skip
    for cpu, (cold, warm) in results.items():
        rate = f"{cpu:.0f}× CPU"
        print(_row(f"cold, {rate}", cold))
        print(_row(f"warm, {rate}", warm))
    print("ready: from the navigation's start; runtime/bundle/import: inside the worker;")
    print(f"page KB: the page's own requests but /engine/ (first visit target ≤ {PAGE_KB} KB)")
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
