"""Post/Redirect/Get for rejected forms: a POST never answers with a page.

A rejected form keeps what was entered and the German messages in the session (once, for the
next GET of its page) and answers ``303 See Other`` to that page; the page shows them with the
status of the rejection (422, 409, 429 with ``Retry-After``). The address bar so never holds a
POST target, and a reload only reloads the page: it never sends the form again.

What is kept is only what the user typed (never a key: the login form keeps the Kurzname
only) and the messages; Flask's cookie is signed, not encrypted.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from flask import redirect, request, session
from werkzeug.wrappers import Response

from ..domain import DomainError
from .forms import FormErrors

KEY = "rejected"


def reject(url: str, status: int, errors: FormErrors, **entered: Any) -> Response:
    """Keep ``errors`` and the ``entered`` values (JSON-like) for the page at ``url``, and
    send the browser there."""
    session[KEY] = {
        "path": urlsplit(url).path,
        "status": status,
        "errors": errors.fields,
        "entered": entered,
    }
    return redirect(url, 303)


def rejected() -> tuple[int, FormErrors, dict[str, Any]]:
    """The status, messages and entered values kept for this page (once), else 200 and none."""
    kept = session.get(KEY)
    if not isinstance(kept, dict) or kept.get("path") != request.path:
        return 200, FormErrors(), {}
    session.pop(KEY)
    errors = FormErrors({str(k): list(v) for k, v in dict(kept.get("errors") or {}).items()})
    return int(kept.get("status") or 422), errors, dict(kept.get("entered") or {})


@contextmanager
def refused(errors: FormErrors, field: str) -> Iterator[None]:
    """A use case's refusal inside (:class:`~api.domain.DomainError`) becomes the form's
    message on ``field``; the rest of the block runs only when nothing was refused."""
    try:
        yield
    except DomainError as err:
        errors.add(field, err.message)
