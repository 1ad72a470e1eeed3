"""Configuration of the web application.

:class:`Config` holds the defaults; ``create_app(config)`` takes a mapping that overrides any key.
Every ``API_*`` / ``OPENAPI_*`` key is read once, when flask-smorest's ``Api`` is initialised.
"""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version


def _version() -> str:
    try:
        return version("schocken")
    except PackageNotFoundError:  # running from a source checkout without installation
        return "0.1.0"


class Config:
    """Defaults; environment variables ``SCHOCKEN_DATABASE`` and ``SCHOCKEN_STORAGE`` override."""

    #: path of the DuckDB file; ``None`` means ``<instance folder>/schocken.duckdb``;
    #: ``":memory:"`` an in-process database that vanishes with the process
    DATABASE: str | None = os.environ.get("SCHOCKEN_DATABASE")
    #: ``"duckdb"`` (the embedded default) or ``"memory"`` (the in-memory fake, for tests)
    STORAGE: str = os.environ.get("SCHOCKEN_STORAGE", "duckdb")
    #: DuckDB worker threads of the server. Its statements are small (one entry, one
    #: Stammtisch-year) and come from several request threads at once: splitting each over
    #: more threads only adds coordination (statistics of a Stammtisch-year: 85 → 66 ms here)
    DUCKDB_THREADS: int = int(os.environ.get("SCHOCKEN_DUCKDB_THREADS", "1"))
    #: threads that commit recorded entries (group commit), each with its own cursor: while
    #: one writes a batch, the next batch is written beside it (8 clients here: about +10 %)
    DUCKDB_WRITERS: int = int(os.environ.get("SCHOCKEN_DUCKDB_WRITERS", "2"))
    #: request bodies above this size get 413; a whole game log fits easily
    MAX_CONTENT_LENGTH: int = 1024 * 1024
    #: games whose engine state is kept in memory between requests (per process)
    GAME_CACHE_SIZE: int = 256
    #: biggest page of the game list
    MAX_PAGE_SIZE: int = 100

    # ---- the pub form (api/web) ----------------------------------------------------------
    #: signs the session cookie; ``None``: generated once into ``<instance>/secret_key``
    SECRET_KEY: str | None = os.environ.get("SCHOCKEN_SECRET_KEY")
    SESSION_COOKIE_NAME = "schocken_session"
    SESSION_COOKIE_HTTPONLY = True
    SESSION_COOKIE_SAMESITE = "Lax"
    #: ``True``: always ``Secure``; ``False``: ``Secure`` whenever the request is HTTPS
    SESSION_COOKIE_SECURE = os.environ.get("SCHOCKEN_COOKIE_SECURE", "") == "1"
    #: where the Stammtisch's statistics live (the dashboard)
    STATS_URL = "/dashboard/{slug}/"
    #: time zone of the pub table (dates shown on the pages, ``played_at`` of new games)
    WEB_TIMEZONE = "Europe/Berlin"

    API_TITLE = "Schocken scorekeeper API"
    API_VERSION = _version()
    OPENAPI_VERSION = "3.1.0"
    OPENAPI_URL_PREFIX = "/"
    OPENAPI_JSON_PATH = "openapi.json"
    OPENAPI_SWAGGER_UI_PATH = "/docs"
    #: Swagger UI is served from the files of the ``flask-swagger-ui`` package (no CDN)
    OPENAPI_SWAGGER_UI_URL = "/docs/static/"
    API_SPEC_OPTIONS = {
        "info": {
            "description": (
                "Record Schocken games from any client. The API validates every throw against "
                "the Stammtisch's house rules and computes Deckel, halves (Hälften), the Finale "
                "and Blattschuss. Writes need the Stammtisch's token as "
                "`Authorization: Bearer …`. Errors have one shape "
                "`{code, status, message, errors}`: 422 malformed input, 409 a move the rules "
                "forbid (German message naming the rule), 404, 401/403, 413."
            ),
            "license": {"name": "MIT", "identifier": "MIT"},
        },
        "servers": [{"url": "/", "description": "this server"}],
    }
