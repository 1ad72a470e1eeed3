"""Live events: who may follow a Stammtisch's (or one game's) stream, where it starts, and its
pages of the stored event log (table ``game_events``, one row per stored log entry that
produced domain events, written in the write's own transaction).

A stream is a :class:`Cursor`: the Stammtisch, the game (None: every game of the Stammtisch)
and the last row the client has, by ``position`` (per Stammtisch, in commit order) or, for one
game, by ``seq`` (the log entry's sequence number). Resuming is reading on from the cursor: a
client that names the last id it saw (SSE ``Last-Event-ID``) misses nothing and gets nothing
twice, whichever server process it reconnects to.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from datetime import UTC, datetime

from ..storage import Repository, Stammtisch
from ..storage.records import StoredEvents
from .stammtische import StammtischUseCases

#: rows read from the store at a time (a resume from long ago is read page by page)
PAGE = 200


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a stream stands: after row ``after`` (a position, or the game's seq)."""

    stammtisch_id: int
    game_id: int | None
    after: int

    def key(self, row: StoredEvents) -> int:
        """The row's id in this stream: its seq in a game's stream, else its position."""
        return row.seq if self.game_id is not None else row.position

    def wants(self, row: StoredEvents) -> bool:
        """Whether the row belongs to this stream and comes after the cursor."""
        if self.game_id is not None and row.game_id != self.game_id:
            return False
        return row.stammtisch_id == self.stammtisch_id and self.key(row) > self.after

    def past(self, row: StoredEvents) -> Cursor:
        """The cursor once ``row`` is sent."""
        return Cursor(self.stammtisch_id, self.game_id, self.key(row))


@dataclass(frozen=True, slots=True)
class Access:
    """What let a stream in, for the check at every heartbeat: a stream opened on a public
    Stammtisch ends once it is private; one opened with its key (token or login) once the key
    changed; any once the Stammtisch is gone."""

    slug: str
    key_hash: str | None  # the key's hash of a private Stammtisch when the stream opened
    login_hash: str | None = None  # the pub form's login it came in with (logout ends it)

    @classmethod
    def of(cls, st: Stammtisch, login_id: str | None = None) -> Access:
        """The access of a stream on ``st`` (``login_id``: let in by that login)."""
        login = login_hash(login_id) if login_id and st.private else None
        return cls(st.slug, st.token_hash if st.private else None, login)

    def holds(self, repo: Repository) -> bool:
        st = repo.get_stammtisch(self.slug)
        if st is None or (st.private and st.token_hash != self.key_hash):
            return False
        return not st.private or self.login_hash is None or login_valid(repo, st, self.login_hash)


def page(repo: Repository, cursor: Cursor, limit: int = PAGE) -> list[StoredEvents]:
    """The stream's next stored rows after the cursor, oldest first (at most ``limit``)."""
    if cursor.game_id is None:
        return repo.stammtisch_events(cursor.stammtisch_id, cursor.after, limit)
    return repo.game_events(cursor.game_id, cursor.after, limit)


def login_hash(login_id: str) -> str:
    """The stored hash of a pub-form login's opaque id (api/web/session.py)."""
    return hashlib.sha256(login_id.encode("utf-8", "surrogatepass")).hexdigest()


def login_valid(repo: Repository, st: Stammtisch, id_hash: str) -> bool:
    """Whether the login of that hash is a live login of ``st`` (not logged out, not
    expired, made with the Stammtisch's current key)."""
    login = repo.get_web_session(id_hash)
    return (
        login is not None
        and login.stammtisch_id == st.id
        and hmac.compare_digest(login.token_hash, st.token_hash)
        and login.expires_at > datetime.now(UTC)
    )


class EventUseCases(StammtischUseCases):
    """Opening a live stream of a Stammtisch or one of its games."""

    def followable(self, slug: str, token: str | None, login_id: str | None) -> Stammtisch:
        """The Stammtisch whose events may be followed: public, or private with its token, or
        private with a live login of the pub form (the TV page on the same origin); else the
        404 of a slug nobody took (a private Stammtisch does not show that it exists)."""
        st = self.stammtisch(slug)
        if st.private and not (token is None and login_id and self.logged_in(st, login_id)):
            self._hidden(st, token)
        return st

    def logged_in(self, st: Stammtisch, login_id: str) -> bool:
        """Whether ``login_id`` is a live login of ``st``."""
        return login_valid(self.repo, st, login_hash(login_id))

    def open_stream(self, st: Stammtisch, game_id: int | None, last_id: int | None) -> Cursor:
        """Where a new stream starts: after ``last_id`` (the last id the client has), else
        after what is stored now (only new events). An id beyond the stored ones (a restored
        backup) counts as now, so the client misses nothing that comes."""
        if game_id is None:
            now = self.repo.last_event_position(st.id)
        else:
            self._game(st, game_id)  # 404 when it is not this Stammtisch's
            now = self.repo.game_version(game_id)
        after = now if last_id is None else min(max(last_id, 0), now)
        return Cursor(st.id, game_id, after)
