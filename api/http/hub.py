"""The stream hub of a server process: it reads each Stammtisch's new rows of the event log
once and hands them to every live event stream of the process that follows it (the wire
format is api/http/sse.py).

Each stream is a plain WSGI answer body (:meth:`StreamHub.follow`) that its own request task
iterates: under ``schocken serve``'s gevent worker a greenlet, elsewhere a thread. It waits on
a queue of its own (``queue.SimpleQueue``: gevent's, cooperative, once the worker has
monkey-patched the standard library) and writes what comes. The hub is one more task of the
process (a ``threading.Thread``: a greenlet under gevent) that waits in one selector on

* the watch of the event log (api/storage/watch.py): PostgreSQL's ``LISTEN`` socket, or on
  SQLite the WAL file's writes (inotify) and a poll every 25 ms while streams are open;
* a socket pair a stream writes to when it joins (or at the stop).

Streams of one Stammtisch share a :class:`Channel`: the position up to which its rows went
out to them. When the watch names the Stammtisch (or at every heartbeat, as the watch alone is
never trusted), the channel reads its rows after that position from the store, once, and each
stream takes those after its own cursor. A new stream first catches up by itself from its own
cursor, page by page as its client takes them, then joins the channel; the hub then reads
what was written since that last page, in its own task, before it feeds the stream from the
channel: a row is never lost between the catch-up and the channel and never sent twice (each
stream's cursor only moves on).

A second task per stream reads its connection (anything a client sends is dropped): a client
that goes away ends its stream at once. At every heartbeat each stream gets ``: ping`` and
its access is checked again
(api/domain/events.py ``Access``): a Stammtisch made private, a changed key or a logged-out
login ends the streams it let in. A client that does not read lets its queue grow; past
``EVENT_BUFFER_BYTES`` its stream ends (it reconnects and resumes by its last id). At most
``EVENT_STREAMS_PER_PROCESS`` streams per process and ``EVENT_STREAMS_PER_CLIENT`` per client
address (:meth:`StreamHub.reserve`; the view answers 503 or 429 beyond). When the worker
stops (``alive`` turns false) or the hub is stopped, every stream ends (its client reconnects
to another process).
"""

from __future__ import annotations

import logging
import queue
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from ..domain.events import PAGE, Access, Cursor, page
from ..storage.records import StoredEvents
from ..storage.watch import PollWatch, watch_of
from .sse import PING, RETRY, StreamSettings, encode

log = logging.getLogger(__name__)

#: a round that failed (the store unreachable) is tried again after this many seconds
RETRY_SECONDS = 1.0
#: a wake-up by the watch that found nothing new yet (a commit not yet visible) looks again
#: after this many seconds, once, before the watch's interval
RECHECK_SECONDS = 0.002
#: the hub looks at least this often whether the worker is still alive
ALIVE_SECONDS = 0.5
#: what :meth:`StreamHub.reserve` answers when the process holds its cap of streams
FULL = "too_many_streams"
#: … when the client's address holds its cap of streams in this process
CLIENT_FULL = "too_many_client_streams"


class Stream:
    """One client's stream as the hub feeds it: its cursor (the hub's once it joined), the
    bytes waiting for its task, and its connection's socket (where the server tells it)."""

    __slots__ = ("access", "closed", "cursor", "queue", "sock", "waiting")

    def __init__(self, cursor: Cursor, access: Access, sock: socket.socket | None) -> None:
        self.cursor, self.access, self.sock = cursor, access, sock
        self.queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.waiting = 0  # bytes in the queue
        self.closed = False

    def end(self, cut: bool = False) -> None:
        """End it: its task stops at the next item, whatever is still queued; ``cut``: its
        connection is shut down as well (a task stuck writing to a client that does not read
        fails at once)."""
        if not self.closed:
            self.closed = True
            self.queue.put(None)
        if cut and self.sock is not None:
            try:
                self.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Channel:
    """The streams of one Stammtisch and the position up to which its rows went to them."""

    __slots__ = ("position", "streams")

    def __init__(self, position: int) -> None:
        self.position = position
        self.streams: set[Stream] = set()


