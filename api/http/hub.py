"""The stream hub of a server process: one thread that serves every live event stream the
process holds, so that no request thread waits on one (api/cli/serving.py hands it the
connections; the wire format is api/http/sse.py).

The thread waits in one selector on

* every stream's socket, for reading: a client that closes its connection (or resets it) is
  freed at once; anything a client sends is read and ignored;
  and for writing while a stream has bytes the kernel would not take yet;
* the watch of the event log (api/storage/watch.py): PostgreSQL's ``LISTEN`` socket, or on
  SQLite the WAL file's writes (inotify) and a poll every 25 ms while streams are open;
* a socket pair the request thread writes to when it hands over a stream (or at the stop).

Streams of one Stammtisch share a :class:`Channel`: the position up to which its rows went
out to them. When the watch names the Stammtisch (or at every heartbeat, as the watch alone is
never trusted), the channel reads its rows after that position from the store, once, and each
stream takes those after its own cursor. A new stream first catches up by itself from its own
cursor, page by page as its socket takes them, then joins the channel: a row is never lost
between its catch-up and the channel (both read in this thread, the catch-up after the
channel's position was taken) and never sent twice (each stream's cursor only moves on).

At every heartbeat each stream's access is checked again (api/domain/events.py ``Access``):
a Stammtisch made private, a changed key or a logged-out login ends the streams it let in.

Writes never block: what the kernel does not take waits in the stream's buffer; a client whose
buffer passes ``EVENT_BUFFER_BYTES`` is dropped (it reconnects and resumes by its last id). At
most ``EVENT_STREAMS_PER_PROCESS`` streams per process (the view answers 503 beyond, see
:meth:`StreamHub.reserve`); at the stop every stream is closed (its client reconnects to
another process).
"""

from __future__ import annotations

import logging
import selectors
import socket
import threading
import time
from collections import deque
from typing import Any

from ..domain.events import PAGE, Access, Cursor, page
from ..storage.records import StoredEvents
from ..storage.watch import PollWatch, watch_of
from .sse import PING, StreamSettings, encode

log = logging.getLogger(__name__)

#: bytes read (and dropped) from a client at a time
READ_SIZE = 4096
#: a round that failed (the store unreachable) is tried again after this many seconds
RETRY_SECONDS = 1.0
#: a wake-up by the watch that found nothing new yet (a commit not yet visible) looks again
#: after this many seconds, once, before the watch's interval
RECHECK_SECONDS = 0.002


class Stream:
    """One client's stream: its socket, cursor and bytes not yet written."""

    __slots__ = ("access", "buf", "closed", "cursor", "live", "sock")

    def __init__(self, sock: socket.socket, cursor: Cursor, access: Access, head: bytes) -> None:
        self.sock, self.cursor, self.access = sock, cursor, access
        self.buf = bytearray(head)
        self.live = False  # caught up: fed by its channel
        self.closed = False


class Channel:
    """The streams of one Stammtisch and the position up to which its rows went to them."""

    __slots__ = ("position", "streams")

    def __init__(self, position: int) -> None:
        self.position = position
        self.streams: set[Stream] = set()


