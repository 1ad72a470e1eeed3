"""``schocken serve`` runs the app in gunicorn: a pre-fork server, N worker processes on one
port, each gunicorn's stock ``gevent`` worker (a greenlet per connection, gevent's
monkey-patching of the standard library: sockets, locks, queues and sleeps wait
cooperatively). A request head or body that arrives slowly, or not at all, holds a greenlet,
not a worker: the other connections of the process are served meanwhile; a head not complete
within :data:`KEEPALIVE_SECONDS` closes its connection. Live event streams are plain answer
bodies in their own greenlets, fed by the process's stream hub (api/http/hub.py, made by the
``post_worker_init`` hook below; ended when the worker stops).

:class:`Worker` is gevent's worker with one public method of gunicorn's ``Worker`` replaced,
``handle_error``: the answers gunicorn writes itself (a request line or head it cannot read:
400, a too long request line: 414, too large header fields: 431, …) are
``application/problem+json`` with a German ``detail``, as every error answer of the API.

Open files: at start the soft limit ``RLIMIT_NOFILE`` is raised to the hard one. A worker
holds at most ``worker_connections`` = min(:data:`MAX_CONNECTIONS`, limit −
:data:`RESERVED_FILES`) connections (the reserve: database connections, the event log's watch,
logs, the listening socket, gevent's own descriptors); beyond, gevent stops accepting until
one ends, and an ``accept`` that fails (``EMFILE``) makes it pause and try again later, with a
growing delay, never a crash. Event streams take at most three quarters of those connections
(``EVENT_STREAMS_PER_PROCESS`` lowered to that, :func:`limits`), so that requests always have
room; a client address at most ``EVENT_STREAMS_PER_CLIENT`` per process.

The CLI (api/cli/server.py) makes the app once before the server starts (it creates and
migrates the database and writes the instance folder's secret key and admin token, so that the
workers do not race for them), closes it, and then replaces its process with a fresh
interpreter running :func:`main`: gunicorn's master imports neither the app nor the database
drivers, so that each worker imports them only after gevent patched the standard library
(psycopg and SQLAlchemy's pool pick their waiting and locking primitives when imported). Each
worker makes its own app (``preload_app`` off) with its own connections. Nothing that
correctness depends on lives in one worker's memory (see api/domain/runtime.py,
api/http/idempotency.py, api/http/context.py). SIGTERM (or Ctrl-C) stops gracefully: the
workers end their streams and finish the requests they are on (up to ``GRACEFUL_SECONDS``),
then exit.

Beside the workers the master runs one statistics refresher, ``schocken stats refresh --watch``
(dashboard/refresher.py), a process of its own (not gevent): the workers run none (a round of
statistics in a worker held its interpreter lock for tens of ms while requests waited; two
workers took turns at the one-refresher lock). The webhook sender, ``schocken webhooks send
--watch`` (api/domain/sender.py), runs beside it the same way. gunicorn's documented server
hooks keep them (:class:`Background`): ``when_ready`` starts them, a thread of the master
starts one again should it end (at most once per :data:`RESTART_SECONDS`), ``on_reload``
(SIGHUP) starts them anew with the new workers, ``on_exit`` stops them; each also ends by
itself when the master is gone (a SIGKILL). The database URL reaches them in the environment,
never on a command line. ``schocken serve --no-background`` runs neither: a hosted deployment
runs them as services of their own (api/cli/HOSTING.md).
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.http import errors
from gunicorn.workers.ggevent import GeventWorker

#: how long a stopping worker may finish the requests it is on
GRACEFUL_SECONDS = 10
#: a worker silent this long is restarted (gevent's loop reports every second, unless a
#: request holds the process: a backup of a big database through the admin endpoint, say)
WORKER_TIMEOUT = 120
#: seconds a connection may take to send a request head (the first, and each next one on a
#: kept-alive connection) before it is closed
KEEPALIVE_SECONDS = 5
#: requests served on one kept-alive connection before it is closed (see :func:`pre_request`)
REQUESTS_PER_CONNECTION = 100
#: open files a worker keeps for other things than its connections: two per pooled SQLite
#: connection (the database and its WAL; api/storage/engine.py: 32 for requests, 32 for
#: the rate limit's counters), the event log's watch, logs, the listening socket, gevent's own
RESERVED_FILES = 192
#: connections of one worker at most, however high the open-files limit
MAX_CONNECTIONS = 10_000
#: a child of the master (the statistics refresher, the webhook sender) that ended is
#: started again at most this often
RESTART_SECONDS = 10.0
#: the master looks this often whether its children still run
CHECK_SECONDS = 1.0
#: the webhook sender looks for due deliveries this often
SEND_SECONDS = 1.0
#: the environment variable of the database URL (never on a command line any user can read)
URL_VARIABLE = "SCHOCKEN_DATABASE_URL"


class Child:
    """``schocken ARGS --watch`` on the server's database: a process of its own beside
    gunicorn's workers (not gevent), a child of the master."""

    def __init__(
        self, args: tuple[str, ...], database: str | None, interval: float, url: str | None
    ) -> None:
        self.args, self.database, self.interval, self.url = args, database, interval, url
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = 0.0

    def start(self) -> None:
        """Start it, told to end once this process (the master) is gone."""
        if not (self.database or self.url) or self.interval <= 0:
            return
        self.started = time.monotonic()
        command = [sys.executable, "-m", "api.cli", *self.args]
        command += ["--interval", str(self.interval), "--parent", str(os.getpid())]
        env = dict(os.environ)
        if self.url:  # in the environment, not on a command line any user can read
            env[URL_VARIABLE] = self.url
        else:
            assert self.database is not None
            command += ["--db", self.database]
        self.proc = subprocess.Popen(command, env=env)

    def check(self) -> None:
        """Start it again if it ended, at most once per :data:`RESTART_SECONDS` (gunicorn's
        master reaps every child that ends, ours too: then ``poll`` finds it gone as well)."""
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
            self.proc = None


