"""The game screen: the board, turn entry, penalty, undo and the protocol of the game.

A form is made for one state of the game (its ``seq``, the number of the last log entry). A
form posted against an older state (another phone recorded meanwhile, a double tap) records
nothing: "is the form still current?" and the write happen under the game's lock in the
service layer (``GameCache.locked``, re-entrant, the lock every write to the game takes, the
API's ``If-Match`` check included), so no other write can come in between.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any, cast

from flask import (
    current_app,
    flash,
    get_flashed_messages,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue

from ..domain import DomainError, GameView
from ..http.context import services
from ..http.errors import status_of
from ..rules import DomainEvent, SchockenError, turn_state
from ..storage import Stammtisch
from ..table.entry import (
    SHOW_ODDS,
    FormErrors,
    ThrowInput,
    TurnInput,
    card_entered,
    card_throw,
    describe_entry,
    field_of,
    parse_turn,
    penalty_body,
)
from ..table.play import header_json
from ..table.screen import screen
from .blueprint import bp
from .forms import describe_rules
from .invite import invite_url
from .prg import reject, rejected
from .session import csrf_token, logged_in_to_stammtisch

STALE = "Inzwischen wurde in diesem Spiel etwas eingetragen; bitte den neuen Stand prüfen."


class _Stale(Exception):
    """The form was made for an older state of the game (another phone, a double tap)."""


def _urls(st: Stammtisch, game_id: int) -> dict[str, str]:
    """The URLs the game screen links and posts to (``api.table.screen.URL_NAMES``)."""
    game: dict[str, Any] = {"slug": st.slug, "game_id": game_id}
    return {
        "game": url_for("web.game", **game),
        "record_turn": url_for("web.record_turn", **game),
        "record_throw": url_for("web.record_throw", **game),
        "record_penalty": url_for("web.record_penalty", **game),
        "undo": url_for("web.undo", **game),
        "new_game": url_for("web.new_game", slug=st.slug, wie=game_id),
        "history": url_for("web.history", slug=st.slug),
        "stats": current_app.config["STATS_URL"].format(slug=st.slug),
    }


def game_state(st: Stammtisch, game_id: int) -> tuple[GameView, dict[str, Any]]:
    """The game and what the phone's engine needs to go on offline (the page embeds it as
    JSON; ``api/table/browser.py`` reads it): the header and every effective entry, the
    version (``seq``), the URLs and the CSRF token of the screen. Taken under the game's lock,
    so no write changes the game meanwhile."""
    svc = services()
    with svc.cache.locked(game_id):
        view = svc.game(st, game_id)
        rt = view.runtime
        last = rt.entries[-1] if rt.entries else None
        state = {
            "game": url_for("web.game", slug=st.slug, game_id=game_id),
            "number": view.record.number,
            "seq": rt.last_seq,
            "abandoned": view.record.status == "abandoned",
            "open_turn": rt.open_turn.player if rt.open_turn else None,
            "odds_shown": st.odds_shown,
            "last_entry": describe_entry(last.kind, last.body) if last else None,
            "header": header_json(rt.header),
            "entries": [[e.seq, e.kind, e.body] for e in rt.entries],
            "urls": _urls(st, game_id),
            "csrf": csrf_token(),
        }
        return view, state


def _game_page(
    st: Stammtisch,
    game_id: int,
    status: int = 200,
    entered: TurnInput | None = None,
    errors: FormErrors | None = None,
    penalty: dict[str, str] | None = None,
    throw: dict[str, Any] | None = None,
) -> tuple[str, int]:
    view, state = game_state(st, game_id)
    rt = view.runtime
    ctx = screen(
        rt.game,
        rt.entry_events,
        seq=state["seq"],
        number=state["number"],
        urls=state["urls"],
        csrf=state["csrf"],
        open_turn=state["open_turn"],
        last_entry=state["last_entry"],
        abandoned=state["abandoned"],
        announcements=cast(list[tuple[str, str]], get_flashed_messages(with_categories=True)),
        entered=entered,
        errors=errors,
        penalty=penalty,
        confirm_undo=request.args.get("rueckgaengig") == "1",
        throwing=rt.open_turn,
        odds_shown=st.odds_shown,
        throw_entered=ThrowInput(**throw) if throw else None,
        show_odds=throw is not None and throw.get("decision") == SHOW_ODDS,
    )
    ctx.update(
        st=st,
        game_id=game_id,
        rules_list=describe_rules(rt.rules),
        invite=invite_url(st, game_id),
        state=state,
    )
    return render_template("game.html", **ctx), status


@bp.get("/s/<slug>/spiel/<id:game_id>")
@logged_in_to_stammtisch
def game(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    status, errors, kept = rejected()
    entered = TurnInput(**kept["turn"]) if "turn" in kept else None
    return _game_page(st, game_id, status, entered, errors, kept.get("penalty"), kept.get("throw"))


def _rejected(
    st: Stammtisch, game_id: int, status: int, errors: FormErrors, **kept: Any
) -> ResponseReturnValue:
    """Back to the game screen, which shows the messages and what was entered (once)."""
    return reject(url_for("web.game", slug=st.slug, game_id=game_id), status, errors, **kept)


@contextmanager
def _current(st: Stammtisch, game_id: int) -> Iterator[None]:
    """Hold the game's lock and the write transaction (the check and the write are one, in
    every server process); raise :class:`_Stale` unless the form's ``seq`` is current."""
    svc = services()
    with svc.writing(game_id):  # the use case's write inside enters no second transaction
        current = svc.game(st, game_id).runtime.last_seq
        if request.form.get("seq", "") != str(current):
            raise _Stale
        yield


