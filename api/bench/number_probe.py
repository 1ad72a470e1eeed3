"""Odd numbers against a running server (issue 25, finding 5): how many answers are 5xx?

Sends a superscript "²", a number of 5,000 digits, 2**63 and 2**64 (no signed 64-bit column
holds them) and, for comparison, 2**63 − 1, to every place a number comes in as text or JSON:

* ``Last-Event-ID`` of the Stammtisch's and a game's stream, and their ``?last_event_id=``;
* the API's path ids (games, players, webhooks, deliveries) and query numbers (``page``,
  ``player_id``, ``year``);
* JSON bodies: the number as a field of every write (players, games, turns, penalties,
  imports, webhooks, a new Stammtisch, the evaluation of dice);
* the dashboard's paths (``/dashboard/<slug>/<year>.html``), the TV (``/tv/<slug>?spiel=``
  and its board fragment);
* the form's pages, logged in: a game's page and its actions, a player's, ``?wie=`` of a new
  game, ``?seite=`` of the history, ``?spiel=`` of "Unsere Regeln", the Deckel of the rules
  form.

Prints per place the answers' statuses and the count of 5xx, then the total and the load
average. A URL of 5,000 digits is longer than a request line gunicorn reads (4,094 bytes): it
answers 414 itself, so that number reaches the app only in headers and bodies.

    python -m api.bench.number_probe --url http://127.0.0.1:5000     # a server that runs
    python -m api.bench.number_probe --serve /path/to/tree [--postgres] # started here

``--serve TREE`` starts ``schocken serve`` from that source tree (``.`` for this one) on a
fresh SQLite file (and with ``--postgres`` also on a throwaway PostgreSQL cluster), probes it
and stops it: so main and a branch can be compared on the same machine.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import tempfile
import urllib.parse
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]
#: the odd numbers, by name
ODD = {
    "²": "²",
    "5000 digits": "9" * 5000,
    "2**63": str(2**63),
    "2**64": str(2**64),
}
#: a number every place takes (ids: not found; a stream: nothing to replay)
LARGEST = str(2**63 - 1)
TIMEOUT = 10.0


class Probe:
    """One client of the server at ``url``, with a cookie jar for the form's pages."""

    def __init__(self, url: str) -> None:
        parts = urllib.parse.urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.cookies: dict[str, str] = {}
        self.csrf = ""
        self.token = ""
        self.slug = ""
        self.statuses: dict[str, Counter[int]] = defaultdict(Counter)

    def call(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        place: str | None = None,
    ) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
        sent = dict(headers or {})
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        try:
            conn.request(method, path, body=body, headers=sent)
            answer = conn.getresponse()
            stream = answer.getheader("Content-Type", "").startswith("text/event-stream")
            data = answer.read1(4096) if stream else answer.read()
            for header in answer.headers.get_all("Set-Cookie") or []:
                name, _, rest = header.partition("=")
                self.cookies[name] = rest.split(";", 1)[0]
            status = answer.status
        except (OSError, http.client.HTTPException):
            status, data = 0, b""  # the connection broke: counted as such
        finally:
            conn.close()
        if place is not None:
            self.statuses[place][status] += 1
        return status, data

    def api(self, method: str, path: str, doc: Any = None, place: str | None = None) -> Any:
        body = None if doc is None else json.dumps(doc).encode()
        headers = {"Content-Type": "application/json"} if body is not None else {}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        status, data = self.call(method, path, body, headers, place)
        return status, (json.loads(data) if data[:1] in (b"{", b"[") else None)

    def form(self, path: str, fields: dict[str, str], place: str) -> int:
        if not self.csrf:
            self._read_csrf(self.call("GET", "/")[1])
        body = urllib.parse.urlencode({**fields, "csrf_token": self.csrf}).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        return self.call("POST", path, body, headers, place)[0]

    def _read_csrf(self, page: bytes) -> None:
        found = re.search(rb'name="csrf_token" value="([^"]+)"', page)
        if found:
            self.csrf = found.group(1).decode()


def seed(probe: Probe) -> dict[str, int]:
    """A Stammtisch with players, a running game and a webhook; the form logged in to it."""
    status, made = probe.api("POST", "/api/v1/stammtische", {"name": "Zahlenprobe"})
    assert status == 201, (status, made)
    probe.slug, probe.token = made["slug"], made["token"]
    base = f"/api/v1/stammtische/{probe.slug}"
    ids = [probe.api("POST", base + "/players", {"name": n})[1]["id"] for n in PLAYERS]
    game = probe.api("POST", base + "/games", {"players": PLAYERS, "starter": "Anna"})[1]["id"]
    hook = {"url": "https://chat.example/hook", "kinds": ["game_lost"]}
    webhook = probe.api("POST", base + "/webhooks", hook)[1]
    probe._read_csrf(probe.call("GET", "/")[1])
    probe.form("/anmelden", {"slug": probe.slug, "token": probe.token}, "login")
    return {"game": game, "player": ids[0], "webhook": (webhook or {}).get("id", 1)}


def _quoted(value: str) -> str:
    return urllib.parse.quote(value, safe="")


