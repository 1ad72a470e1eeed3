"""Configuration of the web application: one object, three layers, read when an app is made.

:class:`Config` holds every default as a plain value; `load_config` (called by ``create_app``)
puts them into ``app.config``, then the environment through Flask's
``app.config.from_prefixed_env("SCHOCKEN")`` (``SCHOCKEN_DATABASE`` sets ``DATABASE``,
``SCHOCKEN_WRITE_RATE_PER_MINUTE`` sets ``WRITE_RATE_PER_MINUTE``, …), then the mapping given to
``create_app(config)``, which wins. Nothing is read at import time.

An environment value becomes the type of the setting's default: ``SCHOCKEN_DUCKDB_THREADS=4``
an ``int``, ``SCHOCKEN_COOKIE_SECURE=1`` (or ``true``/``yes``/``on``) ``True``, and a string
setting stays the string it is (a secret key of digits is not a number). A variable for a
setting without a default here is parsed as JSON, as Flask does, else kept as a string.

Every ``API_*`` / ``OPENAPI_*`` key is read once, when flask-smorest's ``Api`` is initialised.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any, get_type_hints

from flask import Config as FlaskConfig
from flask import Flask

#: environment variables ``SCHOCKEN_<KEY>`` set the setting ``<KEY>``
PREFIX = "SCHOCKEN"
#: the app's import name (``create_app`` in :mod:`api.app`): its instance folder
APP_NAME = "api.app"
#: spellings of "yes" for a boolean setting in the environment
TRUE = frozenset({"1", "true", "yes", "on"})


def _version() -> str:
    try:
        return version("schocken")
    except PackageNotFoundError:  # running from a source checkout without installation
        return "0.1.0"


class Config:
    """Every default of the app; ``SCHOCKEN_<KEY>`` in the environment overrides ``<KEY>``."""

    # ---- storage -------------------------------------------------------------------------
    #: path of the database file; ``None`` means ``<instance folder>/schocken.sqlite3``. Its
    #: instance data (secret key, admin token, dashboard assets) lives beside it: in the
    #: instance folder for that default file, else in the folder ``<DATABASE>-instance``
    #: (:func:`instance_folder`), so servers on different databases share none of it
    DATABASE: str | None = None
    #: ``"sqlite"`` (the store of record, embedded: one file in WAL mode; see
    #: api/storage/sqlite) or ``"memory"`` (the in-memory fake, for tests). ``"duckdb"`` is
    #: gone: an old DuckDB file becomes a SQLite file with ``schocken convert`` (the default
    #: ``instance/schocken.duckdb`` on the first start by itself)
    STORAGE: str = "sqlite"
    #: ``postgresql://…``: PostgreSQL as the store of record (api/storage/postgres; STORAGE
    #: becomes ``"postgresql"``); ``None``: STORAGE as set
    DATABASE_URL: str | None = None
    #: DuckDB worker threads of the statistics engine (its statements are small, one
    #: Stammtisch-year: splitting each over more threads only adds coordination)
    DUCKDB_THREADS: int = 1
    #: request bodies above this size get 413; a whole game log fits easily
    MAX_CONTENT_LENGTH: int = 1024 * 1024
    #: games whose engine state is kept in memory between requests (per process)
    GAME_CACHE_SIZE: int = 256
    #: biggest page of the game list
    MAX_PAGE_SIZE: int = 100

    # ---- reliability (api/reliability.py) --------------------------------------------------
    #: writes per minute and token (0: no limit), refilled continuously up to the burst
    WRITE_RATE_PER_MINUTE: float = 3000.0
    WRITE_RATE_BURST: int = 1000
    #: new Stammtische per hour and client address (API and form; 0: no limit), and burst
    CREATE_RATE_PER_HOUR: float = 60.0
    CREATE_RATE_BURST: int = 20
    #: logins with a key through the form, per minute and client address (0: no limit)
    LOGIN_RATE_PER_MINUTE: float = 30.0
    LOGIN_RATE_BURST: int = 10
    #: reverse proxies in front of the server whose X-Forwarded-For/-Proto/-Host are trusted
    #: (werkzeug's ProxyFix); 0: none, the client address is the connection's
    TRUSTED_PROXIES: int = 0
    #: the address ``schocken serve`` listens on (it sets it); on loopback (127.0.0.1, ::1,
    #: localhost) and with no proxy in front, the start page shows the demo's key
    LISTEN_HOST: str | None = None
    #: how long the answer of an idempotent write is kept for a repeat
    IDEMPOTENCY_TTL_HOURS: int = 48
    #: JSON bodies nested deeper than this are a 422
    MAX_JSON_DEPTH: int = 32
    #: token of ``POST /api/v1/admin/backup``; ``None``: generated once into
    #: ``<instance>/admin_token`` (``<instance>``: the database's folder, see DATABASE)
    ADMIN_TOKEN: str | None = None

    # ---- webhooks (api/domain/webhooks.py, the sender api/domain/sender.py) ----------------
    #: receivers on this machine's loopback (``http://localhost``, 127.0.0.0/8, [::1]) allowed,
    #: at registration and when the sender connects? ``None``: yes on the embedded SQLite store
    #: (and in tests), no when hosted on PostgreSQL. Private, link-local and other non-public
    #: addresses are refused whatever this says (SCHOCKEN_WEBHOOK_LOOPBACK=1 / 0)
    WEBHOOK_LOOPBACK: bool | None = None
    #: the admin view of ``/api/v1/health`` calls the webhook sender behind when a due delivery
    #: of a webhook with no attempt in flight has waited this many seconds
    WEBHOOK_BEHIND_SECONDS: float = 30.0

    # ---- live events (api/http/sse.py, api/http/hub.py) ------------------------------------
    #: seconds between the heartbeats (``: ping``) of an event stream
    EVENT_HEARTBEAT_SECONDS: float = 15.0
    #: event streams one server process holds at most (503 beyond); ``schocken serve`` lowers
    #: it to what the open-files limit allows (api/cli/serving.py)
    EVENT_STREAMS_PER_PROCESS: int = 1000
    #: event streams of one client address one server process holds at most (429 beyond;
    #: the address is the proxy's X-Forwarded-For with TRUSTED_PROXIES)
    EVENT_STREAMS_PER_CLIENT: int = 100
    #: bytes a stream may have waiting for a slow client before it is dropped
    EVENT_BUFFER_BYTES: int = 256 * 1024
    #: without ``schocken serve``'s stream hub (a development server, the test client): a
    #: stream polls the store this often and ends after ``EVENT_STREAM_SECONDS`` (clients
    #: reconnect with their last id)
    EVENT_POLL_SECONDS: float = 0.25
    EVENT_STREAM_SECONDS: float = 60.0

    # ---- the pub form (api/web) ----------------------------------------------------------
    #: signs the session cookie; ``None``: generated once into ``<instance>/secret_key``
    SECRET_KEY: str | None = None
    SESSION_COOKIE_NAME: str = "schocken_session"
    SESSION_COOKIE_HTTPONLY: bool = True
    SESSION_COOKIE_SAMESITE: str = "Lax"
    #: the cookie is sent only with an answer that changed the session (a login, a shown
    #: announcement): an engine file loading beside a page would otherwise send back the
    #: cookie it came with, and an announcement the page just showed would come back
    SESSION_REFRESH_EACH_REQUEST: bool = False
    #: ``True`` (``SCHOCKEN_COOKIE_SECURE=1``): the session cookie is always ``Secure``;
    #: ``False``: ``Secure`` whenever the request is HTTPS. Sets ``SESSION_COOKIE_SECURE``.
    COOKIE_SECURE: bool = False
    SESSION_COOKIE_SECURE: bool = False
    #: where the Stammtisch's statistics live (the dashboard)
    STATS_URL: str = "/dashboard/{slug}/"
    #: time zone of the pub table (dates shown on the pages, ``played_at`` of new games)
    WEB_TIMEZONE: str = "Europe/Berlin"
    #: the pub TV (``/tv/<slug>``) re-reads its board this often (seconds) besides every event
    #: of the stream: what a silently dead connection missed shows up by then
    TV_REFRESH_SECONDS: int = 60

    # ---- the statistics site (dashboard/web.py) ------------------------------------------
    #: folder of the dashboard's assets; ``None``: ``<instance>/dashboard`` (the database's
    #: instance folder); one that cannot be written: served from the installed packages
    DASHBOARD_DIR: str | None = None

    # ---- the OpenAPI document ------------------------------------------------------------
    API_TITLE: str = "Schocken scorekeeper API"
    API_VERSION: str = _version()
    OPENAPI_VERSION: str = "3.1.0"
    OPENAPI_URL_PREFIX: str = "/"
    OPENAPI_JSON_PATH: str = "openapi.json"
    OPENAPI_SWAGGER_UI_PATH: str = "/docs"
    #: Swagger UI is served from the files of the ``flask-swagger-ui`` package (no CDN)
    OPENAPI_SWAGGER_UI_URL: str = "/docs/static/"
    API_SPEC_OPTIONS: dict[str, Any] = {
        "info": {
            "description": (
                "Record Schocken games from any client. The API validates every throw against "
                "the Stammtisch's house rules and computes Deckel, halves (Hälften), the Finale "
                "and Blattschuss. Writes need the Stammtisch's token as "
                "`Authorization: Bearer …`. Errors: see below. On this server: the pub form "
                "[Deckelzähler](/), the [statistics](/dashboard/) and the demo Stammtisch's "
                "[statistics](/dashboard/demo/) (after `schocken demo`)."
            ),
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": [{"url": "/", "description": "this server"}],
    }


@functools.cache
def _hints() -> dict[str, Any]:
    return get_type_hints(Config)


class _Raw(str):
    """A value as the environment spells it, before :func:`_typed` converts it."""


def _typed(key: str, value: Any) -> Any:
    """An environment value as the type of the setting's default (see the module's text)."""
    if isinstance(value, dict):
        return {k: _typed("", v) for k, v in value.items()}
    if not isinstance(value, _Raw):
        return value
    raw = str(value)
    kind = _hints().get(key)
    try:
        if kind is bool or kind == bool | None:
            return raw.strip().lower() in TRUE
        if kind is int:
            return int(raw)
        if kind is float:
            return float(raw)
    except ValueError:
        raise ValueError(f"{PREFIX}_{key}={raw!r}: expected a number") from None
    if kind in (str, str | None):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def load_config(config: FlaskConfig, overrides: Mapping[str, Any] | None = None) -> None:
    """Fill ``config``: the defaults of :class:`Config`, the environment, then ``overrides``."""
    config.from_object(Config)
    for key, value in config.items():  # no app may change the class's nested defaults
        if isinstance(value, dict | list):
            config[key] = copy.deepcopy(value)
    config.from_prefixed_env(PREFIX, loads=_Raw)
    for key, value in list(config.items()):
        config[key] = _typed(key, value)
    if config["COOKIE_SECURE"]:
        config["SESSION_COOKIE_SECURE"] = True
    if overrides:
        config.update(overrides)


def settings(overrides: Mapping[str, Any] | None = None) -> FlaskConfig:
    """The configuration an app made now would get, without making one (for the CLI)."""
    config = FlaskConfig(instance_path())
    load_config(config, overrides)
    return config


def instance_path() -> str:
    """The app's instance folder (``instance/`` of a source checkout)."""
    return Flask(APP_NAME, instance_relative_config=True).instance_path


