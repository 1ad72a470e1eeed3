"""Shared fixtures of the API and storage tests (the engine tests need none)."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from hypothesis import settings
from pgcluster import Cluster
from storage_contract import CONTRACT_STORES, PostgresTables, SQLiteTemplate, contract_for

from api.app import create_app
from api.storage import PostgresStore

# Mutation testing (`mutmut run`, pyproject.toml) judges every mutant on the same examples.
settings.register_profile("mutation", derandomize=True, database=None)


@pytest.fixture(autouse=True)
def _engine_computed_afresh(request: pytest.FixtureRequest) -> None:
    """Under mutation testing (the ``mutation`` Hypothesis profile of ``mutmut run``), each
    engine test builds its rulesets (api/rules/ruleset.py keeps each one once, with its
    evaluation table) and computes its odds (api/rules/odds.py keeps solvers and decision lists)
    afresh: mutmut judges a mutant by the tests that ran its code, in a process forked after
    the clean run, whose kept tables and solvers would answer in the mutant's place. The
    default run keeps them, as the server does."""
    mutation = request.config.getoption("--hypothesis-profile") == "mutation"
    if mutation and request.path.name.startswith("test_rules_"):
        from api.rules.odds import _choices, solver_for
        from api.rules.ruleset import _INTERNED

        _INTERNED.clear()
        solver_for.cache_clear()
        _choices.cache_clear()


PLAYERS = ["Anna", "Bert", "Clara", "Dieter"]


class Table:
    """A client at the pub table: one Stammtisch, its token, helpers for the common calls."""

    def __init__(self, client: Any, slug: str, token: str) -> None:
        self.client = client
        self.slug = slug
        self.token = token
        self.base = f"/api/v1/stammtische/{slug}"

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def post(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self.client.post(self.base + path, json=body, headers=self.auth, **kw)

    def patch(self, path: str, body: Any, **kw: Any) -> Any:
        return self.client.patch(self.base + path, json=body, headers=self.auth, **kw)

    def get(self, path: str = "", **kw: Any) -> Any:
        return self.client.get(self.base + path, **kw)

    def add_players(self, names: list[str]) -> list[int]:
        ids = []
        for name in names:
            r = self.post("/players", {"name": name})
            assert r.status_code == 201, r.json
            ids.append(r.json["id"])
        return ids

    def start(self, players: list[str] | None = None, starter: str = "Anna", **kw: Any) -> int:
        body = {"players": players or PLAYERS, "starter": starter, **kw}
        r = self.post("/games", body)
        assert r.status_code == 201, r.json
        return r.json["id"]

    def turn(self, game: int, player: str, dice: list[int], throws: int, **kw: Any) -> Any:
        body = {"player": player, "dice": dice, "throws": throws, **kw}
        return self.post(f"/games/{game}/turns", body)

    def game(self, game: int) -> dict[str, Any]:
        r = self.get(f"/games/{game}", headers=self.auth)
        assert r.status_code == 200, r.json
        return r.json


def make_table(client: Any, name: str = "Zur Post", **kw: Any) -> Table:
    r = client.post("/api/v1/stammtische", json={"name": name, **kw})
    assert r.status_code == 201, r.json
    return Table(client, r.json["slug"], r.json["token"])


#: the threads of :func:`play_at_once` and the answers other than 201 they got
PlayersAtOnce = tuple[list[threading.Thread], list[object]]


def play_at_once(app: Flask, table: Table, logs: list[dict[str, Any]]) -> PlayersAtOnce:
    """Every log of ``logs`` played as a new game of ``table`` at the same time, one thread
    and client each (started here): (the threads, the answers other than 201)."""
    errors: list[object] = []

    def play(log: dict[str, Any]) -> None:
        t = Table(app.test_client(), table.slug, table.token)
        game = t.start(PLAYERS, log["starter"])
        for event in log["events"]:
            r = t.post(f"/games/{game}/turns", event)
            if r.status_code != 201:
                errors.append(r.json)
                return

    threads = [threading.Thread(target=play, args=(log,)) for log in logs]
    for th in threads:
        th.start()
    return threads, errors


#: every store: the fake, a SQLite file (the store of record) and a PostgreSQL database (of the
#: worker's throwaway cluster, tests/pgcluster.py)
STORES = ["memory", "sqlite", "postgresql"]
#: the store of the HTTP and web suites: they test the API and the pages, not the stores. The
#: stores' behaviour is the storage tests' (every store, ``@pytest.mark.stores(*STORES)``);
#: the HTTP layer on PostgreSQL has one smoke test per resource (tests/test_api_postgresql.py)
HTTP_STORE = "sqlite"


def pytest_configure(config: pytest.Config) -> None:
    """The run's temporary files in memory (``/dev/shm``) where there is one: pytest's
    ``tmp_path``, ``tempfile``'s and, through ``TMPDIR``, those of the processes the tests start
    (servers, Chromium's profiles). Every SQLite commit syncs its WAL (and Chromium its
    profile's databases): on a disk that is a wait of 3–7 ms here that tells no test anything,
    since a killed server's writes are in the page cache either way and no test cuts the power.
    Only with 2 GiB free there; a ``TMPDIR`` set by hand is kept; the xdist workers inherit the controller's."""
    shm = Path("/dev/shm")
    if (
        "TMPDIR" not in os.environ
        and shm.is_dir()
        and os.access(shm, os.W_OK | os.X_OK)
        and shutil.disk_usage(shm).free >= 2 * 2**30  # not a container's 64 MB default
    ):
        os.environ["TMPDIR"] = str(shm)
        tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    _bytecode_in_temp()


#: the run's bytecode cache (:func:`_bytecode_in_temp`), removed at its end
_PYCACHE: list[str] = []


def _bytecode_in_temp() -> None:
    """Under ``PYTHONDONTWRITEBYTECODE`` every process the run starts compiles what it imports
    from source: each of the ~200 server, CLI and worker processes of a run compiles the app
    (0.2–0.3 s of CPU each, up to 2 s more per ``schocken serve`` start with its refresher and
    sender), and each worker rewrites the test modules' asserts anew. For the run's processes
    the cache goes to a temporary tree instead (``PYTHONPYCACHEPREFIX``), made and removed by
    the controller, readable by the tests' unprivileged user: the first process compiles,
    the others read; nothing is written beside the sources, as the variable asks. A
    ``PYTHONPYCACHEPREFIX`` set by hand (or by the controller, for the xdist workers) is kept."""
    if not os.environ.get("PYTHONDONTWRITEBYTECODE") or os.environ.get("PYTHONPYCACHEPREFIX"):
        return
    prefix = tempfile.mkdtemp(prefix="schocken-pycache-")
    os.chmod(prefix, 0o755)  # noqa: S103 - bytecode of the checkout, read by the unprivileged user
    _PYCACHE.append(prefix)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    del os.environ["PYTHONDONTWRITEBYTECODE"]


def pytest_unconfigure(config: pytest.Config) -> None:
    """Removes the run's bytecode cache (:func:`_bytecode_in_temp`) in the process that made it."""
    while _PYCACHE:
        shutil.rmtree(_PYCACHE.pop(), ignore_errors=True)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject.toml): half as many workers again as the cores the run may use
    (3 on 2 cores). The tests wait much of their time — for servers to start and stop, for
    Chromium, for subprocesses — and one worker per core kept 2 cores only ~60 % busy (653 s of
    CPU in a run of 537 s). ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    cores = (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    )
    return cores + (cores + 1) // 2


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that needs the ``storage`` fixture (through ``app`` or any fixture of its own)
    runs once per store of its closest ``stores`` mark: a test's, a class's or a module's
    (``pytestmark``); without one on :data:`HTTP_STORE` alone. The ids stay ``[sqlite]`` etc. A
    test that parametrizes ``storage`` itself keeps its own list."""
    explicit = any(
        "storage" in _argnames(m.args[0]) for m in metafunc.definition.iter_markers("parametrize")
    )
    if "storage" in metafunc.fixturenames and not explicit:
        mark = metafunc.definition.get_closest_marker("stores")
        stores = list(mark.args) if mark is not None else [HTTP_STORE]
        metafunc.parametrize("storage", stores, indirect=True)


#: the modules that take a worker longest (``--durations``/``--junitxml`` of a whole run on 2
#: cores), heaviest first. The run (pyproject.toml: ``--dist loadfile --no-loadscope-reorder``)
#: hands the modules out in collection order, so these start first and the many short modules
#: fill the end evenly on both workers; without it xdist hands out modules with many tests
#: first and a long one with few tests (servers, Chromium) starts last, the other worker idle.
HEAVY_FIRST = (
    "test_web_offline_browser.py",
    "test_web_chancen_browser.py",
    "test_reliability_crash.py",
    "test_web_tv_browser.py",
    "test_api_events_serve.py",
    "test_pg_faults.py",
    "test_stats_readmodel.py",
    "test_web_browser_items.py",
    "test_api_serve.py",
    "test_web_axe_browser.py",
    "test_hardening_startup.py",
    "test_web_fold.py",
    "test_web_engine.py",
    "test_dashboard_browser.py",
    "test_table_browser.py",
    "test_table_browser_throws.py",
    "test_api_slow_clients.py",
    "test_webhooks_sender.py",
    "test_quality.py",
    "test_web_browser.py",
    "test_reliability_api.py",
    "test_storage_concurrency.py",
)


#: modules of slow tests only (``pytest -m slow``), not even collected by the default run
#: (``-m 'not slow'``, pyproject.toml): every xdist worker collects every module, and building
#: their schemathesis tests (thousands of coverage cases) would cost each worker seconds
SLOW_ONLY = ("test_api_no_server_error_slow.py", "test_reliability_fuzz_slow.py")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leaves out :data:`SLOW_ONLY` when the run deselects the slow tests."""
    if collection_path.name in SLOW_ONLY and config.getoption("markexpr") == "not slow":
        return True
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules of :data:`HEAVY_FIRST` first, in its order; the others, and the tests of
    each module, in the order collected (``--lf``/``--ff`` reorder after this)."""
    rank = {name: n for n, name in enumerate(HEAVY_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def _argnames(names: str | Sequence[str]) -> list[str]:
    """The argument names of a ``parametrize`` mark (``"a, b"`` or ``["a", "b"]``)."""
    return [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)


@pytest.fixture
def storage(request: pytest.FixtureRequest) -> str:
    """The store the test runs on: ``memory``, ``sqlite`` or ``postgresql`` (see
    :func:`pytest_generate_tests`)."""
    return str(request.param)


#: the session's PostgreSQL cluster, once something asked for it
_CLUSTER: list[Cluster] = []


def _cluster() -> Cluster:
    if not _CLUSTER:
        cluster = Cluster()
        try:
            PostgresStore(cluster.template_url()).close()
        except BaseException:
            cluster.stop()
            raise
        _CLUSTER.append(cluster)
    return _CLUSTER[0]


@pytest.fixture(scope="session", autouse=True)
def _clean_up_templates() -> Iterator[None]:
    """Stops the cluster at the end of the run, if one was started, and removes the SQLite
    template."""
    yield
    while _CLUSTER:
        _CLUSTER.pop().stop()
    while _SQLITE_TEMPLATE:
        template, fallback = _SQLITE_TEMPLATE.pop()
        template.close()
        shutil.rmtree(fallback, ignore_errors=True)


@pytest.fixture(scope="session")
def pg_cluster() -> Cluster:
    """A PostgreSQL server for the whole run, with a migrated template database."""
    return _cluster()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> Iterator[str]:
    """The URL of a fresh, migrated PostgreSQL database, dropped after the test."""
    url = pg_cluster.fresh_url()
    yield url
    pg_cluster.drop(url)


#: the worker's migrated SQLite file, once something asked for it
_SQLITE_TEMPLATE: list[tuple[SQLiteTemplate, Path]] = []


def _sqlite_template() -> SQLiteTemplate:
    """A SQLite file migrated once per worker (the PostgreSQL tests' template database, for
    SQLite): the contract suite's stores and the apps' files are copies of it, a fraction of
    the migrations' cost."""
    if not _SQLITE_TEMPLATE:
        fallback = Path(tempfile.mkdtemp(prefix="schocken-sqlite-"))  # without /dev/shm
        _SQLITE_TEMPLATE.append((SQLiteTemplate(fallback), fallback))
    return _SQLITE_TEMPLATE[0][0]


