"""Safe retries and no lost updates for every write of the API.

Pub Wi-Fi drops answers and phones send again; two phones log one game. Every write view under
``/api/v1`` is wrapped (:func:`guard_writes`) so that

* **Idempotency-Key**: a write sent with the header runs inside one transaction that also stores
  its response (per Stammtisch and key, kept ``IDEMPOTENCY_TTL_HOURS``; the creation of a
  Stammtisch, which has no credential yet, per client address and key). A repeat with the same
  key and the same request gets the stored status and body again (header
  ``Idempotent-Replayed: true``) and records nothing; the same key with another method, path or
  body is a 422. Only successful answers are stored: a rejected write changed nothing, so
  sending it again is harmless. Because the response is committed with the write, a retry
  after a crash finds either both or neither.
* **ETag / If-Match**: a game's version is the sequence number of its last log entry. Reading
  a game and every write to it answer with ``ETag: "<seq>"``; a write to a game that sends
  ``If-Match`` with another version gets 412 with the current state (under ``game``) and
  changes nothing. ``If-Match: *`` matches any version.

The stored answers are one implementation (:class:`Idempotent`) for the API and the pub
form's offline queue (``api/web/offline.py``, its keys kept apart from the API's).

Every write is **one database transaction** (:meth:`api.domain.base.UseCases.writing`): the
use case's own, or, for a write with a key or an ``If-Match``, one opened here around the
whole view (the use case inside enters no second one): the replay check, the version check,
the engine's reads, the log entry, its facts, its events and outbox rows, and the stored
answer commit together.
Several server processes share one database, so both checks and the write run in that
transaction, opened first (``BEGIN IMMEDIATE`` on SQLite: it takes the write lock, and
writers of every process queue for it): the stored answer to the key is looked up, then the
game's version read from the database (``Repository.game_version``; a cached engine state is
replayed from the stored log when another process moved the game on) is compared with
``If-Match``, then the view writes, and its answer is stored with the write; one commit. A
second request with the same key (in any process) waits for the first's commit and then gets
its answer replayed. The primary keys (game, seq) and (Stammtisch, key) are the backstop.
Replays are checked before ``If-Match``: a retry whose first attempt went through gets its
original answer even though the version has moved on since. The process's lock of the game (or
of the Stammtisch's players) is taken before the transaction: it guards the engine state this
process caches, not the database.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, NoReturn

from flask import Flask, Response, current_app, g, make_response, request
from webargs.flaskparser import abort

from ..domain import CONCURRENT_CHANGE, Conflict, Services, utcnow
from ..storage import Repository, Stammtisch, StorageConflict, StoredResponse
from . import problems
from .blueprint import JsonRefused, body_json
from .context import WRITE_METHODS, caller, services

KEY_HEADER = "Idempotency-Key"
KEY_PATTERN = r"^[\x21-\x7e]{1,255}$"
_KEY = re.compile(KEY_PATTERN)
#: endpoints whose GET answers with a game's state (and its ETag)
GAME_READ_ENDPOINTS = frozenset({"games.GameItem"})
#: POST operations that store nothing (a computation): no Idempotency-Key, no If-Match
READ_ONLY_POSTS = frozenset({"/api/v1/rules/evaluate"})


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _pad(scope: int, key: str, length: int) -> bytes:
    return hashlib.shake_256(f"schocken-idempotency\0{scope}\0{key}".encode()).digest(length)


def seal(scope: int, key: str, body: bytes) -> bytes:
    """XOR with a pad derived from the key: stored rows do not disclose a response (the
    token of a new Stammtisch) to someone without the key. The same call opens it again."""
    if not body:
        return body
    pad = _pad(scope, key, len(body))
    return (int.from_bytes(body) ^ int.from_bytes(pad)).to_bytes(len(body))


def fingerprint() -> str:
    """Method, path, query and body of this request; JSON bodies compared by value."""
    raw = request.get_data(cache=True)
    try:
        doc = body_json()
    except JsonRefused:
        body = raw
    else:
        body = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    digest = hashlib.sha256()
    for part in (request.method, request.path, request.query_string.decode("latin-1")):
        digest.update(part.encode() + b"\0")
    digest.update(body)
    return digest.hexdigest()


def etag_of(seq: int) -> str:
    return f'"{seq}"'


def if_match_allows(header: str, seq: int) -> bool:
    """RFC 9110 If-Match against the game's version (weak tags compared by their value)."""
    for tag in header.split(","):
        tag = tag.strip()
        if tag == "*":
            return True
        if tag.startswith("W/"):
            tag = tag[2:]
        if tag.strip('"') == str(seq):
            return True
    return False


