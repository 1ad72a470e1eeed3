"""The application factory: ``create_app(config=None)``; nothing happens at import time.

It opens the store (a SQLite file, ``instance/schocken.sqlite3`` by default, created and
migrated on first start; an old DuckDB file ``instance/schocken.duckdb`` beside it is
converted then, see api/storage/convert.py), registers the resources under ``/api/v1``, the OpenAPI document at
``/openapi.json`` and Swagger UI at ``/docs``, served from the files of the
``flask-swagger-ui`` package (no CDN).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from flask import Blueprint, Flask, Response, send_from_directory

from dashboard import web as dashboard_web

from .config import check_storage, database_file, load_config, old_database_file
from .domain import GameCache
from .http import init_http
from .http.errors import SchockenApi
from .resources import admin, register, statistics
from .storage import open_store
from .web import init_web


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
    app = Flask(__name__, instance_relative_config=True)
    load_config(app.config, config)  # defaults, SCHOCKEN_* from the environment, `config`
    app.json.sort_keys = False  # type: ignore[attr-defined]

    if app.config.get("DATABASE_URL") and app.config["STORAGE"] == "sqlite":
        app.config["STORAGE"] = "postgresql"  # SCHOCKEN_DATABASE_URL=postgresql://…
    check_storage(app.config["STORAGE"])
    old = None
    if app.config["STORAGE"] == "sqlite" and not app.config.get("DATABASE"):
        os.makedirs(app.instance_path, exist_ok=True)
        app.config["DATABASE"] = database_file(app.instance_path)
        old = old_database_file(app.instance_path)
    postgres = app.config["STORAGE"] == "postgresql"
    where = app.config.get("DATABASE_URL") if postgres else app.config.get("DATABASE")
    store = open_store(app.config["STORAGE"], where, old)
    app.extensions["schocken"] = AppState(store, GameCache(app.config["GAME_CACHE_SIZE"]))

    api = SchockenApi(app)
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

    # statistics (dashboard/ queries): JSON under /api/v1, the static site at /dashboard/
    api.register_blueprint(statistics.blp)
    dashboard_web.init_app(app)
    app.extensions["schocken_api"] = api

    # the backup endpoint, POST /api/v1/admin/backup (api/resources/admin.py)
    admin.register(api)

    # retries, If-Match, rate limit, body limits, security headers (api/http)
    init_http(app, api)
    return app
