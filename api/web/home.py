"""The start page: create a Stammtisch, log in with its Kurzname and Schlüssel, log out."""

from __future__ import annotations

import re
from typing import Any

from flask import current_app, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from ..domain import Conflict, DomainError, NotFound
from ..domain.demo_key import key_fits, saved_demo_key
from ..domain.stammtische import SLUG_PATTERN, SLUG_RULE
from ..http.context import (
    address_wait,
    backoff_wait,
    login_outcome,
    retry_seconds,
    services,
    wait_message,
)
from .blueprint import bp
from .forms import FormErrors, option_fields, presets
from .keys import show_new_key
from .prg import reject, rejected
from .session import forget, logged_in, may_write, remember
from .stammtisch import options_open, stammtisch_form

#: a Kurzname as the API accepts it
SLUG = re.compile(SLUG_PATTERN)
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")


def _local_demo() -> dict[str, str] | None:
    """The demo's Kurzname and key, on a server that listens on loopback only (no proxy in
    front): everyone who can open the page sits at this computer."""
    host = str(current_app.config.get("LISTEN_HOST") or "")
    local = host in ("localhost", "::1", "[::1]") or host.startswith("127.")
    if not local or current_app.config.get("TRUSTED_PROXIES"):
        return None
    saved = saved_demo_key(current_app.instance_path)
    if saved is None:
        return None
    try:
        st = services().stammtisch(saved[0])
    except NotFound:
        return None
    return {"slug": st.slug, "name": st.name, "token": saved[1]} if key_fits(st, saved[1]) else None


def _home(status: int = 200, **ctx: Any) -> tuple[str, int]:
    """The start page: the Stammtische this session is logged in to, the two forms."""
    known = []
    svc = services()
    for slug in logged_in():
        try:
            st = svc.stammtisch(slug)
        except NotFound:
            continue
        if may_write(st):
            known.append(st)
    # a new Stammtisch is private unless chosen otherwise (the form says what that means); a
    # rejected form shows what was sent
    ctx.setdefault("create", {"name": "", "slug": "", "preset": "standard", "public": False})
    ctx.setdefault("options", option_fields())
    ctx.setdefault("login", {"slug": request.args.get("stammtisch", ""), "token": ""})
    ctx.setdefault("errors", FormErrors())
    local = request.host.split(":")[0] in LOCAL_HOSTS
    ctx.setdefault("plain_http", not request.is_secure and not local)
    page = render_template(
        "home.html",
        known=known,
        demo=_local_demo(),
        presets=presets(),
        options_open=options_open(ctx["errors"]),
        **ctx,
    )
    return page, status


def _rejected(status: int, errors: FormErrors, part: str, **kept: Any) -> ResponseReturnValue:
    """Back to the start page at the form ``part``, which shows the messages (once)."""
    return reject(url_for("web.home") + f"#{part}", status, errors, **kept)


def _limited(wait: float, errors: FormErrors, part: str, **kept: Any) -> ResponseReturnValue:
    """The start page with the wait beside the form: 429 with ``Retry-After``."""
    return _rejected(429, errors, part, retry=retry_seconds(wait), **kept)


@bp.get("/")
def home() -> ResponseReturnValue:
    status, errors, kept = rejected()
    ctx: dict[str, Any] = {"errors": errors}
    if "create" in kept:
        ctx.update(create=kept["create"], options=option_fields(kept["create"]["selected"]))
    if "login" in kept:
        ctx["login"] = kept["login"]
    page, status = _home(status, **ctx)
    headers = {"Retry-After": str(kept["retry"])} if "retry" in kept else {}
    return page, status, headers


@bp.post("/stammtisch")
def create_stammtisch() -> ResponseReturnValue:
    errors = FormErrors()
    entered, data = stammtisch_form(errors)
    slug = entered["slug"]
    if slug:
        data["slug"] = slug
        if not SLUG.fullmatch(slug):
            errors.add("slug", SLUG_RULE)
    if not errors:
        wait = address_wait("create")
        if wait > 0:
            errors.add("name", wait_message(wait, "neue Stammtische von dieser Adresse"))
            return _limited(wait, errors, "neu", create=entered)
        try:
            st, _token = services().create_stammtisch(data)
        except DomainError as err:
            errors.add("slug" if isinstance(err, Conflict) else "rules", err.message)
        else:
            remember(st)
            return show_new_key(st, created=True)
    return _rejected(422, errors, "neu", create=entered)


@bp.post("/anmelden")
def login() -> ResponseReturnValue:
    slug = (request.form.get("slug") or "").strip().lower()
    token = (request.form.get("token") or "").strip()
    errors = FormErrors()
    if not slug:
        errors.add("login_slug", "Bitte den Kurznamen des Stammtischs eintragen.")
    if not token:
        errors.add("login_token", "Bitte den Schlüssel eintragen.")
    if not errors:
        wait = address_wait("login")
        if wait > 0:
            errors.add("login_token", wait_message(wait, "Anmeldeversuche von dieser Adresse"))
            return _limited(wait, errors, "anmelden", login={"slug": slug, "token": ""})
        svc = services()
        try:
            st = svc.stammtisch(slug)
        except NotFound:
            errors.add("login_slug", f"Einen Stammtisch „{slug}“ gibt es nicht.")
            return _rejected(422, errors, "anmelden", login={"slug": slug, "token": ""})
        wait = backoff_wait(st.id)
        if wait > 0:
            errors.add("login_token", wait_message(wait, "falsche Schlüssel für diesen Stammtisch"))
            return _limited(wait, errors, "anmelden", login={"slug": slug, "token": ""})
        try:
            svc.authorize(st, token)
        except DomainError:
            login_outcome(st.id, right=False)
            errors.add("login_token", "Dieser Schlüssel passt nicht zu diesem Stammtisch.")
        else:
            login_outcome(st.id, right=True)
            remember(st)
            return redirect(url_for("web.stammtisch", slug=st.slug))
    return _rejected(422, errors, "anmelden", login={"slug": slug, "token": ""})


@bp.post("/s/<slug>/abmelden")
def logout(slug: str) -> ResponseReturnValue:
    forget(slug)
    flash("Abgemeldet. Zum Weiterspielen wieder mit dem Schlüssel anmelden.", "info")
    return redirect(url_for("web.home"))