def _seq_of(response: Response) -> int | None:
    """The game version an answer shows: ``seq`` of a game, ``game.seq`` of a write result
    (noted by the view as ``g.game_seq``; otherwise read from the body)."""
    if not 200 <= response.status_code < 300:
        return None
    noted = g.get("game_seq")
    if isinstance(noted, int):
        return noted
    if response.mimetype != "application/json":
        return None
    data = response.get_json(silent=True)
    if isinstance(data, dict) and isinstance(data.get("game"), dict):
        data = data["game"]
    seq = data.get("seq") if isinstance(data, dict) else None
    return seq if isinstance(seq, int) else None


def _malformed(view: Any) -> bool:
    """Would the view reject this body as malformed (422)? Then that answer comes first,
    not a 412: the request could not have succeeded on any version."""
    method = getattr(getattr(view, "view_class", None), request.method.lower(), None)
    arguments = getattr(method, "_apidoc", {}).get("arguments", {}).get("parameters", [])
    for param in arguments:
        if param.get("in") != "json":
            continue
        raw = request.get_data(cache=True)
        if not raw:
            return bool(param.get("required"))
        try:
            data = body_json()
        except JsonRefused:
            return True
        return bool(param["schema"].validate(data))
    return False


def _bad_key(msg: str, code: str = "idempotency_key_invalid") -> NoReturn:
    abort(422, message=msg, messages={"headers": {KEY_HEADER: [msg]}}, problem=code)


def _precondition_failed(header: str, state: dict[str, Any]) -> Response:
    detail = (
        f"Das Spiel wurde inzwischen weitergeführt: Stand {state['seq']}, gesendet "
        f"wurde {header}. Nichts wurde eingetragen; bitte den aktuellen Stand "
        "ansehen und den Zug neu eingeben."
    )
    doc = problems.body(412, "precondition_failed", detail, game=state)
    return problems.response(doc, {"ETag": etag_of(state["seq"])})


def _with_etag(response: Response) -> Response:
    seq = _seq_of(response)
    if seq is not None:
        response.headers["ETag"] = etag_of(seq)
    return response


def _purge_now(app: Flask) -> bool:
    """Once an hour per process: forget stored responses older than the TTL."""
    state = app.extensions["schocken_idempotency"]
    now = time.monotonic()
    with state["guard"]:
        if now - state["purged"] < 3600:
            return False
        state["purged"] = now
    return True


@dataclass(frozen=True, slots=True)
class Idempotent:
    """The stored answer of one ``Idempotency-Key``: of the API (:func:`guard_writes`) and of
    the form's offline queue (api/web/offline.py), one implementation.

    ``scope`` is the Stammtisch's id (0: the creation of a Stammtisch), ``key`` the key as
    stored (see :attr:`_Write.scoped_key`; the form's keys as ``form\0<key>``, apart from the
    API's), ``fingerprint`` what makes the request what it is. Used inside the write's
    transaction: :meth:`stored` first, then the write and :meth:`store`, one commit."""

    repo: Repository
    scope: int
    key: str
    fingerprint: str
    #: bodies kept sealed (:func:`seal`); the form's are kept as they are, as before (they
    #: hold no secret, and an entry stored before an upgrade is still answered the same)
    sealed: bool = True

    def _seal(self, body: bytes) -> bytes:
        return seal(self.scope, self.key, body) if self.sealed else body

    def stored(self) -> StoredResponse | None:
        """The answer stored for this key, if any (its fingerprint may be another's)."""
        return self.repo.get_response(self.scope, key_hash(self.key))

    def replay(self, stored: StoredResponse) -> Response:
        """The stored answer again, marked ``Idempotent-Replayed: true``."""
        response = Response(
            self._seal(stored.body),
            status=stored.status,
            content_type=stored.content_type,
        )
        response.headers["Idempotent-Replayed"] = "true"
        return response

    def store(self, response: Response) -> None:
        """Store a successful answer under the key (inside the write's transaction; a
        rejected write changed nothing, so it is not stored). Once an hour per process the
        answers older than ``IDEMPOTENCY_TTL_HOURS`` go in the same transaction."""
        if not 200 <= response.status_code < 300:
            return
        self.repo.save_response(
            StoredResponse(
                self.scope,
                key_hash(self.key),
                self.fingerprint,
                response.status_code,
                response.content_type or "application/json",
                self._seal(response.get_data()),
                utcnow(),
            )
        )
        if _purge_now(current_app):
            hours = current_app.config.get("IDEMPOTENCY_TTL_HOURS", 48)
            self.repo.purge_responses(utcnow() - timedelta(hours=hours))


