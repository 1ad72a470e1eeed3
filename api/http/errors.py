"""Exceptions → HTTP, in one place, as RFC 9457 problem details (:mod:`api.http.problems`).

* engine :class:`~api.rules.MalformedInput` → 422, :class:`~api.rules.RuleViolation` → 409,
  with the engine's German message (and the field it names under ``errors.json``);
* use-case errors (:mod:`api.domain.errors`) by their kind: not found 404, conflict 409,
  invalid 422, no token 401, another Stammtisch's token 403;
* :class:`~api.storage.StorageUnavailable` (a full disk, a read-only database, a database
  server out of reach) → 503 with ``Retry-After`` and a German message naming the kind of
  fault (:func:`~api.domain.errors.unavailable_message`); the cause goes to the log;
* werkzeug errors keep their status (413 for oversized bodies, 405 with ``Allow``), and get
  the problem shape and a code by status too (an unknown route: 404 ``not_found``).

An error's ``code`` comes from the exception (``error.code`` of engine and use-case errors,
``problem=`` in :func:`webargs.flaskparser.abort`'s data), else from its status.
"""

from __future__ import annotations

import http
from typing import Any

from flask import Response, current_app
from flask_smorest import Api
from flask_smorest.utils import prepare_response
from werkzeug.exceptions import HTTPException, default_exceptions

from schemas import ErrorSchema

from .. import domain
from ..domain import DomainError
from ..rules import RuleViolation, SchockenError
from ..storage import StorageUnavailable, StorageUnreachable
from . import problems

#: the one table from a use case's error to its HTTP status
STATUS: dict[type[DomainError], int] = {
    domain.NotFound: 404,
    domain.Conflict: 409,
    domain.Invalid: 422,
    domain.Unauthorized: 401,
    domain.Forbidden: 403,
}


#: seconds a client should wait before it tries again after a 503
RETRY_AFTER = 5


def log_unavailable(error: StorageUnavailable) -> None:
    """The cause of a 503 for the operator (the client gets the German message only)."""
    current_app.logger.error("Datenbank nicht verfügbar, nichts gespeichert: %s", error)


def status_of(error: DomainError) -> int:
    for kind, status in STATUS.items():
        if isinstance(error, kind):
            return status
    raise TypeError(f"no HTTP status for {type(error).__name__}")  # pragma: no cover


def _http(
    status: int, message: str, errors: dict[str, Any] | None = None, code: str | None = None
) -> HTTPException:
    exc = default_exceptions[status]()
    data: dict[str, Any] = {"message": message, "problem": code}
    if errors:
        data["errors"] = errors
    exc.data = data  # type: ignore[attr-defined]
    return exc


#: headers of werkzeug's own answers that a client needs
_KEPT_HEADERS = ("allow", "www-authenticate", "retry-after")


class SchockenApi(Api):  # type: ignore[misc]  # flask-smorest ships no type information
    """flask-smorest's Api answering every error as RFC 9457 problem details
    (:mod:`api.http.problems`), with our domain errors and werkzeug's headers kept."""

    ERROR_SCHEMA = ErrorSchema

    def init_app(self, app: Any, *, spec_kwargs: dict[str, Any] | None = None) -> None:
        """flask-smorest's set-up, then ours through public means only: the domain's errors
        get handlers, and the documented error answers are problem+json (each status's
        response component registered again, lazily, before anything refers to it)."""
        super().init_app(app, spec_kwargs=spec_kwargs)
        app.register_error_handler(SchockenError, self.handle_domain_error)
        app.register_error_handler(DomainError, self.handle_domain_error)
        app.register_error_handler(StorageUnavailable, self.handle_unavailable)
        for status in http.HTTPStatus:
            response: dict[str, Any] = {"description": status.phrase}
            if not (100 <= status < 200) and status not in (204, 304):
                response["schema"] = self.ERROR_SCHEMA
            self._problem_response(status.name, response)
        default = {"description": "Default error response", "schema": self.ERROR_SCHEMA}
        self._problem_response("DEFAULT_ERROR", default)

    def _problem_response(self, name: str, response: dict[str, Any]) -> None:
        prepare_response(response, self.spec, problems.PROBLEM_JSON)
        self.spec.components.response(name, response, lazy=True)

    def handle_unavailable(self, error: StorageUnavailable) -> Any:
        log_unavailable(error)
        code = "database_unreachable" if isinstance(error, StorageUnreachable) else None
        exc = _http(503, domain.unavailable_message(error), code=code or "storage_unavailable")
        exc.data["headers"] = {"Retry-After": str(RETRY_AFTER)}  # type: ignore[attr-defined]
        return self.handle_http_exception(exc)

    def handle_http_exception(self, error: HTTPException) -> Response:
        status = error.code or 500
        data: dict[str, Any] = getattr(error, "data", None) or {}
        headers = dict(data.get("headers") or {})
        for name, value in error.get_headers():  # werkzeug's own (Allow on 405)
            if name.lower() in _KEPT_HEADERS:
                headers.setdefault(name, value)
        if status == 401:
            headers.setdefault("WWW-Authenticate", 'Bearer realm="schocken"')
        errors = data.get("errors") or data.get("messages")
        message = data.get("message")
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        if status == 413 and message is None and limit:
            message = f"Die Anfrage ist zu groß: höchstens {limit} Bytes."
        doc = problems.body(status, data.get("problem"), message, errors)
        return problems.response(doc, headers)

    def handle_domain_error(self, error: Exception) -> Any:
        if isinstance(error, DomainError):
            status = status_of(error)
        elif isinstance(error, RuleViolation):
            status = 409
        else:  # MalformedInput; every engine error is one of the two
            status = 422
        message = getattr(error, "message", str(error))
        errors = _field_errors(error) if isinstance(error, SchockenError | DomainError) else None
        exc = _http(status, message, errors, getattr(error, "code", None))
        return self.handle_http_exception(exc)


def _field_errors(error: SchockenError | DomainError) -> dict[str, Any] | None:
    return {"json": {error.field: [error.message]}} if error.field else None
