"""The pub TV: ``/tv/<slug>``, the running game's board, big, for a screen across the room.

The page is rendered on the server (it shows the board without JavaScript); ``tv.js`` listens
to the Stammtisch's event stream (``GET /api/v1/stammtische/<slug>/events``) and on every event
re-reads the board as an HTML fragment, ``/tv/<slug>/tafel?spiel=<id>``: the same template
part the page was rendered with, so the first load and every update look alike.

Which game: ``/tv/<slug>?spiel=<id>`` pins one game (the page shows and follows that game only;
an id that is no game of this Stammtisch is a 404). Without it, the running game with the
latest entry (a turn, a penalty, an undo; a game's start is no entry), so the TV stays where
the dice are when another table starts a game, and moves there with its first entry
(``tv.js`` does the same live); with no entry in any running game, the running game started
last; with none running, the last game's result, the year's Verlierer des Jahres and
"Warte auf das nächste Spiel …". The fragment takes the same ``spiel``: the game ``tv.js``
follows.

A private Stammtisch needs the pub form's login (the form's other pages redirect the same way);
the fragment answers 403 instead of a redirect, and ``tv.js`` then reloads the page.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import abort, current_app, flash, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from dashboard.readmodel import ReadModel

from ..domain import NotFound
from ..http.context import services
from ..rules import DomainEvent, count, limits, read_number, throws_word
from ..storage import Stammtisch, StoredEvents
from ..table.chancen import chance_line
from ..table.views import BIG, TURN, board
from .blueprint import asset, bp, zone
from .session import may_write

#: how many of the game's last event sentences the board lists
RECENT = 6
#: how many places of the Verlierer ranking the pause screen shows
RANKING = 5
#: how many of the last stored event rows tell which games are being played
ACTIVITY = 50
#: above this many Deckel in a game a stack is a bar, not one pictogram per Deckel
PICTOGRAMS_MAX = 21


def _tv_stammtisch(slug: str) -> Stammtisch | None:
    """The Stammtisch of ``slug`` if this browser may watch it (None: log in first)."""
    st = services().stammtisch(slug)  # unknown: 404
    if st.private and not may_write(st):
        return None
    return st


def _event_position(st: Stammtisch) -> int:
    """The Stammtisch's last event position: the stream resumes after it. Read before the
    board, so an event stored in between is sent again, never lost."""
    return services().repo.last_event_position(st.id)


def _version() -> str:
    """The TV's assets, as the page links them: a changed version makes ``tv.js`` reload."""
    return asset("tv.js") + " " + asset("tv.css")


def _newest(st: Stammtisch, status: str, size: int = 1) -> list[int]:
    """The ids of the newest games of ``st`` with ``status``, newest first."""
    query = {"page": 1, "page_size": size, "status": status}
    return [int(g["id"]) for g in services().games(st, query)["items"]]


def _imported(row: StoredEvents) -> bool:
    return any(
        e.get("kind") == "game_started" and e.get("data", {}).get("source") == "import"
        for e in row.events
    )


def _activity(st: Stammtisch, position: int) -> tuple[list[int], list[int]]:
    """The games of the Stammtisch's last stored events, the latest first: those with an
    entry (``seq`` > 0: a turn, a penalty, an undo) and those started at the table (an
    imported game's start is no activity there)."""
    rows = services().repo.stammtisch_events(st.id, max(0, position - ACTIVITY), ACTIVITY)
    entries: list[int] = []
    started: list[int] = []
    for row in reversed(rows):
        if row.seq > 0:
            if row.game_id not in entries:
                entries.append(row.game_id)
        elif row.game_id not in started and not _imported(row):
            started.append(row.game_id)
    return entries, started


def pinned_game(st: Stammtisch) -> int | None:
    """The game ``?spiel=<id>`` names (None: not given); 404 unless it is a game of ``st``
    (an id read as every number from text is: :func:`~api.rules.read_number`)."""
    if "spiel" not in request.args:
        return None
    wanted = request.args.get("spiel", "")
    game_id = read_number(wanted, limits.ID)
    if game_id is not None:
        try:
            services().game(st, game_id)
        except NotFound:
            pass
        else:
            return game_id
    shown = wanted if len(wanted) <= 24 else wanted[:24] + "…"
    raise _NoSuchGame(f"Bei {st.name} gibt es kein Spiel „{shown}“.")


class _NoSuchGame(Exception):
    """``?spiel=`` names no game of this Stammtisch (a German 404 page)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _chosen_game(st: Stammtisch, position: int) -> int | None:
    """The running game with the latest entry, else the running game
    started last, else the finished game with the latest entry (its result), else the newest
    running or finished game. A game left running long ago is not shown once others were played."""
    entries, started = _activity(st, position)
    running = set(_newest(st, "running", ACTIVITY))
    for game_id in [*entries, *started]:
        if game_id in running:
            return game_id
    finished = set(_newest(st, "finished", ACTIVITY))
    for game_id in entries:
        if game_id in finished:
            return game_id
    fallback = _newest(st, "running") or _newest(st, "finished")
    return fallback[0] if fallback else None


def _recent(entry_events: list[tuple[int, list[DomainEvent]]]) -> list[dict[str, str]]:
    """The game's last event sentences, newest first."""
    found: list[dict[str, str]] = []
    for _seq, events in reversed(entry_events):
        for event in reversed(events):
            found.append({"kind": event.kind.value, "message": event.message})
            if len(found) == RECENT:
                return found
    return found


