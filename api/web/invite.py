"""The invite link of a game: a second phone opens the game already logged in.

The link carries no key: it holds a token signed with the app's secret key (itsdangerous,
as Flask's session cookie) naming the Stammtisch and a piece of the hash of its current key,
valid for :data:`INVITE_SECONDS`. Opening it logs that browser in (a login row as with the
key, :func:`~.session.remember`) and shows the game. A new key ends every invite made before
(the piece of the hash no longer matches), as it ends every login. The game page shows the
link and its QR code (segno, an inline SVG: no script, no other host).
"""

from __future__ import annotations

import hmac

import segno
from flask import current_app, flash, redirect, render_template, url_for
from flask.typing import ResponseReturnValue
from itsdangerous import BadSignature, URLSafeTimedSerializer
from markupsafe import Markup

from ..domain import NotFound
from ..http.context import services
from ..storage import Stammtisch
from .blueprint import bp
from .session import remember

#: how long an invite link works: one evening at the table
INVITE_SECONDS = 12 * 3600
#: how much of the key's hash the token carries (enough to end with a new key)
KEY_PART = 16
SALT = "schocken-invite"


def _serializer() -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(current_app.config["SECRET_KEY"], salt=SALT)


def invite_url(st: Stammtisch, game_id: int) -> str:
    """The absolute link that opens game ``game_id`` logged in to ``st``."""
    token = _serializer().dumps({"s": st.slug, "k": st.token_hash[:KEY_PART], "g": game_id})
    return url_for("web.invite", token=token, _external=True)


@bp.app_template_filter("qr")
def invite_qr(url: str) -> Markup:
    """The QR code of ``url`` as an inline SVG (dark modules on a light card)."""
    svg = segno.make(url, error="m").svg_inline(scale=4, border=2, dark="#1f1a14")
    return Markup(svg.replace("<svg ", '<svg role="img" aria-label="QR-Code der Einladung" ', 1))


@bp.get("/einladung/<token>")
def invite(token: str) -> ResponseReturnValue:
    try:
        data = _serializer().loads(token, max_age=INVITE_SECONDS)
        st = services().stammtisch(str(data["s"]))
        game_id = int(data["g"])
        if not hmac.compare_digest(str(data["k"]), st.token_hash[:KEY_PART]):
            raise BadSignature("the key changed")
    except (BadSignature, NotFound, KeyError, TypeError, ValueError):
        message = (
            "Diese Einladung gilt nicht (mehr): sie ist abgelaufen, oder der Stammtisch hat "
            "einen neuen Schlüssel. Bitte eine neue zeigen lassen oder mit dem Schlüssel anmelden."
        )
        return render_template("error.html", code=404, message=message), 404
    remember(st)
    flash(f"Willkommen am Tisch von {st.name}: dieses Handy ist jetzt angemeldet.", "ok")
    return redirect(url_for("web.game", slug=st.slug, game_id=game_id), 303)