#: the database file in the instance folder when DATABASE is not set
DATABASE_FILE = "schocken.sqlite3"
#: the folder of another database's instance data: the database file's path and this
INSTANCE_SUFFIX = "-instance"
#: the default database file of the retired DuckDB store: converted on the first start
OLD_DATABASE_FILE = "schocken.duckdb"
#: what to do instead of ``STORAGE=duckdb``
DUCKDB_GONE = (
    "SCHOCKEN_STORAGE=duckdb gibt es nicht mehr: SQLite ist der Speicher (Standard, "
    "SCHOCKEN_STORAGE weglassen). Eine DuckDB-Datei umwandeln: schocken convert --from "
    "ALT.duckdb --to NEU.sqlite3 / STORAGE=duckdb is gone: SQLite is the store; convert an "
    "old DuckDB file with `schocken convert --from OLD.duckdb --to NEW.sqlite3`."
)


def check_storage(storage: str) -> None:
    """Refuse a STORAGE that does not exist (``duckdb``: with the way to convert)."""
    if storage == "duckdb":
        raise ValueError(DUCKDB_GONE)
    if storage not in ("sqlite", "memory", "postgresql"):
        raise ValueError(f"unknown STORAGE {storage!r} (sqlite, postgresql or memory)")


def database_file(instance: str) -> str:
    """The default database file in the instance folder ``instance``."""
    return os.path.join(instance, DATABASE_FILE)


