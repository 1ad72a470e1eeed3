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
Chromium's matter: compare the figures). Medians of ``--runs`` runs.

Then **tap to the next turn's input usable**, four players, ``--turns`` turns each on a new
game (dice cycling 653, 542, 421, 631, 532, one throw), by a phone logged in with the key
whose service worker keeps the page and the engine's files:

* **offline** (``context.set_offline``, the engine ready): in the page, ``performance.now()``
  from the click on the throw button to the moment a new ``#eingabe`` with unchecked die rows
  is in the DOM and the waiting list grew by one (a ``MutationObserver`` started right before
  the click), and to the next animation frame after it; without and with 4× CPU throttling;
* **online** on loopback, nothing waiting (``schocken.queue`` = ``never``: the plain form):
  from the click to the ``load`` event of the next page (``performance.timeOrigin`` +
  ``performance.now()`` in both documents); without throttling.

p50/p90 of the turns; the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import urllib.request
from dataclasses import dataclass
from typing import Any

from .dashboard_bench import launch
from .form_bench import Table, log_in, served_table

PAGE_KB = 150
READY = "() => window.SchockenEngine.ready.then(() => ({...window.SchockenEngine.timings}))"
#: milliseconds from the navigation's start to the moment the engine is ready, in the page
MARK_READY = """
(function () {
  function watch() {
    if (!window.SchockenEngine) return;
    // offline.js starts the engine only when the phone needs it: here always, as
    // data-start="auto" would (after the first paint, when the page is idle)
    window.SchockenEngine.start();
    window.SchockenEngine.ready.then(function () { window.__engineReady = performance.now(); });
  }
  document.addEventListener("DOMContentLoaded", watch);
})();
"""
FCP = "() => (performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0"
TAP_DICE = ["653", "542", "421", "631", "532"]
#: offline: the click on the throw button, then milliseconds until a new #eingabe with unchecked
#: die rows is in the DOM and the waiting list grew by one ("dom"), and the next frame ("frame")
TAP_OFFLINE = """
(throws) => new Promise((resolve, reject) => {
  const old = document.getElementById("eingabe");
  const button = Array.from(old.querySelectorAll("button.throw"))
    .find((b) => b.textContent.trim() === throws);
  if (!button) { reject(new Error("no button " + throws)); return; }
  const before = document.querySelectorAll("#offline-list li").length;
  let t0 = 0;
  const usable = () => {
    const form = document.getElementById("eingabe");
    if (!form || form === old) return false;
    const rows = form.querySelectorAll(".die-row");
    if (!rows.length || form.querySelector(".die-row input:checked")) return false;
    return document.querySelectorAll("#offline-list li").length === before + 1;
  };
  const timer = setTimeout(() => {
    observer.disconnect();
    const error = document.querySelector("#eingabe .error");
    reject(new Error("no new input after 60 s: " + (error ? error.textContent : "")));
  }, 60000);
  const observer = new MutationObserver(() => {
    if (!usable()) return;
    const dom = performance.now() - t0;
    observer.disconnect();
    clearTimeout(timer);
    requestAnimationFrame(() => resolve({ dom: dom, frame: performance.now() - t0 }));
  });
  observer.observe(document.documentElement, { childList: true, subtree: true });
  t0 = performance.now();
  button.click();
})
"""
#: online: the click (its time since the epoch kept in sessionStorage), in a task of its own so
#: that the evaluation returns before the navigation
TAP_ONLINE = """
(throws) => {
  const button = Array.from(document.querySelectorAll("#eingabe button.throw"))
    .find((b) => b.textContent.trim() === throws);
  if (!button) throw new Error("no button " + throws);
  window.__oldPage = true;
  setTimeout(() => {
    sessionStorage.setItem("bench.tap", String(performance.timeOrigin + performance.now()));
    button.click();
  }, 0);
}
"""
#: every document: the time since the epoch of its load event
MARK_LOAD = """
window.addEventListener("load", function () {
  window.__loadedAt = performance.timeOrigin + performance.now();
});
"""
LOADED = """() => {
  const rows = document.querySelectorAll("#eingabe .die-row");
  return !window.__oldPage && window.__loadedAt !== undefined && rows.length > 0 &&
    !document.querySelector("#eingabe .die-row input:checked");
}"""


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
    log_in(page, table)
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


def _pick_dice(page: Any, dice: str) -> None:
    for row, pip in enumerate(dice, start=1):
        page.locator(f"#eingabe .die-row:nth-of-type({row}) label.die", has_text=pip).click()