def refresher(database: str | None, interval: float, url: str | None = None) -> Child:
    """The statistics refresher ``schocken stats refresh --watch`` (dashboard/refresher.py);
    ``interval`` 0: none."""
    return Child(("stats", "refresh", "--watch"), database, interval, url)


def sender(database: str | None, url: str | None = None) -> Child:
    """The webhook sender ``schocken webhooks send --watch`` (api/cli/webhooks.py)."""
    return Child(("webhooks", "send", "--watch"), database, SEND_SECONDS, url)


class Background:
    """The master's children, kept by gunicorn's server hooks (:meth:`hooks`): ``when_ready``
    starts them and a thread of the master that looks every :data:`CHECK_SECONDS` and starts
    one again should it have ended; ``on_reload`` (SIGHUP, which starts new workers) starts
    them anew as well; ``on_exit`` (the workers have stopped) stops them and waits for them.
    The thread mostly sleeps; the workers gunicorn forks meanwhile never use what it holds."""

    def __init__(self, *children: Child) -> None:
        self.children = children
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.watcher: threading.Thread | None = None

    def hooks(self) -> dict[str, Callable[[Any], None]]:
        """gunicorn's settings of the server hooks that keep them."""
        return {"when_ready": self.when_ready, "on_reload": self.on_reload, "on_exit": self.on_exit}

    def when_ready(self, server: Any) -> None:
        with self.lock:
            for child in self.children:
                child.start()
        self.watcher = threading.Thread(target=self.watch, name="background", daemon=True)
        self.watcher.start()

    def watch(self) -> None:
        while not self.stopping.wait(CHECK_SECONDS):
            with self.lock:
                if not self.stopping.is_set():
                    for child in self.children:
                        child.check()

    def on_reload(self, server: Any) -> None:
        with self.lock:
            self.halt()
            for child in self.children:
                child.start()

    def on_exit(self, server: Any) -> None:
        self.stopping.set()
        with self.lock:
            self.halt()
        if self.watcher is not None:
            self.watcher.join()

    def halt(self) -> None:
        """Stop them all at once (each ends its round), then wait for each."""
        for child in self.children:
            child.stop()
        for child in self.children:
            child.wait()


class Worker(GeventWorker):  # type: ignore[misc]  # gunicorn has no type information
    """gunicorn's stock gevent worker, whose own error answers are problem details (see the
    module's text; ``handle_error`` is the public method gunicorn's workers call for them)."""

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        status = client_error(exc)
        if status is None:
            self.log.exception("Error handling request")
            status = 500
        else:
            self.log.warning("Invalid request from ip=%s: %s", (addr or ("",))[0], exc)
        try:
            client.sendall(problem_answer(status, self.cfg.limit_request_line))
            linger(client)
        except OSError:
            self.log.debug("Failed to send error message.")


