"""The game screen: the board, turn entry, penalty, undo and the protocol of the game.

A form is made for one state of the game (its ``seq``, the number of the last log entry). A
form posted against an older state (another phone recorded meanwhile, a double tap) records
nothing: "is the form still current?" and the write happen under the game's lock in the
service layer (``GameCache.locked``, re-entrant, the lock every write to the game takes, the
API's ``If-Match`` check included), so no other write can come in between.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

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

from ..domain import DomainError, describe_entry
from ..http.context import services
from ..http.errors import status_of
from ..rules import DomainEvent, SchockenError, limits
from ..storage import Stammtisch
from .blueprint import bp
from .forms import FormErrors, TurnInput, describe_rules, field_of, parse_turn
from .invite import invite_url
from .prg import reject, rejected
from .protocol import BIG, TURN, board, last_round, protocol, turn_options
from .session import logged_in_to_stammtisch

STALE = "Inzwischen wurde in diesem Spiel etwas eingetragen; bitte den neuen Stand prüfen."


class _Stale(Exception):
    """The form was made for an older state of the game (another phone, a double tap)."""


def _snapshot(st: Stammtisch, game_id: int) -> tuple[dict[str, Any], str]:
    """What the game screen shows, and the default penalty: taken under the game's lock, so
    no write changes the game meanwhile."""
    svc = services()
    with svc.cache.locked(game_id):
        view = svc.game(st, game_id)
        rt = view.runtime
        game = rt.game
        last = rt.entries[-1] if rt.entries else None
        ctx: dict[str, Any] = {
            "board": board(game),
            "turn": turn_options(game),
            "protocol": protocol(rt.entry_events),
            "last_round": last_round(rt.entry_events),
            "seq": rt.last_seq,
            "open_turn": rt.open_turn.player if rt.open_turn else None,
            "last_entry": describe_entry(last.kind, last.body) if last else None,
            "rules_list": describe_rules(game.rules),
            "number": view.record.number,
            "abandoned": view.record.status == "abandoned",
        }
        return ctx, str(game.rules.penalty or "")


def _game_page(
    st: Stammtisch,
    game_id: int,
    status: int = 200,
    entered: TurnInput | None = None,
    errors: FormErrors | None = None,
    penalty: dict[str, str] | None = None,
) -> tuple[str, int]:
    ctx, penalty_default = _snapshot(st, game_id)
    ctx.update(
        st=st,
        game_id=game_id,
        announcements=get_flashed_messages(with_categories=True),
        banner_kinds=BIG,
        turn_kinds=TURN,
        entered=entered or TurnInput(),
        errors=errors or FormErrors(),
        penalty=penalty or {"player": "", "reason": "", "deckel": penalty_default},
        stats_url=current_app.config["STATS_URL"].format(slug=st.slug),
        confirm_undo=request.args.get("rueckgaengig") == "1",
        invite=invite_url(st, game_id),
    )
    return render_template("game.html", **ctx), status


@bp.get("/s/<slug>/spiel/<int:game_id>")
@logged_in_to_stammtisch
def game(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    status, errors, kept = rejected()
    entered = TurnInput(**kept["turn"]) if "turn" in kept else None
    return _game_page(st, game_id, status, entered, errors, kept.get("penalty"))


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
    with svc.cache.locked(game_id), svc.repo.transaction():
        current = svc.game(st, game_id).runtime.last_seq
        if request.form.get("seq", "") != str(current):
            raise _Stale
        yield


def _announce(events: list[DomainEvent]) -> None:
    for event in events:
        flash(event.message, event.kind.value)


def _back_to_game(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    return redirect(url_for("web.game", slug=st.slug, game_id=game_id))


@bp.post("/s/<slug>/spiel/<int:game_id>/zug")
@logged_in_to_stammtisch
def record_turn(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    svc = services()
    rules = svc.game(st, game_id).runtime.rules
    errors, status = FormErrors(), 422
    entered, body = parse_turn(request.form, rules.dice_count, errors)
    if body is not None:
        try:
            with _current(st, game_id):
                result = svc.record(st, game_id, "turn", body)
        except _Stale:
            errors.add("form", STALE)
            return _rejected(st, game_id, 409, errors)
        except SchockenError as err:
            errors.add(field_of(err.field), err.message)
        except DomainError as err:
            errors.add("form", err.message)
            status = status_of(err)
        else:
            _announce(result.events)
            return _back_to_game(st, game_id)
    return _rejected(st, game_id, status, errors, turn=asdict(entered))


def _penalty_body(
    entered: dict[str, str], deckel_mode: bool, fixed: int | None, errors: FormErrors
) -> dict[str, Any]:
    """The penalty as the service takes it; missing or malformed fields go to ``errors``."""
    body: dict[str, Any] = {"player": entered["player"], "reason": entered["reason"]}
    if not entered["reason"]:
        errors.add("reason", "Bitte den Grund der Strafe eintragen.")
    if deckel_mode:
        if entered["deckel"].isdigit():
            body["deckel"] = int(entered["deckel"])
        elif entered["deckel"] or fixed is None:
            errors.add(
                "deckel",
                "Bitte die Zahl der Strafdeckel eintragen "
                f"({limits.PENALTY.low} bis {limits.PENALTY.high}).",
            )
    return body


@bp.post("/s/<slug>/spiel/<int:game_id>/strafe")
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
    body = _penalty_body(entered, deckel_mode, rules.penalty, errors)
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


@bp.post("/s/<slug>/spiel/<int:game_id>/rueckgaengig")
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


@bp.post("/s/<slug>/spiel/<int:game_id>/abbrechen")
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