class StreamHub:
    """The live streams of one process (see the module's description); ``alive``: whether the
    worker goes on (False: every stream ends)."""

    def __init__(
        self, store: Any, settings: StreamSettings, alive: Callable[[], bool] | None = None
    ) -> None:
        self.store, self.settings, self.alive = store, settings, alive
        self._lock = threading.Lock()
        self._held = 0  # streams reserved or open
        self._by_client: dict[str, int] = {}
        self._incoming: deque[Stream] = deque()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.channels: dict[int, Channel] = {}
        self._sel: selectors.BaseSelector  # the hub task's (see _run)
        self._watch: PollWatch = PollWatch()
        self._watch_fd: int | None = None
        self._ping = 0.0
        self._soon = False
        self._everywhere = False  # every channel to be looked at (after a failed round)

    # ---- the streams' side ----------------------------------------------------------------
    def reserve(self, client: str = "") -> str | None:
        """Take a place for one more stream of ``client`` (an address); None when taken
        (:meth:`release` gives it back), else why not (:data:`FULL`, :data:`CLIENT_FULL`)."""
        with self._lock:
            if self._stopping or self._held >= self.settings.per_process:
                return FULL
            if self._by_client.get(client, 0) >= self.settings.per_client:
                return CLIENT_FULL
            self._held += 1
            self._by_client[client] = self._by_client.get(client, 0) + 1
            return None

    def release(self, client: str = "") -> None:
        """Give back the place :meth:`reserve` took."""
        with self._lock:
            self._held -= 1
            left = self._by_client.get(client, 1) - 1
            if left > 0:
                self._by_client[client] = left
            else:
                self._by_client.pop(client, None)

    def count(self) -> int:
        """Streams this process holds (reserved or open)."""
        with self._lock:
            return self._held

    def follow(
        self, cursor: Cursor, access: Access, sock: socket.socket | None = None
    ) -> Iterator[bytes]:
        """The body of a stream from ``cursor`` while ``access`` holds: ``retry``, the
        catch-up (read here, a page at a time as the client takes it), then what the hub
        hands over, until the hub ends it or the client goes. ``sock``: the connection's
        socket (gunicorn's ``gunicorn.socket``), shut down when the client does not read."""
        yield RETRY
        by_game = cursor.game_id is not None
        while True:
            rows: list[StoredEvents] = self._repo_call(page, cursor)
            for row in rows:
                cursor = cursor.past(row)
            if rows:
                yield b"".join(encode(row, by_game) for row in rows)
            if len(rows) < PAGE:
                break
        stream = Stream(cursor, access, sock)
        with self._lock:
            if self._stopping:
                return
            self._incoming.append(stream)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="streams", daemon=True)
                self._thread.start()
        self._wake()
        if sock is not None:
            threading.Thread(target=_watch_client, args=(stream,), daemon=True).start()
        try:
            while True:  # the hub pings every heartbeat: silence means it is gone
                item = stream.queue.get(timeout=3 * self.settings.heartbeat + 5)
                if item is None or stream.closed:
                    return
                stream.waiting -= len(item)
                yield item
        except queue.Empty:
            log.warning("stream hub: no heartbeat; the stream ends")
        finally:
            stream.closed = True
            if sock is not None:
                _stop_reading(sock)
            self._wake()  # the hub forgets it

    def stop(self, timeout: float = 5.0) -> None:
        """End every stream and the hub's task (the worker's stop)."""
        with self._lock:
            self._stopping = True
            thread = self._thread
        self._wake()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)
        if thread is None or not thread.is_alive():
            self._wake_r.close()
            self._wake_w.close()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:  # full: a wake-up is pending anyway (or stopped: closed)
            pass

    # ---- the hub's task -------------------------------------------------------------------
    def _run(self) -> None:
        self._sel = selectors.DefaultSelector()
        self._watch_fd = None
        try:
            self._watch = watch_of(self.store)
        except Exception:  # noqa: BLE001 - no watch: every channel is polled
            log.exception("event log watch")
            self._watch = PollWatch()
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        try:
            self._loop()
        finally:
            with self._lock:
                self._stopping = True
            for channel in self.channels.values():
                for stream in channel.streams:
                    stream.end(cut=stream.waiting > 0)
            while self._incoming:
                self._incoming.popleft().end()
            self.channels.clear()
            self._watch.close()
            self._sel.close()

    def _going(self) -> bool:
        if self.alive is not None and not self.alive():
            with self._lock:
                self._stopping = True
        return not self._stopping

    def _loop(self) -> None:
        self._ping = time.monotonic() + self.settings.heartbeat
        self._soon = False  # woken by the watch before the write was visible: look again soon
        while self._going():
            try:
                self._round()
            except Exception:  # noqa: BLE001 - the store failed: the streams wait, then retry
                log.exception("stream hub: a round failed; again in %s s", RETRY_SECONDS)
                self._everywhere = True  # the wake-up it had is used up: look at every channel
                time.sleep(RETRY_SECONDS)

    def _round(self) -> None:
        """Wait for the watch, new streams or the next poll; then send what is new."""
        self._rewatch()
        interval = self._watch.interval
        timeout = min(ALIVE_SECONDS, max(0.0, self._ping - time.monotonic()))
        if interval is not None and self.channels:
            timeout = min(timeout, RECHECK_SECONDS if self._soon else interval)
        dirty: set[int] | None = None if self._everywhere else set()
        self._soon = self._everywhere = False
        for key, _mask in self._sel.select(timeout):
            if key.data is None:
                self._take_incoming()
                self._forget_closed()
            elif key.data is self._watch:
                dirty = _merge(dirty, self._watch.changed())
                self._soon = dirty == set()
        if self.channels and (interval is not None or dirty is None or dirty):
            if interval is not None:
                dirty = _merge(dirty, self._watch.changed())
            self._dispatch(set(self.channels) if dirty is None else dirty)
        if time.monotonic() >= self._ping:  # the heartbeat; and a look at every channel
            self._ping = time.monotonic() + self.settings.heartbeat
            self._forget_closed()
            self._recheck()
            for channel in self.channels.values():
                for stream in channel.streams:
                    self._send(stream, PING)
            self._dispatch(set(self.channels))

    def _rewatch(self) -> None:
        """Wait on the watch's descriptor (a new one after a reconnect); one that needs no
        reading (SQLite's WAL writes) only while streams are open."""
        fd = self._watch.fileno()
        if not self.channels and not self._watch.must_read:
            fd = None
        if fd == self._watch_fd:
            return
        if self._watch_fd is not None:
            try:
                self._sel.unregister(self._watch_fd)
            except (KeyError, ValueError):
                pass
        if fd is not None:
            self._sel.register(fd, selectors.EVENT_READ, self._watch)
        self._watch_fd = fd

    def _take_incoming(self) -> None:
        """Streams that caught up by themselves join their channel; what was written since
        their last page is sent to them first."""
        try:
            while self._wake_r.recv(4096):
                pass
        except OSError:
            pass
        while self._incoming:
            stream = self._incoming.popleft()
            st = stream.cursor.stammtisch_id
            try:
                if st not in self.channels:
                    self.channels[st] = Channel(self._repo_call(_last_position, st))
                self.channels[st].streams.add(stream)
                self._catch_up(stream)
            except Exception:  # noqa: BLE001 - the store failed: the client reconnects
                log.exception("stream hub: a new stream's channel")
                stream.end()

    def _catch_up(self, stream: Stream) -> None:
        by_game = stream.cursor.game_id is not None
        while not stream.closed:
            rows: list[StoredEvents] = self._repo_call(page, stream.cursor)
            for row in rows:
                stream.cursor = stream.cursor.past(row)
            if rows:
                self._send(stream, b"".join(encode(row, by_game) for row in rows))
            if len(rows) < PAGE:
                return

    def _forget_closed(self) -> None:
        for st, channel in list(self.channels.items()):
            channel.streams = {s for s in channel.streams if not s.closed}
            if not channel.streams:
                del self.channels[st]

    def _recheck(self) -> None:
        """End the streams whose access no longer holds (one look-up per access)."""
        for channel in self.channels.values():
            verdicts: dict[Access, bool] = {}
            for stream in channel.streams:
                if stream.access not in verdicts:
                    verdicts[stream.access] = self._repo_call(_holds, stream.access)
                if not verdicts[stream.access]:
                    stream.end()

    def _dispatch(self, stammtische: set[int]) -> None:
        """Send each named Stammtisch's new rows to its streams."""
        for st in stammtische:
            channel = self.channels.get(st)
            while channel is not None and channel.streams:
                cursor = Cursor(st, None, channel.position)
                rows: list[StoredEvents] = self._repo_call(page, cursor)
                if not rows:
                    break
                channel.position = rows[-1].position
                self._fan_out(channel, rows)
                if len(rows) < PAGE:
                    break

    def _fan_out(self, channel: Channel, rows: list[StoredEvents]) -> None:
        encoded: dict[tuple[int, bool], bytes] = {}
        for stream in channel.streams:
            out = []
            for row in rows:
                if stream.cursor.wants(row):
                    by_game = stream.cursor.game_id is not None
                    key = (row.position, by_game)
                    if key not in encoded:
                        encoded[key] = encode(row, by_game)
                    out.append(encoded[key])
                    stream.cursor = stream.cursor.past(row)
            if out:
                self._send(stream, b"".join(out))

    def _repo_call(self, func: Any, *args: Any) -> Any:
        repo = self.store.repository()
        try:
            return func(repo, *args)
        finally:
            repo.close()  # its connection goes back to the pool

    def _send(self, stream: Stream, data: bytes) -> None:
        """Queue ``data`` for the stream's task; a stream whose client lets more than
        ``EVENT_BUFFER_BYTES`` wait ends."""
        if stream.closed:
            return
        if stream.waiting + len(data) > self.settings.buffer and stream.waiting:
            log.info("stream dropped: the client does not read")
            stream.end(cut=True)
            return
        stream.waiting += len(data)
        stream.queue.put(data)


def _watch_client(stream: Stream) -> None:
    """A task beside the stream's own (a greenlet under gevent) reading its connection: a
    client that closes it (or resets it) ends the stream at once, not at the next heartbeat;
    anything a client sends is read and dropped. It ends when the stream does
    (:func:`_stop_reading`)."""
    assert stream.sock is not None
    try:
        while stream.sock.recv(4096):
            pass
    except OSError:
        pass
    stream.end()


def _stop_reading(sock: socket.socket) -> None:
    """No more reading on a stream's connection (its watch ends; so does the connection,
    after the stream's answer is out: its next request would have no reader of its own)."""
    try:
        sock.shutdown(socket.SHUT_RD)
    except OSError:
        pass


def _holds(repo: Any, access: Access) -> bool:
    return access.holds(repo)


def _last_position(repo: Any, stammtisch_id: int) -> int:
    return int(repo.last_event_position(stammtisch_id))


def _merge(into: set[int] | None, more: set[int] | None) -> set[int] | None:
    """Union of two "changed" answers (None: every Stammtisch)."""
    if into is None or more is None:
        return None
    return into | more