def linger(client: Any, seconds: float = 1.0, most: int = 1 << 20) -> None:
    """Before the connection closes: end the sending side and read what the client still
    sends (up to ``most`` bytes, ``seconds``), so that the answer is not lost to a reset (a
    socket closed with unread bytes resets the connection, and the client may drop the answer
    it has not read yet)."""
    try:
        client.shutdown(socket.SHUT_WR)
        client.settimeout(seconds)
        left = most
        while left > 0 and (data := client.recv(65536)):
            left -= len(data)
    except OSError:  # gone, or silent: it closes now
        pass


def client_error(exc: BaseException) -> int | None:
    """The status of a request gunicorn could not read (None: not the client's fault)."""
    if isinstance(exc, errors.InvalidResponseHeader | errors.InvalidResponseHeaderName):
        return None  # a header the application tried to send
    for kind, status in (
        (errors.LimitRequestLine, 414),
        (errors.LimitRequestHeaders, 431),
        (errors.ForbiddenProxyRequest, 403),
        (errors.UnsupportedTransferCoding, 501),
        (errors.ExpectationFailed, 417),
        (errors.ConfigurationProblem, None),
    ):
        if isinstance(exc, kind):
            return status
    return 400 if isinstance(exc, errors.ParseException) else None


#: the German detail of gunicorn's own error answers, by status
DETAILS = {
    400: "Die Anfrage ist nicht verständlich: keine gültige HTTP-Anfrage.",
    403: "Anfragen über diesen Proxy nimmt der Server nicht an.",
    414: "Die Adresse der Anfrage ist zu lang (höchstens {limit} Zeichen).",
    417: "Die Erwartung der Anfrage (Expect) kann der Server nicht erfüllen.",
    431: "Die Kopfzeilen der Anfrage sind zu groß oder zu viele.",
    501: "Diese Übertragungskodierung (Transfer-Encoding) kennt der Server nicht.",
    500: "Interner Fehler.",
}


def problem_answer(status: int, limit: int) -> bytes:
    """A whole HTTP answer (the connection closes after it): the problem details of
    ``status`` (api/http/problems.py)."""
    from http import HTTPStatus

    from ..http.problems import PROBLEM_JSON, body

    detail = DETAILS.get(status, DETAILS[500]).format(limit=limit)
    payload = json.dumps(body(status, None, detail), ensure_ascii=False).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nConnection: close\r\n"
        f"Content-Type: {PROBLEM_JSON}\r\nContent-Length: {len(payload)}\r\n\r\n"
    )
    return head.encode("latin-1") + payload


def pre_request(worker: Any, req: Any) -> None:
    """gunicorn's hook before each request: the :data:`REQUESTS_PER_CONNECTION`-th request of
    a kept-alive connection is answered with ``Connection: close`` (``must_close``, an
    attribute of gunicorn's request). A connection belongs to the worker that accepted it, and
    clients that connect at one moment may all land on one worker while another idles; the
    client connects again and an idle worker, the one waiting in ``accept``, takes it (as
    nginx's ``keepalive_requests``): the load rebalances within a second, at the cost of one
    connection per that many requests."""
    if req.req_number >= REQUESTS_PER_CONNECTION:
        req.must_close = True


def post_worker_init(worker: Any) -> None:
    """gunicorn's hook, in a worker whose app is loaded: the process's stream hub, its cap of
    streams lowered to three quarters of the worker's connections (:func:`stream_cap`); its
    streams end once the worker stops (``alive`` false)."""
    from ..http.hub import StreamHub
    from ..http.sse import HUB_KEY, StreamSettings

    app = worker.wsgi
    cap = min(int(app.config["EVENT_STREAMS_PER_PROCESS"]), stream_cap(worker.worker_connections))
    app.config["EVENT_STREAMS_PER_PROCESS"] = cap
    settings = StreamSettings.of(app.config)
    store = app.extensions["schocken"].store
    app.extensions[HUB_KEY] = StreamHub(store, settings, alive=lambda: bool(worker.alive))


