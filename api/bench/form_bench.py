"""Pub form benchmark: the time from the tap on a throws button to the next turn's input.

Run: ``python -m api.bench.form_bench [--turns 30]`` (needs Debian's ``chromium``). It starts
``schocken serve`` (its defaults) on a temporary SQLite file, makes a Stammtisch with four
players through the REST API, logs a phone (headless Chromium, 390×664) in on the form and
enters turns: per turn the three dice are tapped (not timed), then the clock runs from the tap
on "1 Wurf" until the next turn's input is usable — the new page's DOM is ready (its deferred
scripts ran) and its throws buttons are visible. A game that ends is followed by a new one.

Two ways a turn travels:

* ``form``: the form's POST, its 303 and the new page (Post/Redirect/Get: two requests;
  localStorage ``schocken.queue = never``);
* ``queue``: the offline-first queue (``static/offline.js`` with localStorage
  ``schocken.queue = always``): the entry goes to IndexedDB, the input is free again at once,
  the queue sends it in the background and the page reloads with the server's board; the
  second figure is the time until that board is shown. On a slow link (a page that took
  over 400 ms to arrive) the form takes this way by itself: on "Fast 3G" the queue's figures
  are what the phone gets.

Each once on loopback (with the service worker, as on a phone) and once under Chromium's
"Fast 3G" preset (CDP ``Network.emulateNetworkConditions``: 1.6 Mbit/s down, 750 kbit/s up,
562.5 ms per request; without the service worker, whose own requests the emulation would not
slow down). "page" figures: from the click event to the new page's ready DOM, as the page's
clocks see them; "driver": as this script sees them, Playwright's click checks included.
Targets: p50 ≤ 150 ms on loopback, ≤ 1 s on Fast 3G. Printed with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .api_bench import start_server, wait_ready
from .dashboard_bench import FAST_3G, launch
from .loadgen import free_port

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
DICE = ["113", "653", "542", "421", "221", "654", "631", "542", "332", "611", "521", "444"]
LOOPBACK_MS, FAST_3G_MS = 150, 1000
#: in the page: the tap's moment (the click event's timestamp) kept across the navigation, and
#: the moment the new page's input is usable (its DOMContentLoaded handlers ran: the form's
#: scripts are in place); both as epoch milliseconds (``performance.timeOrigin`` + …)
MARKS = """
window.addEventListener("click", (event) => {
  if (event.target.closest && event.target.closest("button.throw")) {
    sessionStorage.setItem("bench.tap", String(performance.timeOrigin + event.timeStamp));
  }
}, true);
document.addEventListener("DOMContentLoaded", () => setTimeout(() => {
  window.__usable = performance.timeOrigin + performance.now();
}));
"""
#: the next turn's input is usable: a page whose DOM is ready and no entry is being sent
USABLE = "#eingabe:not(.is-sending) button.throw"


class Table:
    """A Stammtisch with four players through the REST API; new games on demand."""

    def __init__(self, base: str) -> None:
        self.base = base
        made = self.call("POST", "/api/v1/stammtische", {"name": "Bench"})
        self.slug, self.token = made["slug"], made["token"]
        for name in PLAYERS:
            self.call("POST", f"/api/v1/stammtische/{self.slug}/players", {"name": name})

    def call(self, method: str, path: str, body: Any) -> Any:
        request = urllib.request.Request(self.base + path, json.dumps(body).encode(), method=method)
        request.add_header("Content-Type", "application/json")
        if getattr(self, "token", None):
            request.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read())

    def new_game(self) -> str:
        body = {"players": PLAYERS, "starter": "Anna", "rules": {"preset": "standard"}}
        game = self.call("POST", f"/api/v1/stammtische/{self.slug}/games", body)
        return f"/s/{self.slug}/spiel/{game['id']}"


@contextmanager
def served_table(prefix: str) -> Iterator[Table]:
    """A server on a new SQLite file in a temporary folder, and a :class:`Table` on it; the
    server stops at the end."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        port = free_port()
        server = start_server(port, Path(tmp) / "bench.sqlite3", "default")
        try:
            wait_ready(port)
            yield Table(f"http://127.0.0.1:{port}")
        finally:
            server.terminate()
            server.wait(timeout=30)


def log_in(page: Any, table: Table) -> None:
    """Log ``page`` in to ``table`` with its key through the start page's form."""
    page.goto("/")
    page.fill("#login-slug", table.slug)
    page.fill("#login-token", table.token)
    page.get_by_role("button", name="Öffnen").click()
    page.wait_for_load_state("load")


