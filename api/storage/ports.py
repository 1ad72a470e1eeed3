"""The role ports of storage: each names what one part of the program needs of the database,
none over 15 methods (tests/test_storage_ports.py). :class:`~.repository.Repository` is their
union, the one interface the adapters implement and the services are given; a use case may ask
for a role only (a type that says what it touches).

* :class:`Transactions`: the unit of work (every write of a use case commits together);
* :class:`Stammtische`: Stammtische, their keys and players;
* :class:`GameLog`: games, their logs and the facts derived from them;
* :class:`Events`: the outbox of domain events;
* :class:`Statistics`: the statistics read model;
* :class:`SessionsAndLimits`: rate limits, failed logins, logins of the form, idempotent
  responses;
* :class:`~.webhook_port.WebhooksPort`: webhooks and their deliveries.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from typing import Any

from .records import (
    FactsWrite,
    GameQuery,
    GameRecord,
    LogEntry,
    NewGame,
    Player,
    Stammtisch,
    StatsWrite,
    StoredEvents,
    StoredResponse,
    WebSession,
)


def csv_value(value: object) -> str:
    """One value of a :meth:`Repository.stats_csv` line."""
    if value is None:
        return "\\N"
    if isinstance(value, bool):  # as SQLite stores it: a number column may hold a flag
        text = "1" if value else "0"
    elif isinstance(value, datetime):
        text = value.isoformat(sep=" ")
    elif isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    else:
        text = str(value)
    return '"' + text.replace('"', '""') + '"'


class Transactions(ABC):
    """One unit of work: what commits together, and whether the database can write now."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[None]:
        """Everything inside commits together or rolls back together (nesting is flat)."""

    def reading(self) -> AbstractContextManager[None]:
        """Several reads as one consistent moment (no write lock); flat inside a transaction."""
        return nullcontext()

    def on_commit(self, action: Callable[[], None]) -> None:
        """Run ``action`` once the outermost transaction has committed (now, outside one);
        never if it rolls back. Caches of other processes' data are filled this way, so they
        never hold what was not committed. Adapters with transactions override it."""
        action()

    def probe(self) -> None:
        """Raises :class:`StorageUnavailable` when the database cannot write now (a cheap
        check for ``/health``; adapters that can tell override it)."""
        return None


class Stammtische(ABC):
    """Stammtische, their keys and their players."""

    @abstractmethod
    def add_stammtisch(self, stammtisch: Stammtisch) -> Stammtisch:
        """Store ``stammtisch`` as a new one (the store gives its id); raises
        :class:`StorageConflict` when its slug is taken."""

    @abstractmethod
    def get_stammtisch(self, slug: str) -> Stammtisch | None: ...

    @abstractmethod
    def update_stammtisch(self, stammtisch: Stammtisch) -> None:
        """Store the name, house rules, visibility and where it shows the odds
        (:attr:`Stammtisch.odds_shown`) of ``stammtisch``, found by its id; its slug, key and
        creation stay as stored."""

    def replace_key(self, stammtisch_id: int, token_hash: str) -> None:
        """Give the Stammtisch a new key (its hash): the old key stops working, and every
        login made with it ends (its own transaction, or the caller's)."""
        raise NotImplementedError

    @abstractmethod
    def add_player(self, stammtisch_id: int, name: str, now: datetime) -> Player: ...

    @abstractmethod
    def list_players(self, stammtisch_id: int) -> list[Player]: ...

    @abstractmethod
    def update_player(
        self, player_id: int, name: str, retired: bool, retired_at: datetime | None
    ) -> None: ...