def old_database_file(instance: str) -> str:
    """The retired DuckDB store's default file in the instance folder ``instance``."""
    return os.path.join(instance, OLD_DATABASE_FILE)


def default_database() -> str:
    """The database file ``schocken serve`` opens: ``DATABASE`` (``SCHOCKEN_DATABASE``) or
    ``schocken.sqlite3`` in the instance folder."""
    config = settings()
    return str(config["DATABASE"] or database_file(instance_path()))


def old_default_database() -> str | None:
    """The old DuckDB file to convert on the first start: ``schocken.duckdb`` in the instance
    folder, when DATABASE is not set (None otherwise)."""
    return None if settings()["DATABASE"] else old_database_file(instance_path())


def instance_folder(database: str | None, instance: str) -> str:
    """The folder of the instance data (secret key, admin token, dashboard assets) that belongs
    to the database file ``database``: the app's instance folder ``instance`` for its default
    file ``instance/schocken.sqlite3`` (where they always were) and for no file (the in-memory
    store), else ``<database>-instance`` beside the file."""
    if not database or database == ":memory:":
        return instance
    if os.path.realpath(database) == os.path.realpath(database_file(instance)):
        return instance
    return os.path.abspath(database) + INSTANCE_SUFFIX


def default_instance_folder() -> str:
    """The instance data of the database ``schocken serve`` opens (:func:`default_database`):
    where a command finds its admin token."""
    return instance_folder(default_database(), instance_path())
