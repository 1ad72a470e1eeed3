"""The browser session of the pub form: the CSRF token of its forms and the Stammtische it is
logged in to.

A login is a row of the row store (:class:`~api.storage.WebSession`, shared by every server
process): the cookie holds per Stammtisch only an opaque random id, the row its sha256, the
hash of the Stammtisch's key at login and when it expires. Flask's cookie is signed, not
encrypted, so nothing in it may be worth reading. Logging out deletes the row: a saved copy of
the cookie no longer works anywhere; a changed key ends every login of its Stammtisch (the
hash in the row no longer matches).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Concatenate, ParamSpec
from urllib.parse import urlsplit

from flask import current_app, flash, redirect, request, session, url_for
from flask.typing import ResponseReturnValue

from ..http.context import services
from ..storage import Repository, Stammtisch, WebSession
from .blueprint import bp
from .forms import FormErrors
from .prg import reject

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
def _check_csrf() -> ResponseReturnValue | None:
    """A POST without this session's token records nothing: 400, shown (Post/Redirect/Get)
    on the page the form came from (the Referer of this server), else the start page."""
    if request.method != "POST":
        return None
    sent = request.form.get("csrf_token", "")
    expected = session.get("csrf", "")
    if not sent or not expected or not hmac.compare_digest(str(sent), str(expected)):
        flash(CSRF_FAILED, "error")
        return reject(_came_from(), 400, FormErrors())
    return None


def _came_from() -> str:
    """The path of the page the form was on, if it is one of this server's; else ``/``."""
    referrer = urlsplit(request.referrer or "")
    if referrer.netloc == request.host and referrer.path.startswith("/"):
        return referrer.path
    return url_for("web.home")


def _repository() -> Repository:
    """The request's repository (closed at the request's end)."""
    return services().repo


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


def logged_in() -> dict[str, str]:
    """Slug → opaque login id of every Stammtisch this session logged in to (some may have
    ended since: :func:`may_write` asks the store)."""
    auth = session.get("auth")
    return {str(k): str(v) for k, v in auth.items()} if isinstance(auth, dict) else {}


def may_write(st: Stammtisch) -> bool:
    """Whether this session holds a live login of ``st``: not logged out, not expired, made
    with the Stammtisch's current key."""
    session_id = logged_in().get(st.slug)
    if not session_id:
        return False
    login = _repository().get_web_session(_hash(session_id))
    return (
        login is not None
        and login.stammtisch_id == st.id
        and hmac.compare_digest(login.token_hash, st.token_hash)
        and login.expires_at > datetime.now(UTC)
    )


def remember(st: Stammtisch) -> None:
    """Log this session in to ``st``: a new login row, its opaque id in the cookie."""
    now = datetime.now(UTC)
    session_id = secrets.token_urlsafe(32)
    expires = now + current_app.permanent_session_lifetime
    repo = _repository()
    with repo.transaction():
        repo.purge_web_sessions(now)
        repo.add_web_session(WebSession(_hash(session_id), st.id, st.token_hash, expires))
    auth = logged_in()
    auth[st.slug] = session_id
    session["auth"] = auth
    session.permanent = True


def forget(slug: str) -> None:
    """Log out of ``slug``: the login ends in the store, not only in this cookie."""
    auth = logged_in()
    session_id = auth.pop(slug, None)
    if session_id:
        _repository().delete_web_session(_hash(session_id))
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
