"""Issue 25, findings 1 and 4: does one slow webhook receiver stall other Stammtische, and which
internal addresses does a hosted server take as webhook targets?

Runs ``schocken serve`` of a source tree (this one, or ``--tree`` another checkout, e.g. an
older main) on a fresh SQLite file, or with ``--postgres`` two servers (two senders) on one
fresh PostgreSQL database, and measures:

* **delay**: Stammtisch A has a receiver that trickles its answer one byte a second and one
  that never answers, with 20 deliveries each (test pings); then Stammtisch B's healthy
  receiver gets a ping: seconds from the ping's 202 to its arrival (capped by ``--wait``);
* what the admin view of ``/api/v1/health`` says meanwhile (``sender.behind``, if it tells);
* **killed sender**: a server killed (SIGKILL) while two silent receivers hold their requests,
  10 deliveries each: deliveries claimed, started (requests the receivers got), claimed but
  not started, and after how many seconds the claimed ones are due again (their lease);
* **SSRF**: how many of the probe's 8 internal IP literals (``https://127.1/``, …) a server
  with ``SCHOCKEN_WEBHOOK_LOOPBACK=0`` (as hosted) accepts as a webhook URL.

    python -m api.bench.webhook_isolation_probe [--postgres] [--tree /path/to/checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "probe-admin-token-" + "x" * 24
#: the internal addresses of the outside probe (issue 25, finding 4)
INTERNAL = (
    "https://127.1/",
    "https://2130706433/",
    "https://[::ffff:7f00:1]/",
    "https://0.0.0.0/",
    "https://10.0.0.1/",
    "https://169.254.169.254/",
    "https://[::1]/",
    "https://0x7f.1/",
)


class Receivers:
    """Webhook receivers on localhost (also for tests/test_webhooks_isolation.py): ``trickle``
    answers one byte a second with a head that never ends, ``silent`` reads the request and
    never answers, ``healthy`` answers 204 at once. ``came`` notes when requests came."""

    KINDS = ("trickle", "silent", "healthy")

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.came: dict[str, list[float]] = {kind: [] for kind in self.KINDS}
        outer = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                kind = self.server.kind  # type: ignore[attr-defined]
                self.request.settimeout(5)
                try:
                    self.request.recv(65536)  # the request (small: it fits)
                    outer.came[kind].append(time.monotonic())
                    if kind == "healthy":
                        self.request.sendall(
                            b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n"
                        )
                        return
                    for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100000:
                        if outer.stop.wait(1.0):
                            return
                        if kind == "trickle":
                            self.request.sendall(bytes([byte]))
                except OSError:
                    return  # cut off by the sender

        self.servers: dict[str, socketserver.ThreadingTCPServer] = {}
        for kind in self.KINDS:
            server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
            server.daemon_threads = True
            server.kind = kind  # type: ignore[attr-defined]
            threading.Thread(target=server.serve_forever, daemon=True).start()
            self.servers[kind] = server

    @property
    def arrived(self) -> list[float]:
        """When the healthy receiver's requests came."""
        return self.came["healthy"]

    def url(self, kind: str) -> str:
        return f"http://127.0.0.1:{self.servers[kind].server_address[1]}/hook"

    def close(self) -> None:
        self.stop.set()
        for server in self.servers.values():
            server.shutdown()
            server.server_close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def call(base: str, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


class Serve:
    """``schocken serve`` of ``tree`` (its own process group), until :meth:`stop`."""

    def __init__(self, tree: Path, where: list[str], log: Path, env: dict[str, str]) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        command = [sys.executable, "-m", "api.cli", "serve", "--port", str(self.port)]
        command += [*where, "--workers", "1"]
        full = {**os.environ, "PYTHONPATH": str(tree), "SCHOCKEN_ADMIN_TOKEN": ADMIN, **env}
        with open(log, "a") as out:
            self.proc = subprocess.Popen(
                command, cwd=tree, stdout=out, stderr=subprocess.STDOUT, env=full,
                start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"serve ended: see {log}")
            try:
                if call(self.base, "GET", "/api/v1/health")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit(f"serve did not answer: see {log}")

    def stop(self) -> None:
        try:
            os.killpg(self.proc.pid, 15)
            self.proc.wait(30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(self.proc.pid, 9)


def stammtisch(base: str, name: str) -> tuple[str, str]:
    status, made = call(base, "POST", "/api/v1/stammtische", {"name": name, "private": False})
    assert status == 201, made
    return made["slug"], made["token"]


def webhook(base: str, slug: str, token: str, url: str) -> int:
    path = f"/api/v1/stammtische/{slug}/webhooks"
    status, made = call(base, "POST", path, {"url": url, "kinds": ["game_lost"]}, token)
    assert status == 201, made
    return int(made["id"])


def ping(base: str, slug: str, token: str, hook: int) -> None:
    status, made = call(base, "POST", f"/api/v1/stammtische/{slug}/webhooks/{hook}/ping", {}, token)
    assert status == 202, made


def delay(servers: list[Serve], wait: float) -> dict[str, Any]:
    """Seconds until Stammtisch B's delivery arrives while A's slow receivers have 20 each."""
    base = servers[0].base
    receivers = Receivers()
    try:
        slug, token = stammtisch(base, "Zum Schneckentempo")
        for kind in ("trickle", "silent"):
            hook = webhook(base, slug, token, receivers.url(kind))
            for _ in range(20):
                ping(base, slug, token, hook)
        other, other_token = stammtisch(base, "Zur Post")
        hook = webhook(base, other, other_token, receivers.url("healthy"))
        time.sleep(2.0)  # the senders have started on the slow ones
        ping(servers[-1].base, other, other_token, hook)
        sent = time.monotonic()
        health: Any = None
        while not receivers.arrived and time.monotonic() - sent < wait:
            time.sleep(0.1)
            if health is None and time.monotonic() - sent > min(wait, 40):
                health = call(base, "GET", "/api/v1/health", token=ADMIN)[1]
        took = receivers.arrived[0] - sent if receivers.arrived else None
        if health is None:
            health = call(base, "GET", "/api/v1/health", token=ADMIN)[1]
        return {"delay_s": took, "waited_s": wait, "health_admin": health}
    finally:
        receivers.close()


def killed(tree: Path, folder: Path, log: Path, env: dict[str, str]) -> dict[str, Any]:
    """A server (and its sender) killed with SIGKILL while two silent receivers hold their
    requests, 10 deliveries each: what the outbox holds then (read from the SQLite file)."""
    import sqlite3

    db = folder / "killed.sqlite3"
    server = Serve(tree, ["--db", str(db)], log, env)
    receivers = Receivers()
    try:
        slug, token = stammtisch(server.base, "Zum Anker")
        for _ in range(2):
            hook = webhook(server.base, slug, token, receivers.url("silent"))
            for _ in range(10):
                ping(server.base, slug, token, hook)
        deadline = time.monotonic() + 30
        while not receivers.came["silent"] and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)  # what the sender takes, it has taken by now
        os.killpg(server.proc.pid, 9)
        server.proc.wait(30)
        started = len(receivers.came["silent"])
    finally:
        receivers.close()
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT last_attempt_at, next_attempt_at FROM webhook_deliveries WHERE attempts > 0"
        ).fetchall()
    leases = [
        (datetime.fromisoformat(due) - datetime.fromisoformat(at)).total_seconds()
        for at, due in rows
    ]
    return {
        "claimed": len(rows),
        "started": started,
        "claimed_not_started": len(rows) - started,
        "due_again_after_s": max(leases, default=None),
    }