def tapping_phone(browser: Any, table: Table, cpu: float) -> tuple[Any, Any, str]:
    """A new context logged in with the key, on a new game whose page the service worker
    controls and whose engine files it keeps; CPU throttled by ``cpu``."""
    context = browser.new_context(
        viewport={"width": 390, "height": 664}, is_mobile=True, has_touch=True,
        locale="de-DE", base_url=table.base,
    )  # fmt: skip
    context.set_default_timeout(180_000)
    context.add_init_script(MARK_LOAD)
    page = context.new_page()
    log_in(page, table)
    game = table.new_game()
    page.goto(game)
    page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    page.reload()  # now through the service worker, as on a phone that came back
    page.wait_for_function("() => navigator.serviceWorker.controller !== null")
    page.wait_for_function(
        """async () => {
          const wanted = document.querySelector('meta[name="schocken-engine"]')
            .getAttribute("data-files").split(" ").filter(Boolean).length;
          const cache = await caches.open("schocken-engine-v1");
          return (await cache.keys()).length >= wanted;
        }"""
    )
    cdp = context.new_cdp_session(page)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": cpu})
    return context, page, game


def taps_offline(browser: Any, table: Table, cpu: float, turns: int) -> list[tuple[float, float]]:
    """(DOM, next frame) milliseconds of each offline tap, the engine ready."""
    context, page, _game = tapping_phone(browser, table, cpu)
    try:
        context.set_offline(True)  # offline.js starts the engine on the "offline" event
        page.wait_for_function("() => document.documentElement.dataset.engine === 'ready'")
        times = []
        for turn in range(turns):
            _pick_dice(page, TAP_DICE[turn % len(TAP_DICE)])
            took = page.evaluate(TAP_OFFLINE, "1 Wurf")
            times.append((float(took["dom"]), float(took["frame"])))
        waiting = page.locator("#offline-list li").count()
        if waiting != turns:
            raise SystemExit(f"offline: {waiting} entries waiting after {turns} taps")
        return times
    finally:
        context.close()


def taps_online(browser: Any, table: Table, turns: int) -> list[float]:
    """Milliseconds from each click to the next page's load (the plain form's POST)."""
    context, page, game = tapping_phone(browser, table, 1.0)
    try:
        page.evaluate("localStorage.setItem('schocken.queue', 'never')")
        times = []
        for turn in range(turns):
            _pick_dice(page, TAP_DICE[turn % len(TAP_DICE)])
            with page.expect_navigation(wait_until="load"):
                page.evaluate(TAP_ONLINE, "1 Wurf")
            page.wait_for_function(LOADED)
            loaded = float(page.evaluate("window.__loadedAt"))
            tapped = float(page.evaluate("sessionStorage.getItem('bench.tap')"))
            times.append(loaded - tapped)
        recorded = _recorded_turns(table, game)
        if recorded != turns:
            raise SystemExit(f"online: the server recorded {recorded} of {turns} turns")
        return times
    finally:
        context.close()


def _recorded_turns(table: Table, game: str) -> int:
    ask = urllib.request.Request(
        f"{table.base}/api/v1/stammtische/{table.slug}/games/{game.rsplit('/', 1)[1]}/log",
        headers={"Authorization": f"Bearer {table.token}"},
    )
    with urllib.request.urlopen(ask, timeout=30) as answer:
        return sum(1 for e in json.loads(answer.read())["events"] if "dice" in e)


def _quantile(values: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of values."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


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
    parser.add_argument("--turns", type=int, default=20, help="taps per tap measurement")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()
    with served_table("engine-browser-bench-") as table:
        game = table.new_game()
        with sync_playwright() as pw:
            browser = launch(pw)
            link, files = invite_link(browser, table, game)
            sizes = {e: engine_bytes(table.base, files, e) for e in ("br, gzip", "gzip")}
            results = {cpu: measure(browser, link, cpu, args.runs) for cpu in (1.0, 4.0)}
            offline = {cpu: taps_offline(browser, table, cpu, args.turns) for cpu in (1.0, 4.0)}
            online = taps_online(browser, table, args.turns)
            browser.close()
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
    print()
    print(f"tap to the next turn's input usable, 4 players, {args.turns} turns each (ms)")
    print(f"{'':<22} {'p50':>7} {'p90':>7} {'max':>7}")
    for cpu, times in offline.items():
        for what, index in (("DOM", 0), ("frame", 1)):
            values = [t[index] for t in times]
            print(
                f"{f'offline, {cpu:.0f}× CPU, {what}':<22} {_quantile(values, 0.5):>7.1f}"
                f" {_quantile(values, 0.9):>7.1f} {max(values):>7.1f}"
            )
    print(
        f"{'online, 1× CPU, load':<22} {_quantile(online, 0.5):>7.1f}"
        f" {_quantile(online, 0.9):>7.1f} {max(online):>7.1f}"
    )
    print("offline DOM: click → new #eingabe (unchecked dice) and the waiting list one longer;")
    print("frame: the next animation frame after it; online: click → the next page's load")
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*load_before))
    print("load average after:  {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
