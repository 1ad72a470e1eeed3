"""Exceptions → HTTP, in one place, in flask-smorest's single error shape.

* engine :class:`~api.rules.MalformedInput` → 422, :class:`~api.rules.RuleViolation` → 409,
  with the engine's German message (and the field it names under ``errors.json``);
* use-case errors (:mod:`api.domain.errors`) by their kind: not found 404, conflict 409,
  invalid 422, no token 401, another Stammtisch's token 403;
* :class:`~api.storage.StorageUnavailable` (a full disk, a read-only database, a database
  server out of reach) → 503 with ``Retry-After`` and a German message naming the kind of
  fault (:func:`~api.domain.errors.unavailable_message`); the cause goes to the log;
* werkzeug errors keep their status (413 for oversized bodies, 405 with ``Allow``).
"""

from __future__ import annotations

from typing import Any

from flask import current_app
from flask_smorest import Api
from werkzeug.exceptions import HTTPException, default_exceptions

from schemas import ErrorSchema

from ..domain import (
    Conflict,
    DomainError,
    Forbidden,
    Invalid,
    NotFound,
    Unauthorized,
    unavailable_message,
)
from ..rules import MalformedInput, RuleViolation, SchockenError
from ..storage import StorageUnavailable

#: the one table from a use case's error to its HTTP status
STATUS: dict[type[DomainError], int] = {
    NotFound: 404,
    Conflict: 409,
    Invalid: 422,
    Unauthorized: 401,
    Forbidden: 403,
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


def _http(status: int, message: str, errors: dict[str, Any] | None = None) -> HTTPException:
    exc = default_exceptions[status]()
    data: dict[str, Any] = {"message": message}
    if errors:
        data["errors"] = errors
    if status == 401:
        data["headers"] = {"WWW-Authenticate": 'Bearer realm="schocken"'}
    exc.data = data  # type: ignore[attr-defined]
    return exc


class SchockenApi(Api):  # type: ignore[misc]  # flask-smorest ships no type information
    """flask-smorest's Api with our error schema, domain errors and headers kept."""

    ERROR_SCHEMA = ErrorSchema

    def _register_error_handlers(self) -> None:
        super()._register_error_handlers()
        self._app.register_error_handler(SchockenError, self.handle_domain_error)
        self._app.register_error_handler(DomainError, self.handle_domain_error)
        self._app.register_error_handler(StorageUnavailable, self.handle_unavailable)

    def handle_unavailable(self, error: StorageUnavailable) -> Any:
        log_unavailable(error)
        exc = _http(503, unavailable_message(error))
        exc.data["headers"] = {"Retry-After": str(RETRY_AFTER)}  # type: ignore[attr-defined]
        return self.handle_http_exception(exc)

    def handle_http_exception(self, error: HTTPException) -> Any:
        payload, code, headers = super().handle_http_exception(error)
        if not headers:  # werkzeug's own headers (Allow on 405) would be lost otherwise
            headers = {
                k: v
                for k, v in error.get_headers()
                if k.lower() in ("allow", "www-authenticate", "retry-after")
            }
        if code == 422 and "message" not in payload:
            payload["message"] = "Ungültige Eingabe: die Felder stehen unter errors."
        if code >= 500 and "message" not in payload:
            payload["message"] = "Interner Fehler; der Eintrag wurde nicht gespeichert."
        return payload, code, headers

    def handle_domain_error(self, error: Exception) -> Any:
        if isinstance(error, DomainError):
            exc = _http(status_of(error), error.message, _field_errors(error))
        elif isinstance(error, RuleViolation):
            exc = _http(409, error.message, _field_errors(error))
        elif isinstance(error, MalformedInput):
            exc = _http(422, error.message, _field_errors(error))
        else:  # pragma: no cover - every engine error is one of the two
            exc = _http(422, str(error))
        return self.handle_http_exception(exc)


def _field_errors(error: SchockenError | DomainError) -> dict[str, Any] | None:
    return {"json": {error.field: [error.message]}} if error.field else None
