"""The pub form: server-rendered pages for logging a live game from a phone.

``init_web(app)`` registers the blueprint at ``/`` and prepares what the pages need:

* the secret key that signs the session cookie: ``SECRET_KEY`` from the config, else a key
  generated once and kept in ``<instance>/secret_key`` (an in-memory database gets a key that
  lives as long as the process, like its data);
* the session cookie: HTTP-only, ``SameSite=Lax``, and ``Secure`` whenever the request came
  over HTTPS (or always, with ``SESSION_COOKIE_SECURE``; api/http/headers.py) — a phone on the
  pub's Wi-Fi that talks plain HTTP to ``schocken serve`` on a laptop can still log in;
* CSRF protection (a per-session token in every form, checked on every POST) and security
  headers (api/http/headers.py: a strict Content-Security-Policy without inline scripts,
  ``nosniff``, frame denial).

The modules: ``blueprint`` (the Blueprint, asset URLs, date filter, headers, error pages),
``session`` (CSRF token, login state), and the pages: ``home`` (create, log in, log out),
``stammtisch`` (overview, history, house rules), ``players``, ``new_game``, ``games`` (the game
screen: turn, penalty, undo), ``tv`` (the board for a screen across the room); ``forms`` turns form fields into what the templates show; the game
screen itself is drawn by ``api.table`` (shared with the phone's offline engine); ``engine``
serves that engine to the browser (Pyodide and the engine bundle, loaded by the game page in
a Web Worker).

Pages (German URLs, the users' language):

* ``/`` — create a Stammtisch or log in with its Kurzname and Schlüssel;
* ``/s/<slug>/`` — the Stammtisch: running games, new game, players, history, statistics;
* ``/s/<slug>/spieler`` — add, rename, retire players;
* ``/s/<slug>/schluessel`` — a new key for the Stammtisch (the old one and its logins end);
* ``/s/<slug>/neu`` — a new game: tap the players in seat order, choose who opens, start;
* ``/s/<slug>/spiel/<id>`` — the game screen: turn entry first (always in the first screen at
  360 × 640), board, penalty, undo, history, the invite link and "Spiel abbrechen";
* ``/einladung/<token>`` — the invite link of a game (``invite``): opens it logged in;
* ``/tv/<slug>`` — the pub TV: the running game's board, big, updated live from the event
  stream (``tv``; a public Stammtisch's TV needs no login);
* ``/s/<slug>/unsere-regeln`` — "Unsere Regeln": the house rules in German prose, written by
  the engine (``regeln``; ``?spiel=<id>``: those of one game; public like the TV).

Every POST answers with a redirect (Post/Redirect/Get, ``prg``): so a reload never sends a
form twice. A rejected form is shown once more by its page (the entered values kept, the
German message beside the field, the rejection's status); ``keys`` makes and shows a
Stammtisch's key, once, when it is created or renewed.
Nothing is stored when the input is rejected: the service layer checks with the engine first.

Every use case goes through :class:`api.domain.services.Services`, the same layer the REST API uses;
the pages never compute a rule themselves.
"""

from __future__ import annotations

import mimetypes
import os
import secrets
from pathlib import Path

from flask import Blueprint, Flask

from ..http.headers import SessionCookies

# the modules register their hooks and pages on bp
from . import (  # noqa: F401
    engine,
    games,
    home,
    invite,
    keys,
    new_game,
    offline,
    players,
    regeln,
    session,
    stammtisch,
    tv,
)
from .blueprint import bp

SECRET_FILE = "secret_key"


def _secret_key(app: Flask) -> str:
    """The configured key, or one generated once and persisted in the instance folder."""
    configured = app.config.get("SECRET_KEY")
    if configured:
        return str(configured)
    if app.config.get("STORAGE") == "memory" or app.config.get("DATABASE") == ":memory:":
        return secrets.token_hex(32)  # the data vanishes with the process; so may the sessions
    folder = Path(app.instance_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SECRET_FILE
    if not path.exists():
        # write a complete file first, then link it into place: concurrent first starts agree
        tmp = folder / f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(32) + "\n")
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    key = path.read_text(encoding="ascii").strip()
    if len(key) < 32:
        raise RuntimeError(f"{path} holds no usable secret key; delete it to regenerate it")
    return key


def init_web(app: Flask) -> None:
    """Register the pub form at ``/`` and configure the session it relies on."""
    app.config["SECRET_KEY"] = _secret_key(app)
    app.config.setdefault("STATS_URL", "/dashboard/{slug}/")
    app.config.setdefault("WEB_TIMEZONE", "Europe/Berlin")
    app.session_interface = SessionCookies()
    mimetypes.add_type("application/manifest+json", ".webmanifest")
    app.register_blueprint(bp)
    # the game screen's templates (table/…), shared with the phone's offline engine
    app.register_blueprint(Blueprint("table", "api.table", template_folder="templates"))


__all__ = ["init_web"]
