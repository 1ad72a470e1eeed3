"""Server-Sent Events: the wire format of the live streams, and the answer's body.

One SSE message per domain event::

    event: turn_recorded
    data: {"kind":"turn_recorded","message":"…","data":{…},"game_id":7,"seq":12,"position":40,"recorded_at":"…"}
    id: 12

The ``id:`` line only on the last message of a stored row (a log entry's events), so a
client's last event id moves on per whole entry: per game the entry's ``seq``, per Stammtisch
its ``position``. The stream starts with ``retry: 3000``; a comment ``: ping`` every
``EVENT_HEARTBEAT_SECONDS`` keeps proxies and clients from calling it dead.

:class:`EventStream` is the answer's body. Under ``schocken serve`` (api/cli/serving.py: the
gevent worker, a greenlet per connection) the process has a stream hub (api/http/hub.py, in
the app's extensions under :data:`HUB_KEY`) that reads each Stammtisch's new rows once and
feeds every stream of the process: the stream's greenlet waits on its queue. Without a hub
(Flask's test client, a development server) the body polls the store every
``EVENT_POLL_SECONDS`` and ends after ``EVENT_STREAM_SECONDS``; the client reconnects with its
last id (EventSource does so by itself) and misses nothing.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..domain.events import Access, Cursor, page
from ..storage.records import StoredEvents

#: what a client waits before it reconnects, in ms (the stream's first line)
RETRY_MS = 3000
RETRY = f"retry: {RETRY_MS}\n\n".encode()
#: the heartbeat, an SSE comment
PING = b": ping\n\n"
#: the app's extension holding the process's stream hub, where it has one (api/cli/serving.py)
HUB_KEY = "schocken.stream_hub"
#: the headers of every stream answer
HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


@dataclass(frozen=True)
class StreamSettings:
    """The knobs of the live streams (``EVENT_*`` settings of api/config.py)."""

    heartbeat: float = 15.0
    poll: float = 0.25
    lifetime: float = 60.0
    per_process: int = 1000
    per_client: int = 100
    buffer: int = 256 * 1024

    @classmethod
    def of(cls, config: Any) -> StreamSettings:
        return cls(
            heartbeat=float(config.get("EVENT_HEARTBEAT_SECONDS", cls.heartbeat)),
            poll=float(config.get("EVENT_POLL_SECONDS", cls.poll)),
            lifetime=float(config.get("EVENT_STREAM_SECONDS", cls.lifetime)),
            per_process=int(config.get("EVENT_STREAMS_PER_PROCESS", cls.per_process)),
            per_client=int(config.get("EVENT_STREAMS_PER_CLIENT", cls.per_client)),
            buffer=int(config.get("EVENT_BUFFER_BYTES", cls.buffer)),
        )


def _moment(value: datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.isoformat()


def encode(row: StoredEvents, by_game: bool) -> bytes:
    """The SSE messages of one stored row; ``by_game``: ids are seqs, else positions."""
    ident = row.seq if by_game else row.position
    moment = _moment(row.recorded_at)
    out = []
    for index, event in enumerate(row.events):
        doc = {
            "kind": event["kind"],
            "message": event["message"],
            "data": event["data"],
            "game_id": row.game_id,
            "seq": row.seq,
            "position": row.position,
            "recorded_at": moment,
        }
        kind = "".join(ch for ch in str(event["kind"]) if ch not in "\r\n")
        data = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        out.append(f"event: {kind}\ndata: {data}\n")
        out.append(f"id: {ident}\n\n" if index == len(row.events) - 1 else "\n")
    return "".join(out).encode()


class EventStream:
    """The body of a stream answer: the cursor to start from and the store to read; as a
    WSGI iterable, fed by the process's stream hub where there is one (``hub``, whose place
    taken for ``client`` the body gives back when it is closed, even unread: a HEAD request;
    ``sock``: the connection's socket, see :meth:`~api.http.hub.StreamHub.follow`), else a
    bounded poll of the store (see the module's description)."""

    def __init__(
        self,
        store: Any,
        cursor: Cursor,
        access: Access,
        settings: StreamSettings,
        hub: Any = None,
        client: str = "",
        sock: Any = None,
    ) -> None:
        self.store, self.cursor, self.access, self.settings = store, cursor, access, settings
        self.hub, self.client, self.sock = hub, client, sock
        self.closed = False
        self._body: Iterator[bytes] | None = None

    def __iter__(self) -> Iterator[bytes]:
        if self.hub is None:
            return self._poll()
        self._body = self.hub.follow(self.cursor, self.access, self.sock)
        return self._body

    def _poll(self) -> Iterator[bytes]:
        yield RETRY
        now = time.monotonic()
        end, ping = now + self.settings.lifetime, now + self.settings.heartbeat
        while not self.closed:
            chunk = self._next()
            if chunk:
                yield chunk
                continue
            now = time.monotonic()
            if now >= end:
                return
            if now >= ping:
                if not self._allowed():
                    return
                ping = now + self.settings.heartbeat
                yield PING
            time.sleep(max(0.0, min(self.settings.poll, end - now, ping - now)))

    def _next(self) -> bytes:
        """The stream's next stored rows, encoded ("" when there are none)."""
        repo = self.store.repository()
        try:
            rows = page(repo, self.cursor)
        finally:
            repo.close()
        by_game = self.cursor.game_id is not None
        for row in rows:
            self.cursor = self.cursor.past(row)
        return b"".join(encode(row, by_game) for row in rows)

    def _allowed(self) -> bool:
        """Whether the stream may go on (the Stammtisch not made private meanwhile, …)."""
        repo = self.store.repository()
        try:
            return self.access.holds(repo)
        finally:
            repo.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self._body is not None:
            self._body.close()  # type: ignore[attr-defined]  # a generator
        if self.hub is not None:
            self.hub.release(self.client)
