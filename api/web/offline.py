"""Offline-first entry: the service worker and the endpoint its queue sends to.

A phone in a cellar pub loses its connection mid-game. Once the phone's engine is loaded
(``static/engine.js``: the same ``api/rules`` under Pyodide), the form's script
(``static/offline.js``) checks every entry (a turn or a penalty) on the phone first, shows its
sentences at once, keeps it in the browser's IndexedDB with an ``Idempotency-Key`` of its own,
its player and the game's version it was made for, and sends the queue in order to
:func:`queued_entry`:

* the same fields as the form (CSRF token included, so the login cookie alone is not enough),
  form-encoded, plus the header ``Idempotency-Key``; an entry always names its player (one
  without is refused: the server never books dice to whoever happens to be next);
* under the game's lock and in one transaction: the answer stored for that key (the API's
  mechanism, :class:`api.http.idempotency.Idempotent`; per Stammtisch, the form's keys apart
  from the API's) is answered again (``Idempotent-Replayed: true``) and
  nothing recorded — an entry whose answer was lost is never recorded twice; a game that is
  decided or abandoned meanwhile takes nothing; otherwise the entry's ``seq`` must be the
  game's version (else 409 with what was entered meanwhile and the new state, so that the
  phone can re-apply each waiting entry for its own player); then the write and its stored
  answer, one commit;
* JSON answers: 200 ``{"seq", "entry", "messages": [[kind, sentence], …]}``; 409
  ``{"conflict": true, "seq", "last", "message", "state"}`` or ``{"closed": true, "seq",
  "message", "state"}`` (``state``: what the game page embeds, ``games.game_state``); 422
  ``{"rejected": true, "message"}``.

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
from ..http.context import services
from ..http.errors import status_of
from ..http.idempotency import KEY_HEADER, KEY_PATTERN, Idempotent
from ..rules import Ruleset, SchockenError
from ..storage import Stammtisch
from ..table.entry import FormErrors, parse_turn, penalty_body
from ..table.screen import announced
from .blueprint import bp
from .games import game_state
from .session import logged_in_to_stammtisch

_KEY = re.compile(KEY_PATTERN)
#: fields of an entry that make it what it is (the CSRF token does not)
_ENTRY_FIELDS = ("seq", "kind", "player", "wurf", "d1", "d2", "d3", "throws", "reason", "deckel")


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


def _fingerprint(path: str) -> str:
    parts = [path, *(f"{name}={request.form.get(name, '')}" for name in _ENTRY_FIELDS)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _idempotent(st: Stammtisch, key: str) -> Idempotent:
    """The entry's Idempotency-Key: the API's mechanism, the form's keys apart from the API's
    (stored per Stammtisch as ``form\0<key>``), the entry's fields as its fingerprint."""
    return Idempotent(
        services().repo, st.id, f"form\0{key}", _fingerprint(request.path), sealed=False
    )


def _body(kind: str, rules: Ruleset) -> dict[str, Any] | str:
    """The service's entry of the form fields, or a German message why there is none."""
    form = request.form
    errors = FormErrors()
    if not (form.get("player") or "").strip():
        # an entry keeps its player: the server never books it to whoever is next
        return "Der Eintrag kam ohne Spieler an; bitte neu eingeben."
    if kind == "penalty":
        entered = {name: (form.get(name) or "").strip() for name in ("player", "reason", "deckel")}
        deckel_mode = rules.options()["penalty_mode"] == "deckel"
        penalty = penalty_body(entered, deckel_mode, rules.penalty, errors)
        return errors.text() if errors else {"penalty": penalty}
    _, body = parse_turn(form, rules.dice_count, errors)
    return errors.text() if body is None else body


def _closed(st: Stammtisch, game_id: int, rt: Any, abandoned: bool) -> Response | None:
    """409 for a game that takes no more entries: decided (by another phone) or abandoned."""
    if abandoned:
        message = "Das Spiel wurde abgebrochen: es nimmt keine Einträge mehr."
    elif rt.game.loser is not None:
        message = f"Das Spiel ist schon entschieden: {rt.game.loser} hat verloren."
    else:
        return None
    return _json(409, closed=True, seq=rt.last_seq, message=message, state=_state(st, game_id))


def _conflict(st: Stammtisch, game_id: int, rt: Any) -> Response:
    last = rt.entries[-1] if rt.entries else None
    said = describe_entry(last.kind, last.body) if last else "ein Eintrag zurückgenommen"
    message = (
        f"Auf einem anderen Handy wurde inzwischen eingetragen ({said}). "
        "Die wartenden Einträge dieses Handys waren für den alten Stand."
    )
    return _json(
        409, conflict=True, seq=rt.last_seq, last=said, message=message, state=_state(st, game_id)
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
            return _json(422, rejected=True, message="Dieser Eintrag wurde schon anders gesendet.")
        return idem.replay(stored)
    view = svc.game(st, game_id)
    rt = view.runtime
    closed = _closed(st, game_id, rt, view.record.status == "abandoned")
    if closed is not None:
        return closed
    if request.form.get("seq", "") != str(rt.last_seq):
        return _conflict(st, game_id, rt)
    kind = "penalty" if request.form.get("kind") == "penalty" else "turn"
    body = _body(kind, rt.rules)
    if isinstance(body, str):
        return _json(422, rejected=True, message=body)
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
        return _json(400, rejected=True, message="Der Eintrag kam ohne gültigen Schlüssel an.")
    svc = services()
    try:
        with svc.writing(game_id):
            return _write(st, game_id, _idempotent(st, key))
    except (SchockenError, DomainError) as err:
        status = 422 if isinstance(err, SchockenError) else status_of(err)
        return _json(status, rejected=True, message=err.message)
