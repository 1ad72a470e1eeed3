"""Offline-first entry: the service worker and the endpoint its queue sends to.

A phone in a cellar pub loses its connection mid-game. Once the phone's engine is loaded
(``static/engine.js``: the same ``api/rules`` under Pyodide), the form's script
(``static/offline.js``) checks every entry (a turn, a throw of the throw card "Wurf für Wurf"
with its decision, or a penalty) on the phone first, shows its sentences at once, keeps it in
the browser's IndexedDB with an ``Idempotency-Key`` of its own,
its player and the game's version it was made for, and sends the queue in order to
:func:`queued_entry`:

* the same fields as the form (CSRF token included, so the login cookie alone is not enough),
  form-encoded, plus ``kind`` (``turn``, ``throw``, ``penalty``) and the header
  ``Idempotency-Key``; an entry always names its player (one without is refused: the server
  never books dice to whoever happens to be next; a throw is read for its own player, the dice
  in that player's cup, :func:`api.table.entry.card_throw`);
* under the game's lock and in one transaction: the answer stored for that key (the API's
  mechanism, :class:`api.http.idempotency.Idempotent`; per Stammtisch, the form's keys apart
  from the API's) is answered again (``Idempotent-Replayed: true``) and
  nothing recorded — an entry whose answer was lost is never recorded twice; a game that is
  decided or abandoned meanwhile takes nothing; otherwise the entry's ``seq`` must be the
  game's version (else 409 with what was entered meanwhile and the new state, so that the
  phone can re-apply each waiting entry for its own player); then the write and its stored
  answer, one commit; the write is the service's ``record`` (``turn``, ``throw`` or
  ``penalty``), the one the form and the API's ``POST …/games/<id>/throws`` call;
* JSON answers: 200 ``{"seq", "entry", "messages": [[kind, sentence], …]}``; every error is
  ``application/problem+json`` (``detail`` the German sentence, ``code`` as the API's, and the
  members the queue reads): 409 ``{"conflict": true, "seq", "last", "message", "state"}`` or
  ``{"closed": true, "seq", "message", "state"}`` (``state``: what the game page embeds,
  ``games.game_state``); 422 (400 without a valid key) ``{"rejected": true, "message"}``.

``/sw.js`` is served from the root, so its scope (``/``) covers every page of the form;
``Cache-Control: no-cache`` makes the browser check it for a new version on each visit.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from flask import Response, request
from flask.typing import ResponseReturnValue

from ..domain import DomainError, describe_entry
from ..http import problems
from ..http.context import services
from ..http.errors import status_of
from ..http.idempotency import KEY_HEADER, KEY_PATTERN, Idempotent
from ..rules import SchockenError
from ..storage import Stammtisch
from ..table.entry import FormErrors, read_entry
from ..table.screen import announced
from .blueprint import bp
from .games import game_state
from .session import logged_in_to_stammtisch

_KEY = re.compile(KEY_PATTERN)
#: fields of an entry that make it what it is (the CSRF token does not)
_ENTRY_FIELDS = ("seq", "kind", "player", "wurf", "d1", "d2", "d3", "throws", "reason", "deckel")
#: and those of a throw of the throw card (a turn's or a penalty's fingerprint stays as it was)
_THROW_FIELDS = ("w1", "w2", "w3", "x1", "x2", "x3", "decision")
#: the kinds of entry the queue sends; anything else is read as a turn, as before throws
_KINDS = ("turn", "throw", "penalty")


@bp.get("/sw.js")
def service_worker() -> Response:
    """The service worker, from the scope root so it may control ``/s/…`` pages."""
    assert bp.static_folder is not None
    script = (Path(bp.static_folder) / "sw.js").read_bytes()
    response = Response(script, mimetype="text/javascript")
    response.headers["Service-Worker-Allowed"] = "/"
    response.headers["Cache-Control"] = "no-cache"
    return response


def _json(status: int, **body: Any) -> Response:
    return Response(json.dumps(body, ensure_ascii=False), status, mimetype="application/json")


def _problem(status: int, code: str | None, message: str, **extra: Any) -> Response:
    """An error answer: RFC 9457 problem details (:mod:`api.http.problems`, ``detail`` the
    German sentence) with the members the queue reads (``message``, ``rejected`` …)."""
    return problems.response(problems.body(status, code, message, **extra))


def _kind() -> str:
    kind = request.form.get("kind", "")
    return kind if kind in _KINDS else "turn"


def _fingerprint(path: str) -> str:
    names = _ENTRY_FIELDS + (_THROW_FIELDS if _kind() == "throw" else ())
    parts = [path, *(f"{name}={request.form.get(name, '')}" for name in names)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _idempotent(st: Stammtisch, key: str) -> Idempotent:
    """The entry's Idempotency-Key: the API's mechanism, the form's keys apart from the API's
    (stored per Stammtisch as ``form\0<key>``), the entry's fields as its fingerprint."""
    return Idempotent(
        services().repo, st.id, f"form\0{key}", _fingerprint(request.path), sealed=False
    )


