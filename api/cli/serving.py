"""``schocken serve`` runs the app in gunicorn: a pre-fork server, N worker processes, all on
one port, each serving one request at a time in its main thread (:class:`InlineWorker`), or
with ``--threads`` > 1 gunicorn's ``gthread`` worker (:class:`StreamWorker`). Live event
streams hold no request thread in either: each process hands them to its stream hub
(api/http/hub.py), one thread that serves them all.

The master process makes the app once before forking (it creates and migrates the database
and writes the instance folder's secret key and admin token, so that the workers do not race
for them) and closes its store again: no database connection crosses a fork. Each worker makes
its own app (``preload_app`` off) with its own connections. Nothing that correctness depends on
lives in one worker's memory (see api/domain/cache.py, api/http/idempotency.py,
api/http/ratelimit.py). SIGTERM (or Ctrl-C) stops gracefully: the workers finish the requests
they are on (up to ``GRACEFUL_SECONDS``), then exit.

Beside the workers the master runs one statistics refresher, ``schocken stats refresh --watch``
(dashboard/refresher.py), a process of its own: the workers run none (a round of statistics in
a worker held its interpreter lock for tens of ms while requests waited; two workers took
turns at the one-refresher lock). The master starts it, starts it again should it end (at
most once per :data:`RESTART_SECONDS`), and stops it when it stops; the refresher also ends
by itself when the master is gone (a SIGKILL). The webhook sender, ``schocken webhooks send
--watch`` (api/domain/sender.py), runs beside it the same way.
"""

from __future__ import annotations

import errno
import os
import selectors
import subprocess
import sys
import time
from datetime import datetime
from functools import partial
from typing import Any

from gunicorn import util
from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter
from gunicorn.http import wsgi
from gunicorn.workers.gthread import TConn, ThreadWorker

from ..http.hub import StreamHub
from ..http.sse import HUB_KEY, RETRY, STREAM_KEY, StreamSettings

#: how long a stopping worker may finish the requests it is on
GRACEFUL_SECONDS = 10
#: a worker silent this long is restarted (an InlineWorker is silent while it serves a request:
#: a backup of a big database through the admin endpoint, say)
WORKER_TIMEOUT = 120
#: requests served on one kept-alive connection before it is closed (see InlineWorker)
REQUESTS_PER_CONNECTION = 100
#: the statistics refresher is started again at most this often
RESTART_SECONDS = 10.0
#: the webhook sender looks for due deliveries this often
SEND_SECONDS = 1.0


