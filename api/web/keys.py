"""The key of a Stammtisch in the form: shown once when it is made, and renewed on request.

A key is made at the moment it is shown: creating a Stammtisch or asking for a new key (a
POST) only notes in the session that this page shall show a fresh key; its next GET makes the
key (the old one stops working, every login made with it ends; this phone is logged in again
with the new one; every webhook of the Stammtisch is paused, and the page lists them) and
shows it. A reload shows no key and makes none, and no key ever travels
in the session cookie.
"""

from __future__ import annotations

from flask import redirect, render_template, session, url_for
from flask.typing import ResponseReturnValue

from ..http.context import services
from ..storage import Stammtisch
from .blueprint import bp
from .session import logged_in_to_stammtisch, remember

#: the session's note "show a new key on the key page of this Stammtisch"
PENDING = "new_key"
#: the session's note "this Stammtisch was just created" (the key page says so)
CREATED = "created"


def show_new_key(st: Stammtisch, created: bool = False) -> ResponseReturnValue:
    """Send the browser to the key page, which makes and shows a new key (once)."""
    session[PENDING] = st.slug
    if created:
        session[CREATED] = st.slug
    return redirect(url_for("web.key", slug=st.slug), 303)


@bp.get("/s/<slug>/schluessel")
@logged_in_to_stammtisch
def key(st: Stammtisch) -> ResponseReturnValue:
    token, webhooks = None, []
    created = session.pop(CREATED, None) == st.slug
    if session.pop(PENDING, None) == st.slug:
        svc = services()
        st, token = svc.rotate_key(st)
        webhooks = svc.webhooks(st)  # paused by the rotation: listed for whoever renewed it
        remember(st)
    return render_template("key.html", st=st, token=token, created=created, webhooks=webhooks)


@bp.post("/s/<slug>/schluessel")
@logged_in_to_stammtisch
def renew_key(st: Stammtisch) -> ResponseReturnValue:
    return show_new_key(st)