class StreamHub:
    """The live streams of one process (see the module's description)."""

    def __init__(self, store: Any, settings: StreamSettings) -> None:
        self.store, self.settings = store, settings
        self._lock = threading.Lock()
        self._held = 0  # streams reserved or open
        self._incoming: deque[Stream] = deque()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._thread: threading.Thread | None = None
        self._stopping = False
        self.streams: dict[int, Stream] = {}  # by socket fd
        self._behind: set[Stream] = set()  # streams still catching up
        self.channels: dict[int, Channel] = {}
        self._sel: selectors.BaseSelector  # the thread's (see _run)
        self._watch: PollWatch = PollWatch()
        self._watch_fd: int | None = None
        self._ping = 0.0
        self._soon = False
        self._everywhere = False  # every channel to be looked at (after a failed round)

    # ---- the request thread's side --------------------------------------------------------
    def reserve(self) -> bool:
        """Room for one more stream (taken now: :meth:`attach` or :meth:`release` follows)?"""
        with self._lock:
            if self._stopping or self._held >= self.settings.per_process:
                return False
            self._held += 1
            return True

    def release(self) -> None:
        """A reserved stream that did not come (its answer was an error after all)."""
        with self._lock:
            self._held -= 1

    def attach(self, sock: socket.socket, cursor: Cursor, access: Access, head: bytes) -> None:
        """Serve this connection from now on: ``head`` (answer head, ``retry``) first, then
        the stream from ``cursor`` while ``access`` holds. The caller no longer touches the
        socket."""
        sock.setblocking(False)
        with self._lock:
            self._incoming.append(Stream(sock, cursor, access, head))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="streams", daemon=True)
                self._thread.start()
        self._wake()

    def count(self) -> int:
        """Streams this process holds (reserved or open)."""
        with self._lock:
            return self._held

    def stop(self, timeout: float = 5.0) -> None:
        """Close every stream and end the thread (the graceful stop of the worker)."""
        with self._lock:
            self._stopping = True
            thread = self._thread
        self._wake()
        if thread is not None:
            thread.join(timeout)
        if thread is None or not thread.is_alive():
            self._wake_r.close()
            self._wake_w.close()

    def _wake(self) -> None:
        try:
            self._wake_w.send(b"x")
        except OSError:  # full: a wake-up is pending anyway (or stopped: closed)
            pass

    # ---- the hub thread -------------------------------------------------------------------
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
            for stream in list(self.streams.values()):
                self._drop(stream)
            while self._stopping and self._incoming:
                self._close(self._incoming.popleft())
            self._watch.close()
            self._sel.close()
            with self._lock:
                self._thread = None  # a later stream starts it again

    def _loop(self) -> None:
        self._ping = time.monotonic() + self.settings.heartbeat
        self._soon = False  # woken by the watch before the write was visible: look again soon
        while not self._stopping:
            try:
                self._round()
            except Exception:  # noqa: BLE001 - the store failed: the streams wait, then retry
                log.exception("stream hub: a round failed; again in %s s", RETRY_SECONDS)
                self._everywhere = True  # the wake-up it had is used up: look at every channel
                time.sleep(RETRY_SECONDS)

    def _round(self) -> None:
        """Wait for sockets, the watch, new streams or the next poll; then send what is new."""
        self._rewatch()
        interval = self._watch.interval
        timeout = max(0.0, self._ping - time.monotonic())
        if interval is not None and self.channels:
            timeout = min(timeout, RECHECK_SECONDS if self._soon else interval)
        dirty: set[int] | None = None if self._everywhere else set()
        self._soon = self._everywhere = False
        for key, mask in self._sel.select(timeout):
            if key.data is None:
                self._take_incoming()
            elif key.data is self._watch:
                dirty = _merge(dirty, self._watch.changed())
                self._soon = dirty == set()
            else:
                self._on_socket(key.data, mask)
        if self.channels and (interval is not None or dirty is None or dirty):
            if interval is not None:
                dirty = _merge(dirty, self._watch.changed())
            self._dispatch(set(self.channels) if dirty is None else dirty)
        if time.monotonic() >= self._ping:  # the heartbeat; and a look at every channel
            self._ping = time.monotonic() + self.settings.heartbeat
            self._recheck()
            for stream in list(self.streams.values()):
                self._send(stream, PING)
            self._dispatch(set(self.channels))
        self._catch_up()

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
        try:
            while self._wake_r.recv(READ_SIZE):
                pass
        except OSError:
            pass
        while True:
            with self._lock:
                if not self._incoming:
                    return
                stream = self._incoming.popleft()
            st = stream.cursor.stammtisch_id
            try:
                if st not in self.channels:
                    self.channels[st] = Channel(self._repo_call(_last_position, st))
            except Exception:  # noqa: BLE001 - the store failed: the client reconnects
                log.exception("stream hub: a new stream's channel")
                self._close(stream)
                continue
            self.streams[stream.sock.fileno()] = stream
            self._behind.add(stream)
            self._sel.register(stream.sock, selectors.EVENT_READ, stream)
            self.channels[st].streams.add(stream)
            self._flush(stream)

    def _on_socket(self, stream: Stream, mask: int) -> None:
        if mask & selectors.EVENT_READ:
            try:
                data = stream.sock.recv(READ_SIZE)
            except (BlockingIOError, InterruptedError):
                data = b"-"
            except OSError:
                data = b""
            if not data:  # the client is gone
                self._drop(stream)
                return
        if mask & selectors.EVENT_WRITE:
            self._flush(stream)

    def _recheck(self) -> None:
        """End the streams whose access no longer holds (one look-up per Stammtisch)."""
        for channel in list(self.channels.values()):
            verdicts: dict[Access, bool] = {}
            for stream in list(channel.streams):
                if stream.access not in verdicts:
                    verdicts[stream.access] = self._repo_call(_holds, stream.access)
                if not verdicts[stream.access]:
                    self._drop(stream)

    def _dispatch(self, stammtische: set[int]) -> None:
        """Send each named Stammtisch's new rows to its caught-up streams."""
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
        for stream in list(channel.streams):
            if not stream.live:
                continue
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

    def _catch_up(self) -> None:
        """One page for each stream still catching up whose socket took what it had."""
        for stream in list(self._behind):
            if stream.buf or stream.closed:
                continue
            rows: list[StoredEvents] = self._repo_call(page, stream.cursor)
            by_game = stream.cursor.game_id is not None
            for row in rows:
                stream.cursor = stream.cursor.past(row)
            if len(rows) < PAGE:
                stream.live = True
                self._behind.discard(stream)
            if rows:
                self._send(stream, b"".join(encode(row, by_game) for row in rows), False)

    def _repo_call(self, func: Any, *args: Any) -> Any:
        repo = self.store.repository()
        try:
            return func(repo, *args)
        finally:
            repo.close()  # a pooled connection goes back to the pool

    def _send(self, stream: Stream, data: bytes, bounded: bool = True) -> None:
        """Queue and write ``data``; a stream whose queue passes the limit is dropped
        (``bounded`` False: a catch-up page, sent only onto an empty queue: one page at most)."""
        if stream.closed:
            return
        stream.buf += data
        self._flush(stream)
        if bounded and len(stream.buf) > self.settings.buffer:
            log.info("stream dropped: the client does not read")
            self._drop(stream)

    def _flush(self, stream: Stream) -> None:
        """Write what the kernel takes; wait for the socket to be writable for the rest."""
        if stream.closed:
            return
        try:
            sent = stream.sock.send(stream.buf) if stream.buf else 0
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            self._drop(stream)
            return
        del stream.buf[:sent]
        events = selectors.EVENT_READ | (selectors.EVENT_WRITE if stream.buf else 0)
        if self._sel.get_key(stream.sock).events != events:
            self._sel.modify(stream.sock, events, stream)

    def _drop(self, stream: Stream) -> None:
        if stream.closed:
            return
        stream.closed = True
        fd = stream.sock.fileno()
        self.streams.pop(fd, None)
        self._behind.discard(stream)
        try:
            self._sel.unregister(stream.sock)
        except (KeyError, ValueError):
            pass
        channel = self.channels.get(stream.cursor.stammtisch_id)
        if channel is not None:
            channel.streams.discard(stream)
            if not channel.streams:
                del self.channels[stream.cursor.stammtisch_id]
        self._close(stream)

    def _close(self, stream: Stream) -> None:
        stream.closed = True
        try:
            stream.sock.close()
        except OSError:
            pass
        with self._lock:
            self._held -= 1


def _holds(repo: Any, access: Access) -> bool:
    return access.holds(repo)


def _last_position(repo: Any, stammtisch_id: int) -> int:
    return int(repo.last_event_position(stammtisch_id))


def _merge(into: set[int] | None, more: set[int] | None) -> set[int] | None:
    """Union of two "changed" answers (None: every Stammtisch)."""
    if into is None or more is None:
        return None
    return into | more
