"""The one security-header policy of every HTML page (pub form, API docs, dashboard).

* ``Content-Security-Policy``: everything from this server only; no frames, plugins or foreign
  form targets. The pub form's pages (and its assets) get the strict policy, :data:`STRICT_CSP`,
  without any inline code. Pages that carry inline scripts of their own (Swagger UI's start-up,
  the dashboard's figures) get exactly those scripts allowed by hash, and inline styles
  (:func:`csp_for`);
* ``X-Content-Type-Options: nosniff``, ``X-Frame-Options: DENY``, a ``Permissions-Policy``
  without camera, microphone and location;
* ``Referrer-Policy: same-origin``: no other site learns a URL of ours (they name the
  Stammtisch and the game), while this server still gets the real ``Origin`` of a form POST;
  ``no-referrer`` would make browsers send ``Origin: null`` there, which defeats any origin
  check (a proxy's, or a later defence in depth next to the CSRF token);
* ``Strict-Transport-Security`` only on HTTPS requests: a laptop serving plain HTTP on the
  pub's Wi-Fi must stay reachable; for the same reason the session cookie (the pub form's
  login, signed) is ``Secure`` when the request came over HTTPS, or always with
  ``SESSION_COOKIE_SECURE`` (:class:`SessionCookies`).

A header the response already set is kept.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

from flask import Flask, Request, has_request_context, request
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface, SessionMixin
from flask.wrappers import Response as FlaskResponse
from werkzeug.wrappers import Response

REFERRER_POLICY = "same-origin"
HSTS = "max-age=31536000"
#: the headers every page gets besides its Content-Security-Policy
HEADERS: dict[str, str] = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": REFERRER_POLICY,
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}

_DIRECTIVES = (
    ("default-src", "'self'"),
    ("script-src", "'self'"),
    ("style-src", "'self'"),
    ("img-src", "'self' data:"),
    ("font-src", "'self'"),
    ("connect-src", "'self'"),
    ("form-action", "'self'"),
    ("frame-ancestors", "'none'"),
    ("base-uri", "'none'"),
    ("object-src", "'none'"),
)
_INLINE_SCRIPT = re.compile(rb"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", re.S | re.I)


def content_security_policy(scripts: Iterable[str] = (), inline_styles: bool = False) -> str:
    """The policy's CSP, allowing the given extra script sources and, if asked, inline styles."""
    extra = {"script-src": [*scripts], "style-src": ["'unsafe-inline'"] if inline_styles else []}
    return "; ".join(" ".join([name, value, *extra.get(name, [])]) for name, value in _DIRECTIVES)


#: the pub form: no inline scripts or styles at all
STRICT_CSP = content_security_policy()
#: the browser's rules engine (a Web Worker running Pyodide, api/web/engine.py): the strict
#: policy, plus compiling WebAssembly; a dedicated worker runs under its script's own policy
ENGINE_WORKER_CSP = content_security_policy(["'wasm-unsafe-eval'"])


def csp_for(body: bytes) -> str:
    """The CSP of a page with inline scripts: each of them allowed by its SHA-256 hash."""
    hashes = (
        "'sha256-" + base64.b64encode(hashlib.sha256(script).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(body)
    )
    return content_security_policy(hashes, inline_styles=True)


def secure(response: Response, csp: str | None = None) -> Response:
    """Set the policy's headers the response does not set itself. ``csp``: the page's
    Content-Security-Policy; by default the one that allows the page's own inline scripts."""
    headers = response.headers
    if "Content-Security-Policy" not in headers:
        if csp is None:
            response.direct_passthrough = False  # a page sent from a file: read it (small)
            csp = csp_for(response.get_data())
        headers["Content-Security-Policy"] = csp
    for name, value in HEADERS.items():
        headers.setdefault(name, value)
    if request.is_secure:
        headers.setdefault("Strict-Transport-Security", HSTS)
    return response


def secure_html(response: Response) -> Response:
    """The app-wide hook: every HTML page that did not set its own headers gets the policy's."""
    if response.mimetype == "text/html":
        secure(response)
    return response


class SessionCookies(SecureCookieSessionInterface):
    """Flask's signed session cookie, ``Secure`` when configured so (``SESSION_COOKIE_SECURE``)
    or when the request is HTTPS (see the module's description). A request without the cookie
    (every API client's) gets a new, empty session without building the cookie's signer, and
    an answer whose session stayed empty and untouched is left as it is."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        if app.secret_key and (
            "HTTP_COOKIE" not in request.environ  # no cookie at all: nothing to parse
            or not request.cookies.get(self.get_cookie_name(app))
        ):
            return self.session_class()
        return super().open_session(app, request)

    def save_session(self, app: Flask, session: SessionMixin, response: FlaskResponse) -> None:
        if session or session.modified or session.accessed:
            super().save_session(app, session, response)

    def get_cookie_secure(self, app: Flask) -> bool:
        if app.config.get("SESSION_COOKIE_SECURE"):
            return True
        return has_request_context() and request.is_secure


__all__ = [
    "ENGINE_WORKER_CSP",
    "HEADERS",
    "HSTS",
    "REFERRER_POLICY",
    "STRICT_CSP",
    "SessionCookies",
    "content_security_policy",
    "csp_for",
    "secure",
    "secure_html",
]