@dataclass(frozen=True, slots=True)
class _Write:
    """One guarded write: its key (if any), the Stammtisch and game it goes to, its use cases."""

    svc: Services
    key: str | None
    stammtisch: Stammtisch | None
    game_id: int | None

    @property
    def scope(self) -> int:
        return self.stammtisch.id if self.stammtisch is not None else 0

    @property
    def scoped_key(self) -> str:
        """The key as stored: a Stammtisch's writes share its token, so their keys are the
        Stammtisch's (scope); an unauthenticated creation has no credential, so its key is
        the client's: another client sending the same key and body creates its own
        Stammtisch and never gets this one's token replayed."""
        assert self.key is not None
        if self.stammtisch is not None:
            return self.key
        return f"{request.remote_addr or ''}\0{self.key}"

    def lock(self) -> int | None:
        """The process's lock of the game (or of the Stammtisch's players), taken before the
        transaction and held to the commit."""
        if self.game_id is not None:
            return self.game_id
        return -self.stammtisch.id if self.stammtisch is not None else None

    def idempotent(self) -> Idempotent | None:
        if self.key is None:
            return None
        return Idempotent(self.svc.repo, self.scope, self.scoped_key, fingerprint())

    def replayed(self, idem: Idempotent | None) -> Response | None:
        """The stored answer to this key, if the same request was made before."""
        stored = idem.stored() if idem is not None else None
        if idem is None or stored is None:
            return None
        if stored.fingerprint != idem.fingerprint:
            _bad_key(
                "Dieser Idempotency-Key wurde schon für eine andere Anfrage benutzt; "
                "für einen neuen Eintrag bitte einen neuen Schlüssel senden.",
                "idempotency_key_reused",
            )
        return idem.replay(stored)

    def stale(self, if_match: str | None, view: Any) -> Response | None:
        """412 with the current state when ``If-Match`` names an older version of the game."""
        if if_match is None or self.game_id is None or self.stammtisch is None:
            return None
        if _malformed(getattr(view, "__wrapped__", view)):
            return None  # the 422 comes first: the body could not succeed on any version
        current = self.svc.game(self.stammtisch, self.game_id)
        if if_match_allows(if_match, current.runtime.last_seq):
            return None
        return _precondition_failed(if_match, current.to_dict())


def _guarded_write(view: Any, args: Any, kwargs: dict[str, Any]) -> Response:
    """A write with an ``Idempotency-Key`` or an ``If-Match`` on a game: one transaction
    (opened first) holds the replay check, the ``If-Match`` check, the command and its
    stored answer."""
    key = request.headers.get(KEY_HEADER)
    if key is not None and not _KEY.match(key):
        _bad_key("Der Idempotency-Key muss 1 bis 255 sichtbare ASCII-Zeichen lang sein.")
    svc = services()
    st = caller(kwargs["slug"]).writable() if "slug" in kwargs else None
    write = _Write(svc, key, st, kwargs.get("game_id"))
    idem = write.idempotent()

    try:
        with svc.writing(write.lock()):
            answer = write.replayed(idem)
            if answer is None:
                answer = write.stale(request.headers.get("If-Match"), view)
            if answer is not None:
                return _with_etag(answer)
            response = make_response(view(*args, **kwargs))
            if idem is not None:
                idem.store(response)
    except StorageConflict as err:  # the backstop: a key or a sequence number was taken
        raise Conflict(CONCURRENT_CHANGE, code="concurrent_change") from err
    return _with_etag(response)


def _guarded(view: Any, endpoint: str) -> Any:
    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Response:
        game_id = kwargs.get("game_id")
        if request.method not in WRITE_METHODS:
            response = make_response(view(*args, **kwargs))
            return _with_etag(response) if endpoint in GAME_READ_ENDPOINTS else response
        if KEY_HEADER not in request.headers and (
            "If-Match" not in request.headers or game_id is None
        ):
            # nothing to look up first: the use case's own write is the one transaction, and
            # the body is parsed before it takes the write lock
            response = make_response(view(*args, **kwargs))
            # a game's answer (also of a new game: its version noted) carries its ETag
            return _with_etag(response) if game_id is not None or "game_seq" in g else response
        return _guarded_write(view, args, kwargs)

    return wrapped


def guard_writes(app: Flask) -> None:
    """Wrap every view under ``/api/v1`` that takes a write method (and the game reads, for
    their ETag). Call after every blueprint is registered."""
    app.extensions["schocken_idempotency"] = {"guard": threading.Lock(), "purged": 0.0}
    endpoints = {
        rule.endpoint
        for rule in app.url_map.iter_rules()
        if rule.rule.startswith("/api/v1/")
        and rule.rule not in READ_ONLY_POSTS
        and not rule.endpoint.startswith("admin.")
        and ((rule.methods or set()) & WRITE_METHODS or rule.endpoint in GAME_READ_ENDPOINTS)
    }
    for endpoint in endpoints:
        app.view_functions[endpoint] = _guarded(app.view_functions[endpoint], endpoint)


__all__ = [
    "KEY_HEADER",
    "KEY_PATTERN",
    "READ_ONLY_POSTS",
    "Idempotent",
    "guard_writes",
    "if_match_allows",
    "seal",
]