def store_config(storage: str, tmp_path: Any, request: Any = None) -> dict[str, Any]:
    """The config of an app on ``storage``: a SQLite file in ``tmp_path`` (a copy of the
    migrated template; a second app of the test shares the first one's file); a fresh
    PostgreSQL database (dropped after the test through its ``request``, else with the
    cluster)."""
    config: dict[str, Any] = {"STORAGE": storage, "TESTING": True}
    if storage == "sqlite":
        database = Path(tmp_path) / "test.sqlite3"
        if not database.exists():
            shutil.copyfile(_sqlite_template().template, database)
        config["DATABASE"] = str(database)
    if storage == "postgresql":
        url = _cluster().fresh_url() if request is None else request.getfixturevalue("pg_url")
        config["DATABASE_URL"] = url
    return config


def app_on(storage: str, tmp_path: Any, request: Any = None, **extra: Any) -> Iterator[Flask]:
    """An ``app`` fixture's body (``yield from app_on(…)``): the app on ``storage``
    (:func:`store_config`) with the ``extra`` settings, its store closed after the test."""
    application = create_app({**store_config(storage, tmp_path, request), **extra})
    yield application
    application.extensions["schocken"].store.close()


@pytest.fixture
def app(storage: str, request: pytest.FixtureRequest, tmp_path: Any) -> Iterator[Flask]:
    """The app on the test's ``storage`` (a SQLite file unless the test is marked ``stores``)."""
    yield from app_on(storage, tmp_path, request)


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