def headline(events: list[DomainEvent]) -> dict[str, str] | None:
    """The ticker line of one stored entry: its outcome's sentences if it had one (the round
    lost, the half lost …), else the turn's; the kind of the weightiest event."""
    if not events:
        return None
    outcome = [e for e in events if e.kind not in TURN] or events
    big = [e for e in outcome if e.kind in BIG]
    kind = (big[-1] if big else outcome[-1]).kind.value
    return {"kind": kind, "message": " ".join(e.message for e in outcome)}


def _turn_line(turn: Any) -> dict[str, Any] | None:
    """Whose turn and the throws: used of the limit while a turn is open, else the limit."""
    if turn is None:
        return None
    used = turn.open.throws_used if turn.open is not None else 0
    if turn.limit_fixed:
        limit = f"höchstens {throws_word(turn.limit)}"
    else:
        limit = f"legt vor: bis zu {throws_word(turn.limit)}"
    return {"player": turn.player, "used": used, "limit": turn.limit, "limit_text": limit}


def opener_line(shown: dict[str, Any]) -> str | None:
    """Who opened the round and with how many throws: "Anna hat vorgelegt: mit 3 Würfen"."""
    if shown["opener"] is None:
        return None
    if shown["limit"]:
        return f"{shown['opener']} hat vorgelegt: mit {count(shown['limit'], 'Wurf', 'Würfen')}"
    return f"{shown['opener']} beginnt die Runde"


def _pictograms(stack: int, total: int) -> dict[str, Any]:
    """A stack as pictograms (one per Deckel) or, for big games, a bar in tenths."""
    if total <= PICTOGRAMS_MAX:
        return {"dots": stack, "tenths": None}
    return {"dots": None, "tenths": round(10 * stack / total) if total else 0}


def _game_context(st: Stammtisch, game_id: int) -> dict[str, Any]:
    """The board of one game, taken under the game's lock."""
    svc = services()
    with svc.cache.locked(game_id):
        view = svc.game(st, game_id)
        rt = view.runtime
        game = rt.game
        shown = board(game)
        for row in shown["rows"]:
            row["pictograms"] = _pictograms(row["stack"], game.total)
        last = rt.entry_events[-1][1] if rt.entry_events else []
        return {
            "game_id": game_id,
            "played_at": view.record.played_at,
            "board": shown,
            "turn": _turn_line(rt.turn_state()),
            # "Chancen" on the TV only when the Stammtisch shows them there too
            "chance": chance_line(game, rt.open_turn) if st.odds_shown == "form_and_tv" else None,
            "opener_line": opener_line(shown),
            "recent": _recent(rt.entry_events),
            "headline": headline(last),
            "seq": rt.last_seq,
        }


def _verlierer(st: Stammtisch) -> dict[str, Any] | None:
    """The Verlierer des Jahres of this year (or of the newest year with games)."""
    model = ReadModel(services().repo)
    year = datetime.now(zone()).year
    ranking = model.verlierer(st.id, year)
    if not ranking["ranking"]:
        years = model.years(st.id)
        if not years:
            return None
        year = int(years[0]["year"])
        ranking = model.verlierer(st.id, year)
    return {
        "year": year,
        "verlierer": ranking["verlierer"],
        "ranking": [r for r in ranking["ranking"] if r["games_lost"] > 0][:RANKING],
    }


def tv_context(st: Stammtisch) -> dict[str, Any]:
    """What the board shows: a running game, or the pause between games."""
    position = _event_position(st)
    pinned = pinned_game(st)
    game_id = pinned if pinned is not None else _chosen_game(st, position)
    ctx: dict[str, Any] = {
        "st": st,
        "pinned": pinned,
        "position": position,
        "version": _version(),
        "game": None,
        "verlierer": None,
        "stats_stale": False,
    }
    if game_id is not None:
        ctx["game"] = _game_context(st, game_id)
    if ctx["game"] is None or ctx["game"]["board"]["finished"]:
        ctx["verlierer"] = _verlierer(st)
        # a request never computes statistics: until the refresher caught up, say so
        ctx["stats_stale"] = ReadModel(services().repo).stale(st.id)
    ctx["state"] = (
        "none"
        if ctx["game"] is None
        else "finished"
        if ctx["game"]["board"]["finished"]
        else "running"
    )
    return ctx


def _no_such_game(error: _NoSuchGame) -> ResponseReturnValue:
    return render_template("error.html", code=404, message=error.message), 404


@bp.get("/tv/<slug>")
def tv(slug: str) -> ResponseReturnValue:
    st = _tv_stammtisch(slug)
    if st is None:
        flash("Bitte mit dem Schlüssel des Stammtischs anmelden.", "info")
        return redirect(url_for("web.home", stammtisch=slug))
    try:
        ctx = tv_context(st)
    except _NoSuchGame as error:
        return _no_such_game(error)
    ctx["events_url"] = f"/api/v1/stammtische/{st.slug}/events"
    ctx["refresh"] = max(5, int(current_app.config["TV_REFRESH_SECONDS"]))
    return render_template("tv.html", **ctx)


@bp.get("/tv/<slug>/tafel")
def tv_board(slug: str) -> ResponseReturnValue:
    """The board alone (what ``tv.js`` swaps in)."""
    st = _tv_stammtisch(slug)
    if st is None:
        abort(403)
    try:
        return render_template("tv_board.html", **tv_context(st))
    except _NoSuchGame as error:
        return _no_such_game(error)
