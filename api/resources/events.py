"""Live events: a Stammtisch's or one game's domain events as Server-Sent Events."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from flask import Response, current_app, g, request, session
from flask.views import MethodView
from werkzeug.exceptions import HTTPException, ServiceUnavailable, TooManyRequests

from schemas.live import EventStreamHeadersSchema, EventStreamQuerySchema, LiveEventSchema

from ..domain.events import Access
from ..http.context import OPTIONAL_BEARER, bearer_token, services
from ..http.hub import CLIENT_FULL
from ..http.sse import HEADERS, HUB_KEY, RETRY_MS, EventStream, StreamSettings
from ..rules import limits, read_number
from .access import STAMMTISCH, blueprint

#: seconds a client told 503 (every stream of the process taken) waits before it tries again
RETRY_AFTER = 5

STREAM_DOC = f"""A `text/event-stream` (Server-Sent Events, as `EventSource` reads it): one \
message per domain event, from the stored event log, in the order the entries were stored.

    event: turn_recorded
    data: {{"kind":"turn_recorded","message":"…","data":{{…}},"game_id":7,"seq":12,\
"position":40,"recorded_at":"2026-12-01T20:15:00+00:00"}}
    id: 12

* `event:` the event's kind; `data:` one line of JSON (schema `LiveEvent`): the event as a \
write answers it (`kind`, `message`, `data`) plus `game_id`, `seq`, `position`, `recorded_at`.
* `id:` only on the **last** message of a stored entry (an entry may cause several events), \
so a client's last event id moves on per whole entry: for one game the entry's `seq`, for the \
Stammtisch its `position`.
* **Resume**: `Last-Event-ID` (EventSource sends it by itself when it reconnects) or the \
query `last_event_id` (for the first connect: EventSource cannot set headers), the header \
winning. Everything stored after that id is sent, then what comes; without either, only new \
events. An id older than what is stored sends everything stored. Nothing is lost when the \
client reconnects to another server process.
* The stream starts with `retry: {RETRY_MS}`; a comment `: ping` comes every 15 s (setting \
`EVENT_HEARTBEAT_SECONDS`). The server may end a stream at any time (a restart, a client that \
does not read, a server without the stream hub after `EVENT_STREAM_SECONDS`): reconnect with \
the last id.
* A private Stammtisch needs its token (`Authorization: Bearer`) or the pub form's login \
(its session cookie, same origin: the TV page); without either the answer is the 404 of a \
Stammtisch that does not exist. An open stream ends (at its next heartbeat) once its \
Stammtisch is made private, or, when it was opened with the key, once the key changes \
(with the login: also at its logout).
* Behind a reverse proxy, disable response buffering for `…/events` (the answer carries \
`X-Accel-Buffering: no` for nginx).
* 503 (`too_many_streams`, `Retry-After`) when the server process holds \
`EVENT_STREAMS_PER_PROCESS` streams (`schocken serve` lowers it to what its open-files limit \
allows); 429 (`too_many_client_streams`, `Retry-After`) when it holds \
`EVENT_STREAMS_PER_CLIENT` streams of the client's address."""

blp = blueprint(
    __name__, STAMMTISCH, "Live events (Server-Sent Events) of a Stammtisch or of one game."
)

_STREAM_RESPONSE: dict[str, Any] = {
    "description": STREAM_DOC,
    "content": {
        "text/event-stream": {
            # before OpenAPI 3.2 (``itemSchema``) the schema of an event stream is that of one
            # message, its fields as EventSource reads them
            "schema": {
                "type": "object",
                "description": "One SSE message: a domain event.",
                "required": ["event", "data"],
                "properties": {
                    "event": {"type": "string", "description": "The event's kind."},
                    "data": {
                        "type": "string",
                        "description": "One line of JSON: a LiveEvent.",
                        "contentMediaType": "application/json",
                        "contentSchema": {"$ref": "#/components/schemas/LiveEvent"},
                    },
                    "id": {
                        "type": "string",
                        "pattern": "^[0-9]+$",
                        "description": "The entry's seq (one game) or position (the "
                        "Stammtisch): only on the last message of an entry.",
                    },
                },
            },
            "example": 'event: turn_recorded\ndata: {"kind":"turn_recorded",…}\nid: 12\n\n',
        }
    },
    "headers": {
        "Cache-Control": {"schema": {"type": "string", "example": "no-store"}},
        "X-Accel-Buffering": {"schema": {"type": "string", "example": "no"}},
    },
}