class Refresher:
    """The master's child ``schocken stats refresh --watch`` on the server's database."""

    ARGS: tuple[str, ...] = ("stats", "refresh", "--watch")

    def __init__(self, database: str | None, interval: float, url: str | None = None) -> None:
        self.database, self.interval, self.url = database, interval, url
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = 0.0

    def start(self) -> None:
        if not (self.database or self.url) or self.interval <= 0:
            return
        self.started = time.monotonic()
        command = [sys.executable, "-m", "api.cli", *self.ARGS]
        command += ["--interval", str(self.interval), "--parent", str(os.getpid())]
        env = dict(os.environ)
        if self.url:  # in the environment, not on a command line any user can read
            env["SCHOCKEN_DATABASE_URL"] = self.url
        else:
            assert self.database is not None
            command += ["--db", self.database]
        self.proc = subprocess.Popen(command, env=env)

    def check(self) -> None:
        """Start it again if it ended (gunicorn's reaping of children may have collected it:
        then ``poll`` finds it gone as well)."""
        if self.proc is not None and self.proc.poll() is not None:
            if time.monotonic() - self.started >= RESTART_SECONDS:
                self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()

    def wait(self) -> None:
        if self.proc is not None:
            try:
                self.proc.wait(GRACEFUL_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


class Sender(Refresher):
    """The master's child ``schocken webhooks send --watch`` (api/cli/webhooks.py)."""

    ARGS = ("webhooks", "send", "--watch")


class Children(Refresher):
    """Several such children of the master, started, checked and stopped together."""

    def __init__(self, *children: Refresher) -> None:
        super().__init__(None, 0)
        self.children = children

    def start(self) -> None:
        for child in self.children:
            child.start()

    def check(self) -> None:
        for child in self.children:
            child.check()

    def stop(self) -> None:
        for child in self.children:
            child.stop()

    def wait(self) -> None:
        for child in self.children:
            child.wait()


class ServerArbiter(Arbiter):  # type: ignore[misc]  # gunicorn has no type information
    """gunicorn's master, which also keeps the statistics refresher running."""

    refresher: Refresher

    def start(self) -> None:
        super().start()
        self.refresher.start()

    def manage_workers(self) -> None:
        super().manage_workers()
        self.refresher.check()

    def halt(self, reason: Any = None, exit_status: int = 0) -> None:
        self.refresher.stop()  # it ends its round while the workers finish their requests
        try:
            super().halt(reason, exit_status)
        finally:
            self.refresher.wait()


class _Done:
    """What gthread's ``finish_request`` reads of a request's future: its outcome."""

    __slots__ = ("error", "value")

    def __init__(self, value: Any, error: BaseException | None = None) -> None:
        self.value, self.error = value, error

    def cancelled(self) -> bool:
        return False

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value

    def exception(self) -> BaseException | None:
        return self.error


class OneSend(wsgi.Response):  # type: ignore[misc]  # gunicorn has no type information
    """gunicorn's response, but the head goes out with the first piece of the body, in one
    send (gunicorn sends them apart: on a loopback or LAN socket each send costs as much as a
    small request's routing)."""

    held: bytes | None = None
    headers_sent: bool

    def send_headers(self) -> None:
        if self.headers_sent:
            return
        head = self.default_headers()
        head.extend(f"{k}: {v}\r\n" for k, v in self.headers)
        self.held = util.to_bytestring("{}\r\n".format("".join(head)), "latin-1")
        self.headers_sent = True

    def flush(self) -> None:
        held, self.held = self.held, None
        if held:
            util.write(self.sock, held)

    def _emit_body(self, data: bytes) -> None:
        if self.held is not None and not self.chunked:
            held, self.held = self.held, None
            util.write(self.sock, held + data)
            return
        self.flush()
        util.write(self.sock, data, self.chunked)

    def sendfile(self, respiter: Any) -> bool:
        self.send_headers()
        self.flush()
        return bool(super().sendfile(respiter))

    def close(self) -> None:
        self.send_headers()
        self.flush()
        super().close()


#: what ``handle_request`` returns for a connection handed to the stream hub
HANDED_OVER: Any = type("HandedOver", (), {"__repr__": lambda self: "HANDED_OVER"})()


class StreamWorker(ThreadWorker):  # type: ignore[misc]  # gunicorn has no type information
    """gunicorn's ``gthread`` worker (``--threads`` > 1), with :class:`OneSend` answers, at most
    :data:`REQUESTS_PER_CONNECTION` requests per connection (see :class:`InlineWorker`), and
    event streams handed over: a view that answers with an
    :class:`~api.http.sse.EventStream` holds no thread; its head goes out from the request's
    thread, then the connection belongs to the process's :class:`~api.http.hub.StreamHub` (one
    thread for every stream of the process; started on the first stream, its streams closed
    when the worker stops)."""

    alive: bool
    _hub: StreamHub | None = None

    def load_wsgi(self) -> None:
        super().load_wsgi()
        app = self.wsgi  # the Flask app (Server.load)
        self._hub = StreamHub(app.extensions["schocken"].store, StreamSettings.of(app.config))

    def hub(self) -> StreamHub:
        assert self._hub is not None
        return self._hub

    def run(self) -> None:
        try:
            super().run()
        finally:
            if self._hub is not None:
                self._hub.stop()

    def _keepalive_after(self, conn: Any, keepalive: Any) -> Any:
        if keepalive is HANDED_OVER:
            return keepalive
        return super()._keepalive_after(conn, keepalive)

    def finish_request(self, conn: Any, fs: Any) -> None:
        if not fs.cancelled() and fs.exception() is None and fs.result() is HANDED_OVER:
            self.nr_conns -= 1  # the hub's now
            return
        super().finish_request(conn, fs)

    def _hand_over(self, conn: Any, resp: Any, environ: dict[str, Any], req: Any) -> bool:
        """Give the connection of an event stream's answer to the hub (True), with the
        answer's head and the stream's first line; or release the hub's place (False: an
        error answer, a HEAD request: answered as usual)."""
        stream = environ.get(STREAM_KEY)
        if stream is None:
            return False
        hub = self.hub()
        if resp.status_code != 200 or req.method != "GET":
            hub.release()
            return False
        resp.force_close()  # the body ends when the connection does: no chunks
        resp.chunked = False
        resp.send_headers()
        head, resp.held = resp.held or b"", None
        hub.attach(conn.sock, stream.cursor, stream.access, head + RETRY)
        return True

    def handle_request(self, req: Any, conn: Any) -> Any:
        """gthread's ``handle_request`` with :class:`OneSend` answers, at most
        :data:`REQUESTS_PER_CONNECTION` requests per connection, event streams handed over.
        False: close it; :data:`HANDED_OVER`: the stream hub has it."""
        conn.served = getattr(conn, "served", 0) + 1
        environ: dict[str, Any] = {}
        resp = None
        try:
            self.cfg.pre_request(self, req)
            started = datetime.now()
            resp, environ = wsgi.create(
                req, conn.sock, conn.client, conn.server, self.cfg, response_class=OneSend
            )
            self.nr += 1
            if self.nr >= self.max_requests:
                if self.alive:
                    self.log.info("Autorestarting worker after current request.")
                    self.alive = False
            if (
                not self.alive
                or not self.cfg.keepalive
                or self.nr >= self.max_requests
                or conn.served >= REQUESTS_PER_CONNECTION
                or len(self.keepalived_conns) >= self.max_keepalived
            ):
                resp.force_close()  # answered with Connection: close
            environ["wsgi.multithread"] = self.cfg.threads > 1
            environ[HUB_KEY] = self.hub()
            respiter = self.wsgi(environ, resp.start_response)
            try:
                if self._hand_over(conn, resp, environ, req):
                    return HANDED_OVER
                if isinstance(respiter, environ["wsgi.file_wrapper"]):
                    resp.write_file(respiter)
                else:
                    for item in respiter:
                        resp.write(item)
                resp.close()
            finally:
                self.log.access(resp, req, environ, datetime.now() - started)
                if hasattr(respiter, "close"):
                    respiter.close()
            return not resp.should_close()
        except OSError:
            raise  # handle() closes the connection
        except (Exception, SystemExit):
            if resp is not None and resp.headers_sent:
                self.log.exception("Error handling request")
                util.close_graceful(conn.sock)
                raise StopIteration() from None
            raise
        finally:
            try:
                self.cfg.post_request(self, req, environ, resp)
            except Exception:  # noqa: BLE001 - gunicorn's own handling
                self.log.exception("Exception in post_request hook")


class InlineWorker(StreamWorker):
    """gunicorn's ``gthread`` worker with one request thread, its main thread: the request of a
    connection that turns readable is served right there, not handed to a pool thread and its
    outcome back through a pipe (two thread switches and the interpreter lock passed twice per
    request). New connections wait in the poller until their request arrives; keep-alive,
    time-outs and the graceful stop are gthread's.

    A kept-alive connection belongs to the process that accepted it, and clients that connect
    at one moment may all land on one process (the first to wake accepts them all) while
    another idles. So a connection is closed after :data:`REQUESTS_PER_CONNECTION` requests
    (``Connection: close``, as nginx's ``keepalive_requests``): the client connects again and
    an idle process, the one waiting in ``accept``, takes it. That rebalances within a second
    at a cost of one connection per that many requests.

    Event streams are handed to the process's stream hub (:class:`StreamWorker`): they hold
    no thread."""

    def accept(self, listener: Any) -> None:
        try:
            sock, address = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        sock.setblocking(False)
        conn = TConn(self.cfg, sock, address, listener.getsockname())
        conn.timeout = time.monotonic() + self.cfg.keepalive
        self.pending_conns.append(conn)
        self.poller.register(
            sock, selectors.EVENT_READ, partial(self.on_pending_socket_readable, conn)
        )

    def enqueue_req(self, conn: Any) -> None:
        try:
            done = _Done(self.handle(conn))
        except Exception as exc:  # noqa: BLE001 - finish_request closes the connection
            done = _Done(None, exc)
        self.finish_request(conn, done)


class Server(BaseApplication):  # type: ignore[misc]  # gunicorn has no type information
    """The app factory ``create_app(config)`` under gunicorn with the given settings."""

    def __init__(
        self, config: dict[str, Any], options: dict[str, Any], refresher: Refresher | None = None
    ) -> None:
        self.app_config = config
        self.options = options
        self.refresher = refresher or Refresher(None, 0)
        super().__init__()

    def run(self) -> None:
        arbiter = ServerArbiter(self)
        arbiter.refresher = self.refresher
        arbiter.run()

    def load_config(self) -> None:
        for key, value in self.options.items():
            self.cfg.set(key, value)

    def load(self) -> Any:
        from ..app import create_app

        app = create_app(self.app_config)
        settle_garbage_collector()
        return app


def settle_garbage_collector() -> None:
    """A long-running server: what exists after start-up (modules, the app, the caches'
    tables) lives as long as the process, so the collector stops walking it, and it runs
    less often (a full collection of a busy server stops every thread for tens of ms)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


def run(
    config: dict[str, Any], host: str, port: int, workers: int, threads: int, refresh: float = 0
) -> None:
    """Serve until SIGTERM / SIGINT, with a statistics refresher every ``refresh`` seconds (0:
    none) in a process of its own; the workers run none."""
    options = {
        "bind": f"{host}:{port}",
        "workers": workers,
        "threads": threads,
        "worker_class": f"{__name__}.{'StreamWorker' if threads > 1 else 'InlineWorker'}",
        "graceful_timeout": GRACEFUL_SECONDS,
        "timeout": WORKER_TIMEOUT,
        "proc_name": "schocken",
        "loglevel": "warning",
    }
    url = config.get("DATABASE_URL")
    database = None if url else config.get("DATABASE")
    children = Children(Refresher(database, refresh, url), Sender(database, SEND_SECONDS, url))
    Server({**config, "STATS_REFRESH_SECONDS": 0}, options, children).run()