class GameLog(ABC):
    """Games, their logs (the record of what happened) and the facts derived from them."""

    @abstractmethod
    def add_game(self, game: NewGame) -> int: ...

    def get_game(self, stammtisch_id: int, game_id: int) -> GameRecord | None:
        """The game, if it belongs to that Stammtisch (one Stammtisch never sees another's)."""
        game = self.get_game_by_id(game_id)
        return game if game is not None and game.stammtisch_id == stammtisch_id else None

    @abstractmethod
    def get_game_by_id(self, game_id: int) -> GameRecord | None: ...

    @abstractmethod
    def list_games(self, query: GameQuery) -> tuple[list[GameRecord], int]:
        """One page of games, newest first, and the total matching the filters."""

    @abstractmethod
    def game_ids(self) -> list[int]:
        """Every game of every Stammtisch (for rebuilding facts)."""

    def game_version(self, game_id: int) -> int:
        """The game's version: the sequence number of its last log entry (0: none yet).
        Cheap (an index look-up): cached engine states are checked against it on every use."""
        log = self.load_log(game_id)
        return log[-1].seq if log else 0

    def game_state(self, game_id: int) -> tuple[int, bool]:
        """The game's version (:meth:`game_version`) and whether it was called off, in one
        look-up: what a write checks of a cached engine state."""
        game = self.get_game_by_id(game_id)
        return self.game_version(game_id), game is not None and game.status == "abandoned"

    def abandon_game(self, game_id: int, at: datetime) -> bool:
        """Note that the game was called off at ``at`` (migration 0014; the game and its log
        stay): False when it was called off already."""
        raise NotImplementedError

    @abstractmethod
    def load_log(self, game_id: int) -> list[LogEntry]: ...

    @abstractmethod
    def append_log(self, entry: LogEntry) -> None:
        """Raises :class:`StorageConflict` when the sequence number is taken."""

    def append_log_many(self, entries: list[LogEntry]) -> None:
        """Append several entries (an import); adapters may do it in one statement."""
        for entry in entries:
            self.append_log(entry)

    @abstractmethod
    def append_entry(self, entry: LogEntry, facts: FactsWrite) -> None:
        """Append one log entry and write the facts it changes, atomically (the hot path of
        recording). Adapters may batch concurrent calls into one transaction."""

    @abstractmethod
    def write_facts(self, game_id: int, write: FactsWrite) -> None: ...

    @abstractmethod
    def read_facts(self, game_id: int) -> dict[str, list[dict[str, Any]]]:
        """Every fact row of a game, table by table, in their natural order."""


class Events(ABC):
    """The outbox of domain events (migration 0012): the event streams and webhooks read it."""

    @abstractmethod
    def append_events(
        self, stammtisch_id: int, game_id: int, seq: int, events: list[dict[str, Any]], at: datetime
    ) -> int:
        """Store the events of the log entry ``seq`` of a game (0: its start or import) inside
        the caller's transaction; the Stammtisch's position of the row (its next, from 1, in
        commit order)."""

    @abstractmethod
    def stammtisch_events(self, stammtisch_id: int, after: int, limit: int) -> list[StoredEvents]:
        """The Stammtisch's rows after position ``after``, oldest first, at most ``limit``."""

    @abstractmethod
    def game_events(self, game_id: int, after: int, limit: int) -> list[StoredEvents]:
        """The game's rows after its log entry ``after``, oldest first, at most ``limit``."""

    @abstractmethod
    def last_event_position(self, stammtisch_id: int) -> int:
        """The Stammtisch's last position (0: none yet)."""