def worker_exit(server: Any, worker: Any) -> None:
    """gunicorn's hook, in a worker that ends: its streams end (clients reconnect), then its
    store closes every connection (on SQLite the last one to close moves the WAL into the
    database file, so a clean stop leaves a complete file)."""
    from ..http.sse import HUB_KEY

    app = getattr(worker, "wsgi", None)
    if app is None:
        return
    hub = app.extensions.get(HUB_KEY)
    if hub is not None:
        hub.stop()
    app.extensions["schocken"].store.close()


class Server(BaseApplication):  # type: ignore[misc]  # gunicorn has no type information
    """The app factory ``create_app(config)`` under gunicorn with the given settings: a custom
    application as gunicorn documents it (``load_config`` and ``load``)."""

    def __init__(self, config: dict[str, Any], options: dict[str, Any]) -> None:
        self.app_config = config
        self.options = options
        super().__init__()

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
    less often (a full collection of a busy server stops every greenlet for tens of ms)."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 20, 20)


def open_files() -> int:
    """Raise the soft limit of open files to the hard one; the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = max(soft, 1 << 20) if soft != resource.RLIM_INFINITY else 1 << 20
    if soft == resource.RLIM_INFINITY or soft >= hard:
        return hard
    try:
        resource.setrlimit(
            resource.RLIMIT_NOFILE, (hard, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
        )
    except (ValueError, OSError):
        return soft
    return hard


def connections(files: int) -> int:
    """``worker_connections`` for a limit of ``files`` open files (see the module's text)."""
    return max(16, min(MAX_CONNECTIONS, files - RESERVED_FILES))


def stream_cap(worker_connections: int) -> int:
    """Event streams one worker holds at most: three quarters of its connections."""
    return max(1, worker_connections * 3 // 4)


def run(
    config: dict[str, Any], host: str, port: int, workers: int, refresh: float = 0,
    background: bool = True,
) -> None:  # fmt: skip
    """Serve until SIGTERM / SIGINT, with a statistics refresher every ``refresh`` seconds (0:
    none) and the webhook sender, each in a process of its own (``background`` false: none of
    them, they run as services of their own); the workers run none."""
    options = {
        "bind": f"{host}:{port}",
        "workers": workers,
        "worker_class": f"{__name__}.Worker",
        "worker_connections": connections(open_files()),
        "keepalive": KEEPALIVE_SECONDS,
        "graceful_timeout": GRACEFUL_SECONDS,
        "timeout": WORKER_TIMEOUT,
        "proc_name": "schocken",
        "loglevel": "warning",
        # no gunicornc socket (one path per user, which a second server would take over)
        "control_socket_disable": True,
        "pre_request": pre_request,
        "post_worker_init": post_worker_init,
        "worker_exit": worker_exit,
    }
    if background:
        url = config.get("DATABASE_URL")
        database = None if url else config.get("DATABASE")
        options |= Background(refresher(database, refresh, url), sender(database, url)).hooks()
    Server({**config, "STATS_REFRESH_SECONDS": 0}, options).run()


def exec_server(
    config: dict[str, Any], host: str, port: int, workers: int, refresh: float,
    background: bool = True,
) -> None:  # fmt: skip
    """Replace this process by a fresh interpreter that runs :func:`run` (see the module's
    text: gunicorn's master imports neither the app nor the database drivers)."""
    env = dict(os.environ)
    if config.get("DATABASE_URL"):
        env[URL_VARIABLE] = str(config["DATABASE_URL"])
    spec = {
        "config": {k: v for k, v in config.items() if k != "DATABASE_URL"},
        "host": host,
        "port": port,
        "workers": workers,
        "refresh": refresh,
        "background": background,
    }
    sys.stdout.flush()
    sys.stderr.flush()
    code = "from api.cli.serving import main; main()"
    os.execve(sys.executable, [sys.executable, "-c", code, json.dumps(spec)], env)


def main() -> None:
    """The server process of :func:`exec_server`."""
    spec = json.loads(sys.argv[1])
    config = dict(spec["config"])
    config["DATABASE_URL"] = os.environ.get(URL_VARIABLE) or None
    run(
        config, spec["host"], int(spec["port"]), int(spec["workers"]), float(spec["refresh"]),
        bool(spec["background"]),
    )  # fmt: skip
