"""A new game: the players are tapped in clockwise order (plain links), the opener is chosen,
the game is started."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from ..domain import DomainError, NotFound
from ..http.context import services
from ..rules import MAX_PLAYERS, MIN_PLAYERS, SchockenError, limits, read_number
from ..storage import Player, Stammtisch
from .blueprint import bp, zone
from .forms import FormErrors
from .prg import reject, rejected
from .session import logged_in_to_stammtisch


def _local_now() -> str:
    return datetime.now(zone()).isoformat(timespec="seconds")


def _seat_links(slug: str, seats: list[str], waiting: list[Player]) -> dict[str, dict[str, str]]:
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


def _seats_asked(st: Stammtisch, active: list[Player]) -> tuple[list[str], str]:
    """The seat order of the link (``?sitze=``), or that of an earlier game (``?wie=<id>``),
    whose loser then opens (as the house rule of most tables has it: the loser starts)."""
    seats = (request.args.get("sitze") or "").split(",")
    again = read_number(request.args.get("wie"), limits.ID)
    if again is None:
        return seats, ""
    try:
        previous = services().game(st, again).runtime.game
    except NotFound:
        return [], ""
    ids = {p.name: str(p.id) for p in active}
    seats = [ids[name] for name in previous.players if name in ids]
    return seats, ids.get(previous.loser or "", "")


def _start(
    st: Stammtisch, seats: list[str], starter: str, by_id: dict[str, Player], errors: FormErrors
) -> int | None:
    """Start the game of the chosen seats: its id, or None with the reasons in ``errors``."""
    if len(seats) < MIN_PLAYERS:
        errors.add("seats", f"Ein Spiel braucht mindestens {MIN_PLAYERS} Spieler.")
    elif len(seats) > MAX_PLAYERS:
        errors.add("seats", f"Höchstens {MAX_PLAYERS} Spieler spielen mit.")
    if starter not in seats:
        errors.add("starter", "Bitte wählen, wer die erste Runde beginnt.")
    if errors:
        return None
    data: dict[str, Any] = {
        "players": [by_id[s].name for s in seats],
        "starter": by_id[starter].name,
        "played_at": _local_now(),
    }
    try:
        view = services().start_game(st, data)
    except (DomainError, SchockenError) as err:
        errors.add("seats", err.message)
        return None
    return view.record.id


@bp.route("/s/<slug>/neu", methods=["GET", "POST"])
@logged_in_to_stammtisch
def new_game(st: Stammtisch) -> ResponseReturnValue:
    """Players are tapped in clockwise order (links), the opener chosen, the game started."""
    active = [p for p in services().players(st) if not p.retired]
    by_id = {str(p.id): p for p in active}
    if request.method == "POST":
        seats = [s for s in dict.fromkeys(request.form.getlist("seat")) if s in by_id]
        starter = request.form.get("starter", "")
        errors = FormErrors()
        game_id = _start(st, seats, starter, by_id, errors)
        if game_id is not None:
            return redirect(url_for("web.game", slug=st.slug, game_id=game_id))
        back = url_for("web.new_game", slug=st.slug, sitze=",".join(seats))
        return reject(back, 422, errors, starter=starter)
    status, errors, kept = rejected()
    asked, loser = _seats_asked(st, active)
    seats = list(dict.fromkeys(s for s in asked if s in by_id))
    starter = str(kept.get("starter", loser))  # the first seat, until chosen
    if starter not in seats:
        starter = seats[0] if seats else ""
    waiting = [p for p in active if str(p.id) not in seats]
    return render_template(
        "new_game.html",
        st=st,
        seated=[by_id[s] for s in seats],
        waiting=waiting,
        starter=starter,
        links=_seat_links(slug=st.slug, seats=seats, waiting=waiting),
        errors=errors,
    ), status