class Statistics:
    """The statistics read model (dashboard/readmodel.py). Rows of stats_periods: per
    Stammtisch and year (None: all time) the finished games and every statistic as JSON."""

    def stats_rows(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> dict[str, list[tuple[Any, ...]]]:
        """The rows of ``tables`` (those columns, in that order) that belong to the
        Stammtische ``stammtische`` (None: all), one consistent moment: the input of a
        refresh."""
        raise NotImplementedError

    def stats_csv(
        self, tables: Mapping[str, Sequence[str]], stammtische: Collection[int] | None
    ) -> dict[str, list[str]]:
        """The rows of :meth:`stats_rows` as CSV lines for DuckDB's ``read_csv``: every value
        quoted (``"`` doubled inside), NULL as an unquoted ``\\N``; an item may hold several
        lines joined by newlines. Adapters may render them in the database (faster than
        Python)."""
        return {
            table: [",".join(map(csv_value, row)) for row in rows]
            for table, rows in self.stats_rows(tables, stammtische).items()
        }

    def stammtisch_ids(self) -> list[int]:
        """Every Stammtisch's id."""
        raise NotImplementedError

    def luck_pending(self, stammtische: Collection[int]) -> list[tuple[int, int]]:
        """(game id, version) of the finished games of ``stammtische`` whose luck figures are
        missing or were computed for another version (last log entry) of the game."""
        raise NotImplementedError

    def write_luck(self, games: Mapping[int, list[dict[str, Any]]]) -> None:
        """Replace the luck figures of each game by its rows (columns
        :data:`~.records.LUCK_COLUMNS`), in one transaction."""
        raise NotImplementedError

    def mark_stats_stale(self, stammtisch_ids: Iterable[int]) -> None:
        """Their statistics must be computed again (inside the caller's transaction, with the
        write that changed them)."""
        raise NotImplementedError

    def stale_stats(self) -> dict[int, int]:
        """The Stammtische marked stale and the version of their mark."""
        raise NotImplementedError

    def write_stats(self, write: StatsWrite) -> None:
        """Store a refresh's result (:class:`~.records.StatsWrite`), in one transaction."""
        raise NotImplementedError

    def read_stats(self, stammtisch_id: int, year: int | None) -> str | None:
        """The JSON of one period, None when the read model has none."""
        raise NotImplementedError

    def stats_years(self, stammtisch_id: int | None) -> list[tuple[int, int, int]]:
        """(stammtisch_id, year, games) of the years with finished games, newest first."""
        raise NotImplementedError

    def stats_computed(self) -> set[int]:
        """The Stammtische the read model has (their all-time row)."""
        raise NotImplementedError

    def stats_lock(self, wait: bool | float = True) -> AbstractContextManager[bool]:
        """The one-refresher lock (across threads and processes); yields whether it was
        taken (``wait=False`` gives up at once when another refresher holds it, a number
        after that many seconds)."""
        raise NotImplementedError


class SessionsAndLimits(ABC):
    """What the HTTP layer keeps across requests and server processes: rate limits
    (api/http/context.py), failed logins, logins of the pub form (api/web/session.py) and
    the responses of idempotent writes (api/http/idempotency.py)."""

    def take_token(self, who: str, now: float, per_second: float, burst: int) -> float:
        """Take one token of ``who``'s bucket (refilled at ``per_second`` up to ``burst``;
        ``now`` in seconds since the epoch): 0.0 when granted, else the seconds until one is
        there. Raises NotImplementedError where the adapter keeps no counters."""
        raise NotImplementedError

    def purge_tokens(self, before: float) -> None:
        """Forget buckets untouched since ``before`` (they are full again)."""
        return None

    def settle_tokens(self) -> None:
        """Write a token :meth:`take_token` granted but left for the request's write
        transaction to take (adapters that defer it), now."""
        return None

    def failed_attempts(self, who: str, now: float, outcome: bool | None) -> tuple[int, float]:
        """Failed attempts of ``who`` in a row (a login to a Stammtisch) and when the last
        was (seconds since the epoch), after noting ``outcome``: False a failure at ``now``,
        True a success (which clears them), None nothing. Raises NotImplementedError where
        the adapter keeps no counters."""
        raise NotImplementedError

    def add_web_session(self, login: WebSession) -> None:
        """Store a new login (its own transaction, or the caller's)."""
        raise NotImplementedError

    def get_web_session(self, id_hash: str) -> WebSession | None:
        """The login whose opaque id has this hash; None when there is none (logged out)."""
        raise NotImplementedError

    def delete_web_session(self, id_hash: str) -> None:
        """End the login (a logout): its cookie no longer works, wherever it was copied."""
        raise NotImplementedError

    def purge_web_sessions(self, before: datetime) -> None:
        """Forget logins that expired before ``before``."""
        raise NotImplementedError

    @abstractmethod
    def get_response(self, stammtisch_id: int, key_hash: str) -> StoredResponse | None: ...

    @abstractmethod
    def save_response(self, response: StoredResponse) -> None:
        """Store it inside the caller's transaction (with the write it answers)."""

    @abstractmethod
    def purge_responses(self, before: datetime) -> None:
        """Forget responses stored before ``before`` (UTC)."""
