"""The phone's offline engine: what the browser's worker calls (``static/engine.js``), the
same engine and the same screen as the server's, so the phone never guesses a rule.

The page embeds the game's *state* (``api/web/games.py``, ``game_state``): the header, every
effective entry, the version ``seq``, the URLs and the CSRF token of the screen. This module
keeps two tables of that game:

* the **base**, what the server has acknowledged (the page's state, then each entry the
  server answered for);
* the **prediction**, the base plus the entries waiting on this phone, each applied *for its
  own player* by the engine. An entry the engine refuses on the base (another phone wrote
  meanwhile) is listed with the engine's German message, never booked to somebody else.

An entry is a whole turn, a penalty, or one throw of the throw card ("Wurf für Wurf") with its
decision: the game log's ``throw`` entry, fed by :func:`api.rules.feed_entry` as on the
server, so the open turn (dice set aside, throws used) and a turn finished by "Stehen lassen"
or the limit are the server's. The throws of one turn hang together: when one of them no
longer fits, the later throws of that turn are refused with it, and dropping it drops them.

Every function takes one JSON string and returns one JSON string (plain text crosses the
Pyodide boundary). Each answer that changes the screen carries its HTML
(``templates/table/screen.html``, the server's own partial), whether the game is over, whose
turn is next, and the waiting entries with their labels, versions and refusals.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape

from ..rules import DomainEvent, SchockenError, count, turn_state
from . import entry as form_entry
from .chancen import advice
from .entry import FormErrors, describe_entry, field_of
from .play import Table
from .screen import announced, screen

WAITING = " – wartet noch"
#: why a throw waits in vain: an earlier throw of its turn no longer fits
EARLIER_THROW = "Ein früherer Wurf dieses Zugs passt nicht mehr."
#: the kinds of entry the phone takes
KINDS = ("turn", "throw", "penalty")


@dataclass
class Waiting:
    """An entry waiting on this phone: its kind and body as the server will take them."""

    kind: str
    body: dict[str, Any]
    label: str = ""
    seq: int | None = None  # the version it applies to in the prediction; None: refused
    refused: str | None = None  # the engine's German message when it no longer applies


@dataclass
class Session:
    state: dict[str, Any]
    base: Table
    base_seq: int
    waiting: list[Waiting] = field(default_factory=list)
    predicted: Table | None = None

    def predict(self) -> Table:
        """The base plus every waiting entry the engine accepts there, for its own player (not
        the later throws of a turn whose throw the engine refuses)."""
        table = Table.from_json(self.base.to_json())
        seq = self.base_seq
        broken: set[int] = set()
        for index, entry in enumerate(self.waiting):
            if index in broken:
                entry.seq, entry.refused = None, EARLIER_THROW
                continue
            try:
                events = table.feed(seq + 1, entry.kind, entry.body)
            except SchockenError as err:
                entry.seq, entry.refused = None, err.message
                broken.update(self.same_turn(index)[1:])
                continue
            entry.seq, entry.refused = seq, None
            entry.label = label_of(entry.kind, entry.body, events)
            seq += 1
        self.predicted = table
        return table

    def same_turn(self, index: int) -> list[int]:
        """Waiting entry ``index`` and, for a throw, the later waiting throws of its turn: the
        next throws of the same player, up to the one that stops."""
        found = [index]
        entry = self.waiting[index]
        for later in range(index + 1, len(self.waiting)):
            nxt = self.waiting[later]
            if entry.kind != "throw" or entry.body.get("stop") or nxt.kind != "throw":
                break
            if nxt.body.get("player") != entry.body.get("player"):
                break
            found.append(later)
            entry = nxt
        return found


_env: Environment | None = None
_session: Session | None = None


def environment() -> Environment:
    """The Jinja environment of the screen (the server's has the same filter)."""
    global _env
    if _env is None:
        _env = Environment(
            loader=FileSystemLoader(Path(__file__).parent / "templates"),
            autoescape=select_autoescape(["html"]),
        )
        _env.filters["count"] = count
    return _env


def player_of(kind: str, body: dict[str, Any]) -> str:
    return str(body["penalty"]["player"] if kind == "penalty" else body["player"])


def label_of(kind: str, body: dict[str, Any], events: list[DomainEvent]) -> str:
    """A waiting entry in words that always name its player: the engine's sentence of its
    player's turn ("Bert: Zahl 653 (3-5-6, 1 Wurf)."; not that of another player's open turn it
    closed), for a throw that leaves the turn open the sentence of the throw ("Bert: Wurf 1 –
    1-4-6, legt 1 heraus."), else the entry described."""
    player = player_of(kind, body)
    for wanted in ("turn_recorded", "throw_recorded"):
        for event in events:
            if event.kind.value == wanted and getattr(event.data, "player", None) == player:
                return event.message.rstrip(".")
    return describe_entry(kind, body)


def _current() -> Session:
    if _session is None:
        raise RuntimeError("no game loaded")
    return _session


def _answer(
    session: Session,
    announcements: list[tuple[str, str]] | None = None,
    throw: form_entry.ThrowInput | None = None,
) -> str:
    """The screen of the prediction as JSON (see the module's docstring); ``throw``: the throw
    card as entered, its odds asked for ("Chancen zeigen")."""
    table = session.predicted or session.predict()
    state = session.state
    accepted = [w for w in session.waiting if w.refused is None]
    last_entry = state.get("last_entry")
    if accepted:
        last_entry = accepted[-1].label + WAITING
    seq = session.base_seq + len(accepted)
    context = screen(
        table.game,
        table.entry_events,
        seq=seq,
        number=state["number"],
        urls=state["urls"],
        csrf=state["csrf"],
        open_turn=table.open_turn.player if table.open_turn else None,
        last_entry=last_entry,
        abandoned=bool(state.get("abandoned")),
        announcements=announcements or (),
        throwing=table.open_turn,
        odds_shown=str(state.get("odds_shown") or "off"),
        throw_entered=throw,
        show_odds=throw is not None,
    )
    html = environment().get_template("table/screen.html").render(context)
    game_state = table.game.state()
    return json.dumps(
        {
            "html": html,
            "seq": seq,
            "base_seq": session.base_seq,
            "finished": table.game.loser is not None or bool(state.get("abandoned")),
            "loser": table.game.loser,
            "next_player": game_state.next_player,
            "waiting": [
                {"label": w.label, "seq": w.seq, "refused": w.refused} for w in session.waiting
            ],
        },
        ensure_ascii=False,
    )


def _waiting(raw: list[dict[str, Any]]) -> list[Waiting]:
    return [Waiting(w["kind"], w["body"], w.get("label", "")) for w in raw]


def load(arg: str) -> str:
    """``{"state": <page state>, "waiting": [{"kind", "body"}, …]}``: the game and the
    entries waiting on this phone (from IndexedDB) → the screen."""
    global _session
    doc = json.loads(arg)
    state = doc["state"]
    _session = Session(state, Table.from_json(state), int(state["seq"]), _waiting(doc["waiting"]))
    return _answer(_session)


def rebase(arg: str) -> str:
    """``{"state": <the server's new state>}`` (after a conflict): the waiting entries applied
    again, each for its own player, on what the server has now."""
    session = _current()
    state = json.loads(arg)["state"]
    session.state, session.base, session.base_seq = state, Table.from_json(state), state["seq"]
    session.predicted = None
    return _answer(session)


def _read(kind: str, fields: dict[str, str], table: Table, errors: FormErrors) -> Any:
    """The entry of the form's fields as the server reads them (``api/web/offline.py``), or
    None with ``errors``. A throw is read for the card's player (its hidden field)."""
    player = fields.get("player", "").strip()
    if kind == "throw" and not player:
        state = turn_state(table.game, table.open_turn)
        player = state.player if state else ""
    return form_entry.read_entry(kind, fields, table.game, table.open_turn, player, errors)


def _field(kind: str, err: SchockenError) -> str:
    """Where the form shows an engine's refusal of an entry of this kind."""
    return {"turn": field_of(err.field), "throw": "throw"}.get(kind, "reason")


def enter(arg: str) -> str:
    """``{"kind": "turn"|"throw"|"penalty", "fields": {form fields}}``: the entry checked by
    the engine on the predicted state. Accepted: it waits (``entry``: kind, body, label) and
    the screen announces its sentences; refused: ``{"ok": false, "field", "message"}``, nothing
    changed."""
    session = _current()
    doc = json.loads(arg)
    table = session.predicted or session.predict()
    fields = {k: str(v) for k, v in doc["fields"].items()}
    errors = FormErrors()
    kind = doc["kind"] if doc["kind"] in KINDS else "turn"
    body = _read(kind, fields, table, errors)
    if body is None:
        name = next(iter(errors.fields))
        return json.dumps({"ok": False, "field": name, "message": errors.text()})
    if any(w.refused for w in session.waiting):
        message = "Erst die wartenden Einträge klären, die nicht mehr passen."
        return json.dumps({"ok": False, "field": "form", "message": message})
    seq = session.base_seq + len(session.waiting)
    try:
        events = table.feed(seq + 1, kind, body)
    except SchockenError as err:
        return json.dumps({"ok": False, "field": _field(kind, err), "message": err.message})
    entry = Waiting(kind, body, label_of(kind, body, events), seq)
    session.waiting.append(entry)
    said = announced(events)
    answer = json.loads(_answer(session, said))
    answer.update(
        ok=True,
        entry={"kind": kind, "body": body, "label": entry.label, "seq": seq},
        announcements=said,
    )
    return json.dumps(answer, ensure_ascii=False)


def drop(arg: str) -> str:
    """``{"index": i}``: the waiting entry i forgotten (dropped, or taken back to be edited),
    a throw with the later throws of its turn; ``dropped``: the indices forgotten."""
    session = _current()
    dropped = session.same_turn(int(json.loads(arg)["index"]))
    for index in reversed(dropped):
        del session.waiting[index]
    session.predicted = None
    answer = json.loads(_answer(session))
    answer["dropped"] = dropped
    return json.dumps(answer, ensure_ascii=False)


def drop_all(arg: str) -> str:
    """Every waiting entry forgotten: the screen of what the server has."""
    session = _current()
    session.waiting.clear()
    session.predicted = None
    return _answer(session)


def confirm(arg: str) -> str:
    """``{"seq": n}``: the server recorded the first waiting entry as version n."""
    session = _current()
    entry = session.waiting.pop(0)
    seq = int(json.loads(arg)["seq"])
    session.base.feed(seq, entry.kind, entry.body)
    session.base_seq = seq
    last = describe_entry(entry.kind, entry.body)
    session.state = {**session.state, "seq": seq, "last_entry": last}
    return json.dumps({"base_seq": seq})


def render(arg: str) -> str:
    """``{"announcements": [[kind, sentence], …]}``: the screen as it is, with these lines."""
    doc = json.loads(arg)
    return _answer(_current(), [(k, m) for k, m in doc.get("announcements", [])])


def chancen(arg: str) -> str:
    """``{"dice": [pips of the throw in the cup]}``: the odds of the next player's throw on
    the predicted state (the throw-by-throw card's "Chancen", :func:`.chancen.advice`), as
    ``{"lines": [German lines, best first], "note": German note or null}``; nothing when the
    Stammtisch does not show them."""
    session = _current()
    if str(session.state.get("odds_shown") or "off") == "off":
        return json.dumps({"lines": [], "note": None})
    table = session.predicted or session.predict()
    dice = tuple(int(d) for d in json.loads(arg)["dice"])
    found = advice(table.game, table.open_turn, dice)
    return json.dumps({"lines": list(found.lines), "note": found.note}, ensure_ascii=False)


def show_odds(arg: str) -> str:
    """``{"fields": {the throw card's fields}}``: "Chancen zeigen" on the phone, writing
    nothing: the screen as the server draws it for that button (``api/web/games.py``), the
    dice kept in the card and the odds of the next player's throw on the predicted state (or
    why there are none)."""
    session = _current()
    table = session.predicted or session.predict()
    state = turn_state(table.game, table.open_turn)
    player = state.player if state else ""
    fields = {k: str(v) for k, v in json.loads(arg)["fields"].items()}
    return _answer(
        session, throw=form_entry.card_entered(fields, table.game, table.open_turn, player)
    )


def hello(arg: str) -> str:
    """Which Python runs the engine (a smoke test of the worker)."""
    return json.dumps({"echo": json.loads(arg), "python": sys.version.split()[0]})