class Phone:
    """A browser context at 390×664, logged in to the table, optionally on Fast 3G."""

    def __init__(self, browser: Any, table: Table, network: dict[str, Any] | None) -> None:
        self.table = table
        # CDP's network emulation applies to the page's requests, not to those its service
        # worker makes for it (the pages, network first): on Fast 3G the worker stays off
        self.context = browser.new_context(
            viewport={"width": 390, "height": 664}, is_mobile=True, has_touch=True,
            locale="de-DE", base_url=table.base,
            service_workers="block" if network else "allow",
        )  # fmt: skip
        self.context.set_default_timeout(30_000)
        self.context.add_init_script(MARKS)
        self.page = self.context.new_page()
        page = self.page
        log_in(page, table)
        self.open_game()
        if not network:
            page.evaluate("navigator.serviceWorker.ready.then(() => true)")
            page.reload()  # now controlled by the worker, as on a phone that came back
            page.wait_for_selector(USABLE)
        if network:
            cdp = self.context.new_cdp_session(page)
            cdp.send("Network.enable")
            cdp.send("Network.emulateNetworkConditions", network)

    def open_game(self) -> None:
        self.page.goto(self.table.new_game())
        self.page.wait_for_selector(USABLE)

    def tap_dice(self, dice: str) -> None:
        if not self.page.locator(USABLE).count():  # the game has ended
            self.open_game()
        for row, pip in enumerate(dice, start=1):
            self.page.locator(f".die-row:nth-of-type({row}) label.die", has_text=pip).click()

    def form_turn(self, dice: str) -> tuple[float, float]:
        """Seconds from the tap to the next page's usable input: as the page saw it (the
        click event to the new page's ready DOM), and as this driver saw it (Playwright's
        click with its checks, the navigation, the selector)."""
        self.tap_dice(dice)
        button = self.page.locator("button.throw[value='1']")
        start = time.perf_counter()
        with self.page.expect_navigation(wait_until="domcontentloaded"):
            button.click()
        self.page.wait_for_selector(USABLE)
        driver = time.perf_counter() - start
        self.page.wait_for_function("() => window.__usable !== undefined")
        seen = self.page.evaluate("window.__usable - Number(sessionStorage.getItem('bench.tap'))")
        return float(seen) / 1000, driver

    def queued_turn(self, dice: str) -> tuple[float, float]:
        """Seconds from the tap to the free input, and to the server's board."""
        self.tap_dice(dice)
        page = self.page
        button = page.locator("button.throw[value='1']")
        start = time.perf_counter()
        with page.expect_navigation(wait_until="domcontentloaded", timeout=60_000):
            button.click()
            page.wait_for_function(
                "() => !document.querySelector('#eingabe input[type=radio]:checked')"
            )
            free = time.perf_counter() - start
        page.wait_for_selector(USABLE)
        return free, time.perf_counter() - start

    def close(self) -> None:
        self.context.close()


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(values) * 1000:7.1f} ms  p95 {p95 * 1000:7.1f} ms"


def measure(browser: Any, table: Table, label: str, network: Any, turns: int) -> None:
    phone = Phone(browser, table, network)
    try:
        phone.page.evaluate("localStorage.setItem('schocken.queue', 'never')")
        phone.tap_dice(DICE[0])  # warm: the first POST of the session
        phone.page.locator("button.throw[value='1']").click()
        phone.page.wait_for_selector(USABLE)
        form = [phone.form_turn(DICE[i % len(DICE)]) for i in range(turns)]
        print(f"{label:<9} form  (POST, 303, page)   {_ms([f[0] for f in form])}")
        print(f"{label:<9} form, with the driver     {_ms([f[1] for f in form])}", flush=True)
        phone.page.evaluate("localStorage.setItem('schocken.queue', 'always')")
        queued = [phone.queued_turn(DICE[i % len(DICE)]) for i in range(max(5, turns // 3))]
        print(f"{label:<9} queue, driver: input free {_ms([q[0] for q in queued])}")
        print(f"{label:<9} queue, driver: new board {_ms([q[1] for q in queued])}", flush=True)
    finally:
        phone.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=30, help="timed turns per network")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with served_table("form-bench-") as table:
        print(f"pub form, 390×664, tap on '1 Wurf' → next turn's input usable, {args.turns} turns")
        with sync_playwright() as pw:
            browser = launch(pw)
            for label, network in (("loopback", None), ("Fast 3G", FAST_3G)):
                measure(browser, table, label, network, args.turns)
            browser.close()
    print(f"targets: p50 ≤ {LOOPBACK_MS} ms on loopback, ≤ {FAST_3G_MS} ms on Fast 3G")
    print("load average: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))


if __name__ == "__main__":
    main()
