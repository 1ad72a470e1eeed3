"""The pub form's Blueprint and what every page shares: asset URLs, the date filter, the
security headers of the one policy (api/http/headers.py) and the German error pages.

The pages themselves register on :data:`bp` in their own modules (see ``api/web/__init__.py``).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import Blueprint, current_app, render_template, request, url_for
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response

from ..domain import DomainError, unavailable_message
from ..http.errors import RETRY_AFTER, log_unavailable, status_of
from ..http.headers import STRICT_CSP, secure
from ..rules import count
from ..storage import StorageUnavailable


class _WebBlueprint(Blueprint):
    """Versioned assets (``?v=<content hash>``) are cached for a year; others revalidate."""

    def get_send_file_max_age(self, filename: str | None) -> int | None:
        if request.args.get("v"):
            return 365 * 24 * 3600
        return super().get_send_file_max_age(filename)


bp = _WebBlueprint(
    "web",
    __name__,
    template_folder="templates",
    static_folder="static",
    static_url_path="/assets",
)

#: German words for the HTTP errors a page can meet (werkzeug's own texts are English)
HTTP_ERRORS = {
    404: "Diese Seite gibt es nicht.",
    405: "So kann diese Seite nicht aufgerufen werden.",
    413: "Das Formular ist zu groß.",
    500: "Da ist etwas schiefgegangen. Bitte die Seite neu laden und den Stand prüfen.",
}


@bp.app_template_global()
def asset(filename: str) -> str:
    """The URL of a static file with its content hash, so a new version is fetched at once."""
    versions: dict[str, str] = current_app.extensions.setdefault("schocken_web_assets", {})
    if filename not in versions:
        assert bp.static_folder is not None
        data = (Path(bp.static_folder) / filename).read_bytes()
        versions[filename] = hashlib.sha256(data).hexdigest()[:12]
    return url_for("web.static", filename=filename, v=versions[filename])


@bp.get("/favicon.ico")
def favicon() -> Response:
    """The icon browsers ask for on every page without one of its own (``/docs``)."""
    return bp.send_static_file("icon.svg")


@bp.after_request
def _security_headers(response: Response) -> Response:
    """Every answer of the form (pages, assets, error pages): the strict policy; pages are
    not stored by the browser (they show a game's state and the session's CSRF token)."""
    secure(response, STRICT_CSP)
    if response.mimetype == "text/html":
        response.headers.setdefault("Cache-Control", "no-store")
    return response


@bp.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> tuple[str, int]:
    code = error.code or 500
    own = error.description if code == 400 else None  # the CSRF message is ours (German)
    message = own or HTTP_ERRORS.get(code, HTTP_ERRORS[500])
    return render_template("error.html", code=code, message=message), code


@bp.errorhandler(DomainError)
def _service_error(error: DomainError) -> tuple[str, int]:
    status = status_of(error)
    return render_template("error.html", code=status, message=error.message), status


@bp.errorhandler(StorageUnavailable)
def _unavailable(error: StorageUnavailable) -> tuple[str, int, dict[str, str]]:
    log_unavailable(error)
    page = render_template("error.html", code=503, message=unavailable_message(error))
    return page, 503, {"Retry-After": str(RETRY_AFTER)}


def zone() -> tzinfo:
    """The time zone of the table (``WEB_TIMEZONE``; UTC if unknown)."""
    try:
        return ZoneInfo(current_app.config["WEB_TIMEZONE"])
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


#: a number and its noun: ``1|count("Spiel", "Spiele")`` → "1 Spiel" (the one helper, as the
#: dashboard's templates use it)
bp.add_app_template_filter(count, "count")


@bp.app_template_filter("when")
def _when(value: Any) -> str:
    """An ISO timestamp as local date and time ("27.11.2026, 20:15")."""
    if not value:
        return ""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(zone()).strftime("%d.%m.%Y, %H:%M")
