"""The players page of a Stammtisch: add, rename, retire and bring back players."""

from __future__ import annotations

from typing import Any

from flask import flash, redirect, render_template, request, session, url_for
from flask.typing import ResponseReturnValue

from ..http.context import services
from ..rules import MAX_NAME
from ..storage import Stammtisch
from .blueprint import bp
from .forms import FormErrors
from .prg import refused, reject, rejected
from .session import logged_in_to_stammtisch

#: the session's note that the page after "Hinzufügen" keeps the focus in the name field (set
#: by the POST, taken by the GET it redirects to), so the next name can be typed at once
FOCUS_NEW = "focus_new_player"


def _players_page(st: Stammtisch, status: int = 200, **ctx: Any) -> tuple[str, int]:
    ctx.setdefault("errors", FormErrors())
    ctx.setdefault("new_name", "")
    ctx.setdefault("edits", {})
    ctx.setdefault("focus", False)
    players = services().players(st)
    return render_template("players.html", st=st, players=players, **ctx), status


def _check_name(name: str, errors: FormErrors, target: str) -> None:
    """A player's name as the engine accepts it (its limit, its message beside the field)."""
    if not name:
        errors.add(target, "Bitte einen Namen eintragen.")
    elif len(name) > MAX_NAME:
        errors.add(target, f"Der Name ist zu lang (höchstens {MAX_NAME} Zeichen).")


@bp.route("/s/<slug>/spieler", methods=["GET", "POST"])
@logged_in_to_stammtisch
def players(st: Stammtisch) -> ResponseReturnValue:
    if request.method == "GET":
        status, errors, kept = rejected()
        edits = {int(k): v for k, v in kept.get("edits", {}).items()}
        focus = bool(session.pop(FOCUS_NEW, False)) or bool(errors.get("name"))
        return _players_page(
            st, status, errors=errors, new_name=kept.get("name", ""), edits=edits, focus=focus
        )
    name = (request.form.get("name") or "").strip()
    errors = FormErrors()
    _check_name(name, errors, "name")
    if not errors:
        with refused(errors, "name"):
            services().add_player(st, name)
            flash(f"{name} spielt jetzt mit.", "ok")
            session[FOCUS_NEW] = True
            return redirect(url_for("web.players", slug=st.slug))
    return reject(url_for("web.players", slug=st.slug), 422, errors, name=name)


@bp.post("/s/<slug>/spieler/<id:player_id>")
@logged_in_to_stammtisch
def player(st: Stammtisch, player_id: int) -> ResponseReturnValue:
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
            with refused(errors, target):
                svc.update_player(st, player_id, {"name": name})
                if name != current.name:
                    flash(f"{current.name} heißt jetzt {name}.", "ok")
        if errors:
            edits = {str(player_id): name}
            return reject(url_for("web.players", slug=st.slug), 422, errors, edits=edits)
    return redirect(url_for("web.players", slug=st.slug))