F = TypeVar("F", bound=Callable[..., Any])


def _last_event_id(query: dict[str, Any], headers: dict[str, Any]) -> int | None:
    """The id to resume after: ``Last-Event-ID`` (read as every number from text is, within
    the ids' range; anything else is ignored), else the query's ``last_event_id``."""
    header = read_number(str(headers.get("last_event_id") or "").strip(), limits.EVENT_ID)
    if header is not None:
        return header
    value = query.get("last_event_id")
    return int(value) if value is not None else None


def _login(slug: str) -> str | None:
    """The pub form's login of this Stammtisch in the session cookie (api/web/session.py)."""
    auth = session.get("auth")
    login = auth.get(slug) if isinstance(auth, dict) else None
    return login if isinstance(login, str) else None


def _access(func: F) -> F:
    """Outermost: who may follow (404 for a private Stammtisch without its token or login)
    before the query is parsed."""

    @functools.wraps(func)
    def view(*args: Any, **kwargs: Any) -> Any:
        slug, token = kwargs["slug"], bearer_token()
        login = _login(slug)
        g.stammtisch = services().followable(slug, token, login)
        g.stream_access = Access.of(g.stammtisch, login if token is None else None)
        return func(*args, **kwargs)

    return view  # type: ignore[return-value]  # same signature, wrapped


def _documented(operation_id: str, summary: str) -> Callable[[F], F]:
    """Outermost decorator of a stream: who may follow, the query and headers, the document."""

    def wrap(func: F) -> F:
        func = blp.alt_response(503, response="SERVICE_UNAVAILABLE")(func)
        func = blp.alt_response(429, response="TOO_MANY_REQUESTS")(func)
        func = blp.alt_response(404, response="NOT_FOUND")(func)
        func = blp.alt_response(401, response="UNAUTHORIZED")(func)
        func = blp.alt_response(422, response="UNPROCESSABLE_ENTITY")(func)
        func = blp.doc(
            operationId=operation_id,
            summary=summary,
            security=OPTIONAL_BEARER,
            responses={"200": _STREAM_RESPONSE},
        )(func)
        func = blp.arguments(EventStreamHeadersSchema, location="headers")(func)
        return _access(blp.arguments(EventStreamQuerySchema, location="query")(func))

    return wrap


def _stream(game_id: int | None, query: dict[str, Any], headers: dict[str, Any]) -> Response:
    cursor = services().open_stream(g.stammtisch, game_id, _last_event_id(query, headers))
    hub = current_app.extensions.get(HUB_KEY)
    client = request.remote_addr or ""
    refused = None if hub is None else hub.reserve(client)
    if refused is not None:
        exc: HTTPException = ServiceUnavailable()
        message = "Zu viele Live-Verbindungen auf diesem Server; bitte gleich noch einmal."
        if refused == CLIENT_FULL:
            exc = TooManyRequests()
            message = "Zu viele Live-Verbindungen von dieser Adresse; bitte erst andere schließen."
        exc.data = {  # type: ignore[attr-defined]
            "message": message,
            "problem": refused,
            "headers": {"Retry-After": str(RETRY_AFTER)},
        }
        raise exc
    state = current_app.extensions["schocken"]
    settings = StreamSettings.of(current_app.config)
    sock = request.environ.get("gunicorn.socket")  # gunicorn's: the connection
    stream = EventStream(state.store, cursor, g.stream_access, settings, hub, client, sock)
    return Response(stream, mimetype="text/event-stream", headers=HEADERS, direct_passthrough=True)


@blp.route("/events")
class StammtischEvents(MethodView):
    @_documented("streamStammtischEvents", "Follow the Stammtisch's events live (SSE)")
    def get(self, query: dict[str, Any], headers: dict[str, Any], slug: str) -> Response:
        """Every game's domain events of the Stammtisch; ids are positions in its log."""
        return _stream(None, query, headers)


@blp.route("/games/<id:game_id>/events")
class GameEvents(MethodView):
    @_documented("streamGameEvents", "Follow a game's events live (SSE)")
    def get(
        self, query: dict[str, Any], headers: dict[str, Any], slug: str, game_id: int
    ) -> Response:
        """The game's domain events; ids are the entries' seq (the game's ETag)."""
        return _stream(game_id, query, headers)


def register(api: Any) -> None:
    """The endpoints, and the message's schema (named by the description, used by none)."""
    api.spec.components.schema("LiveEvent", schema=LiveEventSchema)
    api.register_blueprint(blp)