@pytest.fixture
def table(client: Any) -> Table:
    """A Stammtisch 'zur-post' with the players Anna, Bert, Clara, Dieter."""
    t = make_table(client)
    t.add_players(PLAYERS)
    return t


@pytest.fixture(scope="module")
def api_server(tmp_path_factory: Any) -> Iterator[str]:
    """A live server (werkzeug, threaded) on a SQLite file, per test module: its base URL,
    for the clients generated from openapi.yaml."""
    import threading

    from werkzeug.serving import make_server

    app = create_app({"DATABASE": str(tmp_path_factory.mktemp("client") / "c.sqlite3")})
    srv = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    app.extensions["schocken"].store.close()


# The storage-port contract suite (tests/test_storage_contract*.py, tests/storage_contract.py)
@pytest.fixture(scope="session")
def sqlite_template() -> SQLiteTemplate:
    """A SQLite file migrated once per worker; contract stores open copies of it (the apps'
    files too: :func:`store_config`)."""
    return _sqlite_template()


@pytest.fixture(scope="session")
def pg_tables(pg_cluster: Cluster) -> Iterator[Any]:
    """One PostgreSQL store per run for the contract suite, its tables emptied per test."""
    tables = PostgresTables(pg_cluster)
    yield tables
    tables.close()


@pytest.fixture(params=CONTRACT_STORES)
def contract(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The storage port under test on every store (tests/storage_contract.py)."""
    yield from contract_for(request.param, request)
