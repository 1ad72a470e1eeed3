"""The resources' blueprints, and who may call an operation below a Stammtisch with its
OpenAPI document in one decorator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..http.blueprint import Blueprint
from ..http.context import BEARER, OPTIONAL_BEARER, read_access, write_access

F = TypeVar("F", bound=Callable[..., Any])

#: the URL of a Stammtisch, below ``/api/v1``
STAMMTISCH = "/stammtische/<slug>"


def blueprint(module: str, path: str, description: str) -> Blueprint:
    """The blueprint of the resource module ``module`` (named after it) at ``/api/v1<path>``."""
    return Blueprint(
        module.rsplit(".", 1)[1], module, url_prefix="/api/v1" + path, description=description
    )


NAMES = {401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND", 409: "CONFLICT"}


def _guarded(
    blp: Blueprint, access: Callable[[F], F], security: Any, operation_id: str, errors: Any
) -> Callable[[F], F]:
    def wrap(func: F) -> F:
        for code in (404, 401, 403, *errors):
            func = blp.alt_response(code, response=NAMES[code])(func)
        return access(blp.doc(security=security, operationId=operation_id)(func))

    return wrap


def reads(blp: Blueprint, operation_id: str, *errors: int) -> Callable[[F], F]:
    """Outermost decorator of a read: public, but a private Stammtisch needs its token."""
    return _guarded(blp, read_access, OPTIONAL_BEARER, operation_id, errors)


def writes(blp: Blueprint, operation_id: str, *errors: int) -> Callable[[F], F]:
    """Outermost decorator of a write: the token first (401/403/404), then the body."""
    return _guarded(blp, write_access, BEARER, operation_id, errors)
