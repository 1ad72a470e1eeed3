"""The browser session of the pub form: the CSRF token of its forms and the Stammtische it is
logged in to (the hash of each one's key, so a changed key logs every phone out)."""

from __future__ import annotations

import functools
import hmac
import secrets
from collections.abc import Callable
from typing import Concatenate, ParamSpec

from flask import abort, flash, redirect, request, session, url_for
from flask.typing import ResponseReturnValue

from ..http.context import services
from ..storage import Stammtisch
from .blueprint import bp

P = ParamSpec("P")

CSRF_FAILED = (
    "Die Sicherheitsprüfung des Formulars ist fehlgeschlagen (CSRF). Bitte die "
    "Seite neu laden und noch einmal versuchen."
)


@bp.app_template_global()
def csrf_token() -> str:
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(32)
    return str(token)


@bp.before_request
def _check_csrf() -> None:
    if request.method != "POST":
        return
    sent = request.form.get("csrf_token", "")
    expected = session.get("csrf", "")
    if not sent or not expected or not hmac.compare_digest(str(sent), str(expected)):
        abort(400, CSRF_FAILED)


def logged_in() -> dict[str, str]:
    """Slug → token hash of every Stammtisch this session logged in to."""
    auth = session.get("auth")
    return dict(auth) if isinstance(auth, dict) else {}


def may_write(st: Stammtisch) -> bool:
    token_hash = logged_in().get(st.slug)
    return bool(token_hash) and hmac.compare_digest(str(token_hash), st.token_hash)


def remember(st: Stammtisch) -> None:
    auth = logged_in()
    auth[st.slug] = st.token_hash
    session["auth"] = auth
    session.permanent = True


def forget(slug: str) -> None:
    auth = logged_in()
    auth.pop(slug, None)
    session["auth"] = auth


def logged_in_to_stammtisch(
    view: Callable[Concatenate[Stammtisch, P], ResponseReturnValue],
) -> Callable[..., ResponseReturnValue]:
    """The view gets the Stammtisch of ``<slug>`` if this session is logged in to it;
    otherwise the answer is a redirect to the login."""

    @functools.wraps(view)
    def wrapper(slug: str, *args: P.args, **kwargs: P.kwargs) -> ResponseReturnValue:
        st = services().stammtisch(slug)
        if not may_write(st):
            flash("Bitte mit dem Schlüssel des Stammtischs anmelden.", "info")
            return redirect(url_for("web.home", stammtisch=slug))
        return view(st, *args, **kwargs)

    return wrapper
