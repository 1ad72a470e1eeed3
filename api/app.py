"""The application factory: ``create_app(config=None)``; nothing happens at import time.

It opens the store (a SQLite file, ``instance/schocken.sqlite3`` by default, created and
migrated on first start; an old DuckDB file ``instance/schocken.duckdb`` beside it is
converted then, see api/storage/convert.py), with the instance data of that database (secret
key, admin token, dashboard assets) in the folder that belongs to it (api/config.py:
``instance/`` for the default file, ``<DATABASE>-instance`` for any other); an unusable
database or folder stops it with a :class:`~api.startup.StartupError` naming the cause. It
registers the resources under ``/api/v1``, the OpenAPI document at
``/openapi.json`` and Swagger UI at ``/docs``, served from the files of the
``flask-swagger-ui`` package (no CDN).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Flask, Response, send_from_directory

from dashboard import web as dashboard_web

from .config import (
    check_storage,
    database_file,
    instance_folder,
    load_config,
    old_database_file,
)
from .domain import GameCache
from .http import init_http
from .http.blueprint import register_converters
from .http.errors import SchockenApi
from .jinja_cache import compiled_templates
from .resources import admin, register, statistics
from .startup import StartupError, check_database, describe, make_folder
from .storage import open_store
from .web import SECRET_FILE, init_web

if TYPE_CHECKING:
    from .storage import Store


@dataclass
class AppState:
    store: Any
    cache: GameCache


def _docs_static() -> Blueprint:
    dist = str(files("flask_swagger_ui").joinpath("dist"))
    bp = Blueprint("docs_static", __name__)

    @bp.route("/docs/static/<path:filename>")
    def docs_static(filename: str) -> Response:
        return send_from_directory(dist, filename, max_age=86400)

    return bp


def create_app(config: dict[str, Any] | None = None) -> Flask:
    """The app; :class:`~api.startup.StartupError` (one line naming the cause) when its
    database or its instance folder is unusable."""
    app = Flask(__name__, instance_relative_config=True)
    app.jinja_options = {**app.jinja_options, "bytecode_cache": compiled_templates("web")}
    load_config(app.config, config)  # defaults, SCHOCKEN_* from the environment, `config`
    app.json.sort_keys = False  # type: ignore[attr-defined]

    if app.config.get("DATABASE_URL") and app.config["STORAGE"] == "sqlite":
        app.config["STORAGE"] = "postgresql"  # SCHOCKEN_DATABASE_URL=postgresql://…
    check_storage(app.config["STORAGE"])
    store = _open_store(app)
    try:
        _build(app, store)
    except BaseException as err:
        store.close()
        if isinstance(err, OSError | sqlite3.Error):
            raise StartupError(describe(err, app.config.get("DATABASE"))) from err
        raise
    return app


def _open_store(app: Flask) -> Store:
    """The store of ``STORAGE``. A SQLite file (default: ``instance/schocken.sqlite3``, an old
    ``instance/schocken.duckdb`` converted first) is checked before it is opened, and its
    instance data gets its own folder (:func:`~api.config.instance_folder`), made now."""
    if app.config["STORAGE"] == "postgresql":
        try:
            return open_store("postgresql", app.config.get("DATABASE_URL"))
        except OSError as err:
            raise StartupError(describe(err, app.config.get("DATABASE_URL"))) from err
    if app.config["STORAGE"] != "sqlite":
        return open_store(app.config["STORAGE"], app.config.get("DATABASE"))
    old = None
    if not app.config.get("DATABASE"):
        app.config["DATABASE"] = database_file(app.instance_path)
        old = old_database_file(app.instance_path)
    database = str(app.config["DATABASE"])
    app.instance_path = instance_folder(database, app.instance_path)
    check_database(database)
    make_folder(app.instance_path, "Der Instanzordner")
    if not app.config.get("SECRET_KEY"):
        secret = os.path.join(app.instance_path, SECRET_FILE)
        if not os.path.exists(secret) and not os.access(app.instance_path, os.W_OK | os.X_OK):
            raise StartupError(
                f"Keine Schreibrechte im Instanzordner {app.instance_path}: der Schlüssel der "
                f"Sitzungen ({SECRET_FILE}) ist dort anzulegen (den Ordner beschreibbar machen "
                "oder SCHOCKEN_SECRET_KEY setzen)."
            )
    try:
        return open_store("sqlite", database, old)
    except (OSError, sqlite3.Error) as err:
        raise StartupError(describe(err, database)) from err


def _build(app: Flask, store: Store) -> None:
    """Everything of the app on its open store."""
    app.extensions["schocken"] = AppState(store, GameCache(app.config["GAME_CACHE_SIZE"]))

    api = SchockenApi(app)
    register_converters(app, api)  # <id:…> in the routes below (api/http/blueprint.py)
    api.spec.components.security_scheme(
        "bearerAuth",
        {
            "type": "http",
            "scheme": "bearer",
            "description": "The Stammtisch's write token, returned once when it is created.",
        },
    )
    register(api)
    app.register_blueprint(_docs_static())

    # the pub form at / (api/web): secret key, session cookie, CSRF, security headers
    init_web(app)

    # statistics (dashboard/ queries): JSON under /api/v1, the site at /dashboard/
    api.register_blueprint(statistics.blp)
    try:
        dashboard_web.init_app(app)
    except StartupError:
        raise
    except RuntimeError as err:  # a DASHBOARD_DIR that is not the dashboard's
        raise StartupError(str(err)) from err
    app.extensions["schocken_api"] = api

    # the backup endpoint, POST /api/v1/admin/backup (api/resources/admin.py)
    admin.register(api)

    # retries, If-Match, rate limit, body limits, security headers (api/http)
    init_http(app, api)