def ssrf(server: Serve) -> dict[str, Any]:
    """Which of the 8 internal IP literals the (hosted) server takes as a webhook URL."""
    slug, token = stammtisch(server.base, "Zum Hafen")
    accepted = []
    for url in INTERNAL:
        path = f"/api/v1/stammtische/{slug}/webhooks"
        status, made = call(server.base, "POST", path, {"url": url, "kinds": ["game_lost"]}, token)
        if status == 201:
            accepted.append(url)
            call(server.base, "DELETE", f"{path}/{made['id']}", None, token)
    return {"accepted": len(accepted), "of": len(INTERNAL), "urls": accepted}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument("--postgres", action="store_true", help="two servers on PostgreSQL")
    parser.add_argument("--wait", type=float, default=120.0, help="seconds to wait at most")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    folder = Path(tempfile.mkdtemp(prefix="hookprobe-"))
    log = folder / "serve.log"
    env = {"SCHOCKEN_SECRET_KEY": "probe-secret-" + "y" * 30}
    local = {**env, "SCHOCKEN_WEBHOOK_LOOPBACK": "1"}  # the receivers are on loopback
    servers: list[Serve] = []
    pg: Any = None
    try:
        if args.postgres:
            from .pgserver import Server as PgServer

            pg = PgServer()
            url = pg.fresh(migrate=False)
            servers.append(Serve(tree, ["--database-url", url], log, local))
            servers.append(Serve(tree, ["--database-url", url], log, local))
        else:
            servers.append(Serve(tree, ["--db", str(folder / "probe.sqlite3")], log, local))
        result: dict[str, Any] = {"tree": str(tree), "store": "postgresql" if pg else "sqlite"}
        result["senders"] = len(servers)
        result.update(delay(servers, args.wait))
        for server in servers:
            server.stop()
        servers = []
        result["killed_sender"] = killed(tree, folder, log, local)
        hosted_env = {**env, "SCHOCKEN_WEBHOOK_LOOPBACK": "0"}
        hosted = Serve(tree, ["--db", str(folder / "hosted.sqlite3")], log, hosted_env)
        servers.append(hosted)
        result["ssrf_hosted"] = ssrf(hosted)
        result["loadavg"] = os.getloadavg()
        print(json.dumps(result, indent=2, ensure_ascii=False))
    finally:
        for server in servers:
            server.stop()
        if pg is not None:
            pg.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
