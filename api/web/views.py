"""The pages of the pub form. Every use case goes through :class:`api.domain.services.Services`.

Pages (German URLs, the users' language):

* ``/`` — create a Stammtisch or log in with its Kurzname and Schlüssel;
* ``/s/<slug>/`` — the Stammtisch: running games, new game, players, history, statistics;
* ``/s/<slug>/spieler`` — add, rename, retire players;
* ``/s/<slug>/neu`` — a new game: tap the players in seat order, choose who opens, start;
* ``/s/<slug>/spiel/<id>`` — the game screen: board, turn entry, penalty, undo, history.

Every POST answers with a redirect (so a reload never records twice) or, when the input is
rejected, with the same page, the entered values kept and the German message beside the field.
Nothing is stored when the input is rejected: the service layer checks with the engine first.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from flask import (
    Blueprint,
    abort,
    current_app,
    flash,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response

from ..domain import Conflict, NotFound, describe_entry
from ..domain import DomainError as ServiceError
from ..http.context import services
from ..http.errors import status_of
from ..rules import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    OPTION_NAMES,
    PRESETS,
    SchockenError,
    ruleset_from_config,
)
from ..storage import Stammtisch
from .forms import (
    FormErrors,
    TurnInput,
    describe_rules,
    field_of,
    option_fields,
    parse_overrides,
    parse_turn,
    presets,
    selected_overrides,
)
from .protocol import board, last_round, protocol, turn_options


class _WebBlueprint(Blueprint):
    """Versioned assets (``?v=<content hash>``) are cached for a year; others revalidate."""

    def get_send_file_max_age(self, filename: str | None) -> int | None:
        if request.args.get("v"):
            return 365 * 24 * 3600
        return super().get_send_file_max_age(filename)


bp = _WebBlueprint(
    "web",
    __name__,
    template_folder="templates",
    static_folder="static",
    static_url_path="/assets",
)

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; object-src 'none'"
)
NAME_MAX = 80
PLAYER_MAX = 40
PAGE_SIZE = 20

# ----------------------------------------------------------------------------- request hooks


@bp.app_template_global()
def csrf_token() -> str:
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(32)
    return str(token)


@bp.app_template_global()
def asset(filename: str) -> str:
    """The URL of a static file with its content hash, so a new version is fetched at once."""
    versions = current_app.extensions.setdefault("schocken_web_assets", {})
    if filename not in versions:
        assert bp.static_folder is not None
        data = (Path(bp.static_folder) / filename).read_bytes()
        versions[filename] = hashlib.sha256(data).hexdigest()[:12]
    return url_for("web.static", filename=filename, v=versions[filename])


@bp.before_request
def _check_csrf() -> None:
    if request.method != "POST":
        return
    sent = request.form.get("csrf_token", "")
    expected = session.get("csrf", "")
    if not sent or not expected or not hmac.compare_digest(str(sent), str(expected)):
        abort(
            400,
            "Die Sicherheitsprüfung des Formulars ist fehlgeschlagen (CSRF). Bitte die "
            "Seite neu laden und noch einmal versuchen.",
        )


@bp.after_request
def _security_headers(response: Response) -> Response:
    headers = response.headers
    headers.setdefault("Content-Security-Policy", CSP)
    headers.setdefault("X-Content-Type-Options", "nosniff")
    headers.setdefault("X-Frame-Options", "DENY")
    headers.setdefault("Referrer-Policy", "same-origin")
    headers.setdefault("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
    if request.is_secure:
        headers.setdefault("Strict-Transport-Security", "max-age=31536000")
    if response.mimetype == "text/html":
        headers.setdefault("Cache-Control", "no-store")
    return response


#: German words for the HTTP errors a page can meet (werkzeug's own texts are English)
HTTP_ERRORS = {
    404: "Diese Seite gibt es nicht.",
    405: "So kann diese Seite nicht aufgerufen werden.",
    413: "Das Formular ist zu groß.",
    500: "Da ist etwas schiefgegangen. Bitte die Seite neu laden und den Stand prüfen.",
}


@bp.errorhandler(HTTPException)
def _http_error(error: HTTPException) -> tuple[str, int]:
    code = error.code or 500
    own = error.description if code == 400 else None  # the CSRF message is ours (German)
    message = own or HTTP_ERRORS.get(code, HTTP_ERRORS[500])
    return render_template("error.html", code=code, message=message), code


@bp.errorhandler(ServiceError)
def _service_error(error: ServiceError) -> tuple[str, int]:
    status = status_of(error)
    return render_template("error.html", code=status, message=error.message), status


@bp.app_template_filter("when")
def _when(value: Any) -> str:
    """An ISO timestamp as local date and time ("27.11.2026, 20:15")."""
    if not value:
        return ""
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(_zone()).strftime("%d.%m.%Y, %H:%M")


def _zone() -> Any:
    try:
        return ZoneInfo(current_app.config["WEB_TIMEZONE"])
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


# ----------------------------------------------------------------------------- login


def _logged_in() -> dict[str, str]:
    auth = session.get("auth")
    return dict(auth) if isinstance(auth, dict) else {}


def _may_write(st: Stammtisch) -> bool:
    token_hash = _logged_in().get(st.slug)
    return bool(token_hash) and hmac.compare_digest(str(token_hash), st.token_hash)


def _remember(st: Stammtisch) -> None:
    auth = _logged_in()
    auth[st.slug] = st.token_hash
    session["auth"] = auth
    session.permanent = True


def _logged_in_to_stammtisch(view: Callable[..., Any]) -> Callable[..., Any]:
    """The view gets the Stammtisch of ``<slug>`` if this session is logged in to it;
    otherwise the answer is a redirect to the login."""

    @functools.wraps(view)
    def wrapper(slug: str, **kwargs: Any) -> Any:
        st = services().stammtisch(slug)
        if not _may_write(st):
            flash("Bitte mit dem Schlüssel des Stammtischs anmelden.", "info")
            return redirect(url_for("web.home", stammtisch=slug))
        return view(st, **kwargs)

    return wrapper


# ----------------------------------------------------------------------------- home


def _home(status: int = 200, **ctx: Any) -> tuple[str, int]:
    known = []
    svc = services()
    for slug in _logged_in():
        try:
            st = svc.stammtisch(slug)
        except NotFound:
            continue
        if _may_write(st):
            known.append(st)
    ctx.setdefault("create", {"name": "", "slug": "", "preset": "standard", "public": True})
    ctx.setdefault("options", option_fields())
    ctx.setdefault("login", {"slug": request.args.get("stammtisch", ""), "token": ""})
    ctx.setdefault("errors", FormErrors())
    options_open = any(k.startswith("opt_") or k == "rules" for k in ctx["errors"].fields)
    local = request.host.split(":")[0] in ("localhost", "127.0.0.1", "[::1]")
    ctx.setdefault("plain_http", not request.is_secure and not local)
    return (
        render_template(
            "home.html", known=known, presets=presets(), options_open=options_open, **ctx
        ),
        status,
    )


@bp.get("/")
def home() -> Any:
    return _home()


def _stammtisch_form(errors: FormErrors) -> tuple[dict[str, Any], dict[str, Any]]:
    """Name, preset, overrides and visibility of the Stammtisch form: (entered, service data).

    The rules are checked with the engine here, so that its message appears beside the option
    it names."""
    form = request.form
    name = (form.get("name") or "").strip()
    preset = form.get("preset") or "standard"
    entered = {
        "name": name,
        "slug": (form.get("slug") or "").strip().lower(),
        "preset": preset,
        "public": bool(form.get("public")),
        "selected": {k[4:]: v for k, v in form.items() if k.startswith("opt_")},
    }
    if not name:
        errors.add("name", "Bitte einen Namen für den Stammtisch eintragen.")
    elif len(name) > NAME_MAX:
        errors.add("name", f"Der Name ist zu lang (höchstens {NAME_MAX} Zeichen).")
    if preset not in PRESETS:
        errors.add("preset", "Bitte eines der Regelwerke wählen.")
    rules = {"preset": preset, "overrides": parse_overrides(form, errors)}
    if not errors:
        try:
            ruleset_from_config(rules)
        except SchockenError as err:
            known = err.field in OPTION_NAMES
            errors.add(f"opt_{err.field}" if known else "rules", err.message)
    return entered, {"name": name, "rules": rules, "private": not entered["public"]}


@bp.post("/stammtisch")
def create_stammtisch() -> Any:
    errors = FormErrors()
    entered, data = _stammtisch_form(errors)
    slug = entered["slug"]
    if slug:
        data["slug"] = slug
        if not re.fullmatch(r"[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?", slug):
            errors.add(
                "slug", "Nur Kleinbuchstaben, Ziffern und Bindestriche (höchstens 40 Zeichen)."
            )
    if not errors:
        try:
            st, token = services().create_stammtisch(data)
        except ServiceError as err:
            errors.add("slug" if isinstance(err, Conflict) else "rules", err.message)
        else:
            _remember(st)
            return render_template("created.html", st=st, token=token), 201
    options = option_fields(entered["selected"])
    return _home(422, create=entered, options=options, errors=errors)


@bp.route("/s/<slug>/regeln", methods=["GET", "POST"])
@_logged_in_to_stammtisch
def edit_rules(st: Stammtisch) -> Any:
    """Name, house rules and visibility; new rules apply to games started afterwards."""
    slug = st.slug
    errors = FormErrors()
    if request.method == "GET":
        entered = {
            "name": st.name,
            "preset": st.rules["preset"],
            "public": not st.private,
            "selected": selected_overrides(st.rules.get("overrides", {})),
        }
    else:
        entered, data = _stammtisch_form(errors)
        if not errors:
            try:
                services().update_stammtisch(st, data)
            except ServiceError as err:
                errors.add("rules", err.message)
            else:
                flash("Gespeichert. Neue Hausregeln gelten ab dem nächsten Spiel.", "ok")
                return redirect(url_for("web.stammtisch", slug=slug))
    options_open = bool(entered["selected"] and any(entered["selected"].values())) or any(
        k.startswith("opt_") or k == "rules" for k in errors.fields
    )
    return render_template(
        "rules.html",
        st=st,
        form=entered,
        presets=presets(),
        options=option_fields(entered["selected"]),
        options_open=options_open,
        errors=errors,
    ), (422 if errors else 200)


@bp.post("/anmelden")
def login() -> Any:
    slug = (request.form.get("slug") or "").strip().lower()
    token = (request.form.get("token") or "").strip()
    errors = FormErrors()
    if not slug:
        errors.add("login_slug", "Bitte den Kurznamen des Stammtischs eintragen.")
    if not token:
        errors.add("login_token", "Bitte den Schlüssel eintragen.")
    if not errors:
        try:
            st = services().writable(slug, token)
        except NotFound:
            errors.add("login_slug", f"Einen Stammtisch „{slug}“ gibt es nicht.")
        except ServiceError:
            errors.add("login_token", "Dieser Schlüssel passt nicht zu diesem Stammtisch.")
        else:
            _remember(st)
            return redirect(url_for("web.stammtisch", slug=st.slug))
    return _home(422, login={"slug": slug, "token": ""}, errors=errors)


@bp.post("/s/<slug>/abmelden")
def logout(slug: str) -> Any:
    auth = _logged_in()
    auth.pop(slug, None)
    session["auth"] = auth
    flash("Abgemeldet. Zum Weiterspielen wieder mit dem Schlüssel anmelden.", "info")
    return redirect(url_for("web.home"))


# ----------------------------------------------------------------------------- Stammtisch


@bp.get("/s/<slug>/")
@_logged_in_to_stammtisch
def stammtisch(st: Stammtisch) -> Any:
    svc = services()
    running = svc.games(st, {"page": 1, "page_size": PAGE_SIZE, "status": "running"})
    rules = ruleset_from_config(st.rules)
    return render_template(
        "stammtisch.html",
        st=st,
        running=running["items"],
        players=[p for p in svc.players(st) if not p.retired],
        rules=describe_rules(rules),
        preset=st.rules["preset"],
        stats_url=current_app.config["STATS_URL"].format(slug=st.slug),
    )


@bp.get("/s/<slug>/spiele")
@_logged_in_to_stammtisch
def history(st: Stammtisch) -> Any:
    page = request.args.get("seite", "1")
    page_no = int(page) if page.isdigit() and int(page) > 0 else 1
    result = services().games(st, {"page": page_no, "page_size": PAGE_SIZE})
    pages = max(1, -(-result["total"] // PAGE_SIZE))
    return render_template(
        "history.html",
        st=st,
        games=result["items"],
        page=page_no,
        pages=pages,
        total=result["total"],
        stats_url=current_app.config["STATS_URL"].format(slug=st.slug),
    )


# ----------------------------------------------------------------------------- players


def _players_page(st: Stammtisch, status: int = 200, **ctx: Any) -> tuple[str, int]:
    ctx.setdefault("errors", FormErrors())
    ctx.setdefault("new_name", "")
    ctx.setdefault("edits", {})
    players = services().players(st)
    return render_template("players.html", st=st, players=players, **ctx), status


def _check_name(name: str, errors: FormErrors, target: str) -> None:
    if not name:
        errors.add(target, "Bitte einen Namen eintragen.")
    elif len(name) > PLAYER_MAX:
        errors.add(target, f"Der Name ist zu lang (höchstens {PLAYER_MAX} Zeichen).")


@bp.route("/s/<slug>/spieler", methods=["GET", "POST"])
@_logged_in_to_stammtisch
def players(st: Stammtisch) -> Any:
    slug = st.slug
    if request.method == "GET":
        return _players_page(st)
    name = (request.form.get("name") or "").strip()
    errors = FormErrors()
    _check_name(name, errors, "name")
    if not errors:
        try:
            services().add_player(st, name)
        except ServiceError as err:
            errors.add("name", err.message)
        else:
            flash(f"{name} spielt jetzt mit.", "ok")
            return redirect(url_for("web.players", slug=slug))
    return _players_page(st, 422, errors=errors, new_name=name)


@bp.post("/s/<slug>/spieler/<int:player_id>")
@_logged_in_to_stammtisch
def player(st: Stammtisch, player_id: int) -> Any:
    slug = st.slug
    svc = services()
    current = svc.player(st, player_id)
    action = request.form.get("action", "rename")
    errors = FormErrors()
    target = f"player_{player_id}"
    if action == "retire":
        svc.update_player(st, player_id, {"retired": True})
        flash(f"{current.name} ist jetzt nicht mehr aktiv (bleibt in der Statistik).", "ok")
    elif action == "return":
        svc.update_player(st, player_id, {"retired": False})
        flash(f"{current.name} ist wieder dabei.", "ok")
    else:
        name = (request.form.get("name") or "").strip()
        _check_name(name, errors, target)
        if not errors:
            try:
                svc.update_player(st, player_id, {"name": name})
            except ServiceError as err:
                errors.add(target, err.message)
            else:
                if name != current.name:
                    flash(f"{current.name} heißt jetzt {name}.", "ok")
        if errors:
            return _players_page(st, 422, errors=errors, edits={player_id: name})
    return redirect(url_for("web.players", slug=slug))


# ----------------------------------------------------------------------------- new game


def _local_now() -> str:
    return datetime.now(_zone()).isoformat(timespec="seconds")


def _seat_links(slug: str, seats: list[str], waiting: list[Any]) -> dict[str, dict[str, str]]:
    """The URL of every seat tap: each is a plain link carrying the order (``?sitze=3,1,2``),
    so taps need no JavaScript, store nothing and the back button just works."""

    def url(order: list[str]) -> str:
        return url_for("web.new_game", slug=slug, sitze=",".join(order))

    links: dict[str, dict[str, str]] = {"add": {}, "up": {}, "remove": {}}
    for p in waiting:
        links["add"][str(p.id)] = url([*seats, str(p.id)])
    for i, pid in enumerate(seats):
        if i:
            order = list(seats)
            order[i - 1], order[i] = order[i], order[i - 1]
            links["up"][pid] = url(order)
        links["remove"][pid] = url([s for s in seats if s != pid])
    return links


@bp.route("/s/<slug>/neu", methods=["GET", "POST"])
@_logged_in_to_stammtisch
def new_game(st: Stammtisch) -> Any:
    """Players are tapped in clockwise order (links), the opener chosen, the game started."""
    slug = st.slug
    svc = services()
    active = [p for p in svc.players(st) if not p.retired]
    by_id = {str(p.id): p for p in active}
    errors = FormErrors()
    if request.method == "GET":
        seats = (request.args.get("sitze") or "").split(",")
        starter = ""  # the first seat, until chosen
        again = request.args.get("wie")
        if again and again.isdigit():
            try:
                previous = svc.game(st, int(again)).runtime.game.players
            except NotFound:
                previous = ()
            ids = {p.name: str(p.id) for p in active}
            seats = [ids[name] for name in previous if name in ids]
    else:
        seats = request.form.getlist("seat")
        starter = request.form.get("starter", "")
    seats = list(dict.fromkeys(s for s in seats if s in by_id))
    if request.method == "POST":
        if len(seats) < MIN_PLAYERS:
            errors.add("seats", f"Ein Spiel braucht mindestens {MIN_PLAYERS} Spieler.")
        elif len(seats) > MAX_PLAYERS:
            errors.add("seats", f"Höchstens {MAX_PLAYERS} Spieler spielen mit.")
        if starter not in seats:
            errors.add("starter", "Bitte wählen, wer die erste Runde beginnt.")
        if not errors:
            data = {
                "players": [by_id[s].name for s in seats],
                "starter": by_id[starter].name,
                "played_at": _local_now(),
            }
            try:
                view = svc.start_game(st, data)
            except (ServiceError, SchockenError) as err:
                errors.add("seats", err.message)
            else:
                return redirect(url_for("web.game", slug=slug, game_id=view.record.id))
    if starter not in seats:
        starter = seats[0] if seats else ""
    waiting = [p for p in active if str(p.id) not in seats]
    return render_template(
        "new_game.html",
        st=st,
        seated=[by_id[s] for s in seats],
        waiting=waiting,
        starter=starter,
        links=_seat_links(slug, seats, waiting),
        errors=errors,
    ), (422 if errors else 200)


# ----------------------------------------------------------------------------- the game


class _Stale(Exception):
    """The form was made for an older state of the game (another phone, a double tap)."""


#: form writes to one game are serialised here, so that "is the form still current?" and the
#: write happen as one step: a double-tapped undo undoes once (striped by game id)
_FORM_LOCKS = tuple(threading.Lock() for _ in range(64))


def _game_page(
    st: Stammtisch,
    game_id: int,
    status: int = 200,
    entered: TurnInput | None = None,
    errors: FormErrors | None = None,
    penalty: dict[str, str] | None = None,
) -> tuple[str, int]:
    # a snapshot taken under the game's form lock: no form entry changes the game meanwhile
    with _FORM_LOCKS[game_id % len(_FORM_LOCKS)]:
        rt = services().game(st, game_id).runtime
        game = rt.game
        rules = game.rules
        last = rt.entries[-1] if rt.entries else None
        penalty_default = str(rules.penalty or "")
        ctx: dict[str, Any] = {
            "board": board(game),
            "turn": turn_options(game),
            "protocol": protocol(rt.entry_events),
            "last_round": last_round(rt.entry_events),
            "seq": rt.last_seq,
            "open_turn": rt.open_turn.player if rt.open_turn else None,
            "last_entry": describe_entry(last.kind, last.body) if last else None,
            "rules_list": describe_rules(rules),
        }
    ctx.update(
        st=st,
        game_id=game_id,
        announcements=get_flashed_messages(with_categories=True),
        entered=entered or TurnInput(),
        errors=errors or FormErrors(),
        penalty=penalty or {"player": "", "reason": "", "deckel": penalty_default},
        stats_url=current_app.config["STATS_URL"].format(slug=st.slug),
    )
    return render_template("game.html", **ctx), status


@bp.get("/s/<slug>/spiel/<int:game_id>")
@_logged_in_to_stammtisch
def game(st: Stammtisch, game_id: int) -> Any:
    return _game_page(st, game_id)


@contextmanager
def _current(st: Stammtisch, game_id: int) -> Iterator[None]:
    """Hold the game's form lock; raise :class:`_Stale` unless the form's ``seq`` is current."""
    with _FORM_LOCKS[game_id % len(_FORM_LOCKS)]:
        current = services().game(st, game_id).runtime.last_seq
        if request.form.get("seq", "") != str(current):
            raise _Stale
        yield


STALE = "Inzwischen wurde in diesem Spiel etwas eingetragen; bitte den neuen Stand prüfen."


def _announce(events: list[dict[str, Any]]) -> None:
    for event in events:
        flash(event["message"], event["kind"])


@bp.post("/s/<slug>/spiel/<int:game_id>/zug")
@_logged_in_to_stammtisch
def record_turn(st: Stammtisch, game_id: int) -> Any:
    slug = st.slug
    svc = services()
    rules = svc.game(st, game_id).runtime.rules
    errors = FormErrors()
    entered, body = parse_turn(request.form, rules.dice_count, errors)
    if body is not None:
        try:
            with _current(st, game_id):
                result = svc.record(st, game_id, "turn", body)
        except _Stale:
            errors.add("form", STALE)
            return _game_page(st, game_id, 409, TurnInput(), errors)
        except SchockenError as err:
            errors.add(field_of(err.field), err.message)
        except ServiceError as err:
            errors.add("form", err.message)
        else:
            _announce(result.events)
            return redirect(url_for("web.game", slug=slug, game_id=game_id))
    return _game_page(st, game_id, 422, entered, errors)


@bp.post("/s/<slug>/spiel/<int:game_id>/strafe")
@_logged_in_to_stammtisch
def record_penalty(st: Stammtisch, game_id: int) -> Any:
    slug = st.slug
    svc = services()
    rules = svc.game(st, game_id).runtime.rules
    form = request.form
    entered = {
        "player": form.get("player", ""),
        "reason": (form.get("reason") or "").strip(),
        "deckel": (form.get("deckel") or "").strip(),
    }
    errors = FormErrors()
    body: dict[str, Any] = {"player": entered["player"], "reason": entered["reason"]}
    if not entered["reason"]:
        errors.add("reason", "Bitte den Grund der Strafe eintragen.")
    if rules.options()["penalty_mode"] == "deckel":
        if entered["deckel"].isdigit():
            body["deckel"] = int(entered["deckel"])
        elif entered["deckel"] or rules.penalty is None:
            errors.add("deckel", "Bitte die Zahl der Strafdeckel eintragen (1 bis 99).")
    if not errors:
        try:
            with _current(st, game_id):
                result = svc.record(st, game_id, "penalty", {"penalty": body})
        except _Stale:
            errors.add("reason", STALE)
        except SchockenError as err:
            errors.add(err.field if err.field in ("deckel", "player") else "reason", err.message)
        except ServiceError as err:
            errors.add("reason", err.message)
        else:
            _announce(result.events)
            return redirect(url_for("web.game", slug=slug, game_id=game_id))
    return _game_page(st, game_id, 422, errors=errors, penalty=entered)


@bp.post("/s/<slug>/spiel/<int:game_id>/rueckgaengig")
@_logged_in_to_stammtisch
def undo(st: Stammtisch, game_id: int) -> Any:
    slug = st.slug
    errors = FormErrors()
    try:
        with _current(st, game_id):
            result = services().undo(st, game_id, {"by": "Formular"})
    except _Stale:
        errors.add("undo", STALE + " Es wurde nichts rückgängig gemacht.")
        return _game_page(st, game_id, 409, errors=errors)
    except ServiceError as err:
        errors.add("undo", err.message)
        return _game_page(st, game_id, status_of(err), errors=errors)
    _announce(result.events)
    return redirect(url_for("web.game", slug=slug, game_id=game_id))