def _announce(events: list[DomainEvent]) -> None:
    for event in events:
        flash(event.message, event.kind.value)


def _back_to_game(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    return redirect(url_for("web.game", slug=st.slug, game_id=game_id))


@bp.post("/s/<slug>/spiel/<id:game_id>/zug")
@logged_in_to_stammtisch
def record_turn(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    svc = services()
    rules = svc.game(st, game_id).runtime.rules
    errors, status = FormErrors(), 422
    entered, body = parse_turn(request.form, rules.dice_count, errors)
    if body is not None:
        done = _record(st, game_id, "turn", body, errors, lambda err: field_of(err.field))
        if not isinstance(done, int):
            return done
        status = done
    return _rejected(st, game_id, status, errors, turn=asdict(entered))


def _record(
    st: Stammtisch,
    game_id: int,
    kind: str,
    body: dict[str, Any],
    errors: FormErrors,
    field: Callable[[SchockenError], str],
) -> ResponseReturnValue | int:
    """Record an entry of the form as the API does: back to the game page when it is taken, the
    game page as it is now when the form was made for an older state (409), else the refusal's
    status with its German sentence in ``errors`` (``field`` of a rule's, "form"/"throw" else)."""
    other = "throw" if kind == "throw" else "form"
    try:
        with _current(st, game_id):
            result = services().record(st, game_id, kind, body)
    except _Stale:
        errors.add(other, STALE)
        return _rejected(st, game_id, 409, errors)
    except SchockenError as err:
        errors.add(field(err), err.message)
        return 422
    except DomainError as err:
        errors.add(other, err.message)
        return status_of(err)
    _announce(result.events)
    return _back_to_game(st, game_id)


@bp.post("/s/<slug>/spiel/<id:game_id>/wurf")
@logged_in_to_stammtisch
def record_throw(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    """One throw of a throw-by-throw turn ("Wurf für Wurf") and its decision, recorded as the
    API records it (entry kind ``throw``); "Chancen zeigen" keeps what was entered and shows
    the odds on the game page, writing nothing."""
    rt = services().game(st, game_id).runtime
    state = turn_state(rt.game, rt.open_turn)
    player = state.player if state else str(request.form.get("player") or "")
    errors, status = FormErrors(), 422
    if request.form.get("decision") == SHOW_ODDS:
        entered = card_entered(request.form, rt.game, rt.open_turn, player)
        return _rejected(st, game_id, 200, errors, throw=asdict(entered))
    entered, body = card_throw(request.form, rt.game, rt.open_turn, player, errors)
    if body is not None:
        done = _record(st, game_id, "throw", body, errors, lambda err: "throw")
        if not isinstance(done, int):
            return done
        status = done
    return _rejected(st, game_id, status, errors, throw=asdict(entered))


@bp.post("/s/<slug>/spiel/<id:game_id>/strafe")
@logged_in_to_stammtisch
def record_penalty(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    svc = services()
    rules = svc.game(st, game_id).runtime.rules
    form = request.form
    entered = {
        "player": form.get("player", ""),
        "reason": (form.get("reason") or "").strip(),
        "deckel": (form.get("deckel") or "").strip(),
    }
    errors = FormErrors()
    deckel_mode = rules.options()["penalty_mode"] == "deckel"
    body = penalty_body(entered, deckel_mode, rules.penalty, errors)
    if not errors:
        try:
            with _current(st, game_id):
                result = svc.record(st, game_id, "penalty", {"penalty": body})
        except _Stale:
            errors.add("reason", STALE)
        except SchockenError as err:
            errors.add(err.field if err.field in ("deckel", "player") else "reason", err.message)
        except DomainError as err:
            errors.add("reason", err.message)
        else:
            _announce(result.events)
            return _back_to_game(st, game_id)
    return _rejected(st, game_id, 422, errors, penalty=entered)


@bp.post("/s/<slug>/spiel/<id:game_id>/rueckgaengig")
@logged_in_to_stammtisch
def undo(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    errors = FormErrors()
    svc = services()
    try:
        with _current(st, game_id):
            decided = svc.game(st, game_id).runtime.game.loser is not None
            if decided and request.form.get("bestaetigt") != "1":  # asked first
                url = url_for("web.game", slug=st.slug, game_id=game_id, rueckgaengig=1)
                return redirect(url + "#undo", 303)
            result = svc.undo(st, game_id, {"by": "Formular"})
    except _Stale:
        errors.add("undo", STALE + " Es wurde nichts rückgängig gemacht.")
        return _rejected(st, game_id, 409, errors)
    except DomainError as err:
        errors.add("undo", err.message)
        return _rejected(st, game_id, status_of(err), errors)
    _announce(result.events)
    return _back_to_game(st, game_id)


@bp.post("/s/<slug>/spiel/<id:game_id>/abbrechen")
@logged_in_to_stammtisch
def abandon(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    errors = FormErrors()
    try:
        services().abandon_game(st, game_id)
    except DomainError as err:
        errors.add("abandon", err.message)
        return _rejected(st, game_id, status_of(err), errors)
    flash("Spiel abgebrochen: es zählt nicht in der Statistik.", "penalty")
    return _back_to_game(st, game_id)