def probe_all(probe: Probe, ids: dict[str, int]) -> None:
    slug, game = probe.slug, ids["game"]
    base = f"/api/v1/stammtische/{slug}"
    for value in [*ODD.values(), LARGEST]:
        q = _quoted(value)
        for stream in (f"{base}/events", f"{base}/games/{game}/events"):
            probe.call("GET", stream, headers={"Last-Event-ID": value}, place="Last-Event-ID")
            probe.call("GET", f"{stream}?last_event_id={q}", place="?last_event_id=")
        for method, path in [
            ("GET", f"/games/{q}"),
            ("GET", f"/games/{q}/log"),
            ("POST", f"/games/{q}/undo"),
            ("GET", f"/players/{q}"),
            ("GET", f"/webhooks/{q}"),
            ("GET", f"/webhooks/{ids['webhook']}/deliveries/{q}/redeliver"),
            ("POST", f"/webhooks/{ids['webhook']}/deliveries/{q}/redeliver"),
        ]:
            probe.api(method, base + path, {} if method == "POST" else None, "API path ids")
        for path in (
            f"/games?player_id={q}",
            f"/games?page={q}",
            f"/games?year={q}",
            f"/statistics?year={q}",
        ):
            probe.api("GET", base + path, place="API query numbers")
        probe.call("GET", f"/dashboard/{slug}/{q}.html", place="/dashboard/…")
        probe.call("GET", f"/dashboard/{slug}/{q}", place="/dashboard/…")
        probe.call("GET", f"/tv/{slug}?spiel={q}", place="/tv/…?spiel=")
        probe.call("GET", f"/tv/{slug}/tafel?spiel={q}", place="/tv/…?spiel=")
        probe.call("GET", f"/s/{slug}/spiel/{q}", place="form pages")
        for action in ("zug", "strafe", "rueckgaengig", "abbrechen"):
            probe.form(f"/s/{slug}/spiel/{q}/{action}", {"seq": "0"}, "form pages")
        probe.form(f"/s/{slug}/spieler/{q}", {"action": "retire"}, "form pages")
        for path in (f"/s/{slug}/neu?wie={q}", f"/s/{slug}/spiele?seite={q}",
                     f"/s/{slug}/unsere-regeln?spiel={q}"):  # fmt: skip
            probe.call("GET", path, place="form pages")
        rules = {"name": "Zahlenprobe", "public": "1", "preset": "standard", "opt_deckel": value}
        probe.form(f"/s/{slug}/regeln", rules, "form pages")
    for name, value in ODD.items():
        if not value.isascii():
            continue  # no JSON number
        for path, body in [
            (f"{base}/players", f'{{"name": "Erna", "x": {value}}}'),
            (f"{base}/games/{game}/turns", f'{{"player": "Anna", "dice": [1, 1, 4], "throws": {value}}}'),
            (f"{base}/games/{game}/penalties", f'{{"penalty": {{"player": "Anna", "deckel": {value}, "reason": "x"}}}}'),
            (f"{base}/imports", f'{{"players": ["Anna", "Bert"], "starter": "Anna", "events": [{value}]}}'),
            (f"{base}/webhooks", f'{{"url": "https://chat.example/h", "kinds": [{value}]}}'),
            ("/api/v1/stammtische", f'{{"name": "Zum Bären", "private": {value}}}'),
            ("/api/v1/rules/evaluate", f'{{"dice": [{value}, 1, 1]}}'),
        ]:  # fmt: skip
            headers = {"Content-Type": "application/json", "Authorization": f"Bearer {probe.token}"}
            probe.call("POST", path, body.encode(), headers, f"JSON body ({name})")


def report(probe: Probe, label: str) -> int:
    print(f"{label}:")
    total = errors = 0
    for place, statuses in probe.statuses.items():
        if place == "login":
            continue
        fives = sum(n for s, n in statuses.items() if s >= 500 or s == 0)
        total += sum(statuses.values())
        errors += fives
        shown = ", ".join(f"{s}×{n}" for s, n in sorted(statuses.items()))
        print(f"  {place:<22} {fives:>3} × 5xx   ({shown})")
    print(f"  {'total':<22} {errors:>3} × 5xx of {total} requests")
    print(f"  load average {tuple(round(x, 2) for x in os.getloadavg())}")
    return errors


def run(url: str, label: str) -> int:
    probe = Probe(url)
    ids = seed(probe)
    probe_all(probe, ids)
    return report(probe, label)


@contextmanager
def served(tree: str, postgres_url: str | None = None) -> Iterator[str]:
    """``schocken serve`` from ``tree`` on a fresh SQLite file (or ``postgres_url``)."""
    from .api_bench import start_server, wait_ready
    from .loadgen import free_port

    folder = Path(tempfile.mkdtemp(prefix="schocken-number-probe-"))
    port = free_port()
    server = start_server(port, folder / "probe.sqlite3", str(Path(tree).resolve()), postgres_url)
    try:
        wait_ready(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running server")
    parser.add_argument("--serve", metavar="TREE", help="start schocken serve from this tree")
    parser.add_argument("--postgres", action="store_true", help="with --serve: also on PostgreSQL")
    args = parser.parse_args(argv)
    print(f"load average {tuple(round(x, 2) for x in os.getloadavg())}")
    if args.url:
        return 1 if run(args.url, args.url) else 0
    if not args.serve:
        parser.error("--url or --serve")
    errors = 0
    with served(args.serve) as url:
        errors += run(url, f"{args.serve} on SQLite")
    if args.postgres:
        from .pgserver import Server as Postgres

        pg = Postgres()
        try:
            with served(args.serve, pg.fresh()) as url:
                errors += run(url, f"{args.serve} on PostgreSQL")
        finally:
            pg.stop()
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