def _body(kind: str, rt: Any) -> dict[str, Any] | str:
    """The service's entry of the form fields, or a German message why there is none."""
    form = request.form
    errors = FormErrors()
    player = (form.get("player") or "").strip()
    if not player:
        # an entry keeps its player: the server never books it to whoever is next
        return "Der Eintrag kam ohne Spieler an; bitte neu eingeben."
    # a throw is read for the entry's own player, with the dice in that player's cup
    body = read_entry(kind, form, rt.game, rt.open_turn, player, errors)
    return errors.text() if body is None else body


def _closed(st: Stammtisch, game_id: int, rt: Any, abandoned: bool) -> Response | None:
    """409 for a game that takes no more entries: decided (by another phone) or abandoned."""
    if abandoned:
        message = "Das Spiel wurde abgebrochen: es nimmt keine Einträge mehr."
    elif rt.game.loser is not None:
        message = f"Das Spiel ist schon entschieden: {rt.game.loser} hat verloren."
    else:
        return None
    code = "game_abandoned" if abandoned else "game_finished"
    return _problem(409, code, message, closed=True, seq=rt.last_seq, state=_state(st, game_id))


def _conflict(st: Stammtisch, game_id: int, rt: Any) -> Response:
    last = rt.entries[-1] if rt.entries else None
    said = describe_entry(last.kind, last.body) if last else "ein Eintrag zurückgenommen"
    message = (
        f"Auf einem anderen Handy wurde inzwischen eingetragen ({said}). "
        "Die wartenden Einträge dieses Handys waren für den alten Stand."
    )
    state = _state(st, game_id)
    return _problem(
        409, "concurrent_change", message, conflict=True, seq=rt.last_seq, last=said, state=state
    )


def _state(st: Stammtisch, game_id: int) -> dict[str, Any]:
    return game_state(st, game_id)[1]


def _write(st: Stammtisch, game_id: int, idem: Idempotent) -> Response:
    """Inside the game's lock and transaction: replay, closed game, conflict, rejection or the
    write."""
    svc = services()
    stored = idem.stored()
    if stored is not None:
        if stored.fingerprint != idem.fingerprint:
            message = "Dieser Eintrag wurde schon anders gesendet."
            return _problem(422, "idempotency_key_reused", message, rejected=True)
        return idem.replay(stored)
    view = svc.game(st, game_id)
    rt = view.runtime
    closed = _closed(st, game_id, rt, view.record.status == "abandoned")
    if closed is not None:
        return closed
    if request.form.get("seq", "") != str(rt.last_seq):
        return _conflict(st, game_id, rt)
    kind = _kind()
    body = _body(kind, rt)
    if isinstance(body, str):
        return _problem(422, "invalid_input", body, rejected=True)
    result = svc.record(st, game_id, kind, body)  # an engine's refusal leaves by exception
    response = _json(
        200, seq=result.seq, entry=describe_entry(kind, body), messages=announced(result.events)
    )
    idem.store(response)
    return response


@bp.post("/s/<slug>/spiel/<id:game_id>/eintrag")
@logged_in_to_stammtisch
def queued_entry(st: Stammtisch, game_id: int) -> ResponseReturnValue:
    """One entry of an offline queue (see the module's docstring)."""
    key = request.headers.get(KEY_HEADER, "")
    if not _KEY.match(key):
        message = "Der Eintrag kam ohne gültigen Schlüssel an."
        return _problem(400, "idempotency_key_invalid", message, rejected=True)
    svc = services()
    try:
        with svc.writing(game_id):
            return _write(st, game_id, _idempotent(st, key))
    except (SchockenError, DomainError) as err:
        status = 422 if isinstance(err, SchockenError) else status_of(err)
        return _problem(status, err.code, err.message, rejected=True)
