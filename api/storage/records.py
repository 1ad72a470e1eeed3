"""Plain records that cross the repository boundary (no driver types leak out), and the one
list of every table's columns."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any

#: the records, which the package exports as its own (``from api.storage import Stammtisch``)
__all__ = [
    "FactsWrite", "GamePlayer", "GameQuery", "GameRecord", "LogEntry", "NewGame", "Player",
    "Stammtisch", "StatsWrite", "StoredEvents", "StoredResponse", "WebSession",
]  # fmt: skip


@dataclass(frozen=True, slots=True)
class Stammtisch:
    id: int
    slug: str
    name: str
    rules: dict[str, Any]
    private: bool
    token_hash: str
    created_at: datetime
    #: where the odds of a throw are shown ("Chancen"): "off", "form" or "form_and_tv"
    #: (migration 0016; a display setting, not a house rule)
    odds_shown: str = "off"


@dataclass(frozen=True, slots=True)
class Player:
    id: int
    stammtisch_id: int
    name: str
    retired: bool
    created_at: datetime
    retired_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class GamePlayer:
    seat: int
    player_id: int
    name: str
    starter: bool


@dataclass(frozen=True, slots=True)
class NewGame:
    stammtisch_id: int
    header: dict[str, Any]
    rules: dict[str, Any]
    options: dict[str, Any]
    played_at: str | None
    played_at_utc: datetime
    played_local: datetime  # wall-clock time at the table
    year: int
    source: str
    created_at: datetime
    players: tuple[GamePlayer, ...]

    def stored(self, game_id: int) -> GameRecord:
        """The record of this game once stored under ``game_id`` (not played yet)."""
        return GameRecord(**{f: getattr(self, f) for f in NEW_GAME_FIELDS}, id=game_id)


@dataclass(frozen=True, slots=True)
class GameRecord(NewGame):
    """A stored game: what :class:`NewGame` gave, its id and what its game row says."""

    id: int
    status: str = "running"  # 'running', 'finished' or 'abandoned' (migration 0014)
    phase: str = "half1"
    loser: str | None = None
    number: int = 0  # the game's number in its Stammtisch, from 1 (migration 0014)

    def with_facts(self, game_row: dict[str, Any]) -> GameRecord:
        """The record with status, phase and loser of its game row (table game_facts); a game
        called off stays "abandoned"."""
        status = self.status if self.status == "abandoned" else game_row["status"]
        return replace(self, status=status, phase=game_row["phase"], loser=game_row["loser"])


#: the fields of a :class:`NewGame`
NEW_GAME_FIELDS = tuple(f.name for f in fields(NewGame))


@dataclass(frozen=True, slots=True)
class GameQuery:
    """One page of a Stammtisch's games (``list_games``), newest first: those of ``year``,
    ``status`` and ``player_id`` (None: any), ``limit`` of them after the first ``offset``."""

    stammtisch_id: int
    year: int | None = None
    status: str | None = None
    player_id: int | None = None
    offset: int = 0
    limit: int = 50


@dataclass(frozen=True, slots=True)
class LogEntry:
    game_id: int
    seq: int
    kind: str  # 'turn' | 'throw' | 'penalty' | 'undo'
    body: dict[str, Any]
    recorded_at: datetime


@dataclass(frozen=True, slots=True)
class StoredEvents:
    """The domain events of one stored log entry (or of a game's start or import, ``seq`` 0),
    as the write answered them (``[{"kind", "message", "data"}, ...]``): the outbox that the
    event streams and the webhooks read (migration 0012). ``position`` counts a Stammtisch's
    rows from 1 in commit order."""

    stammtisch_id: int
    position: int
    game_id: int
    seq: int
    events: list[dict[str, Any]]
    recorded_at: datetime


#: column order of the tables of Stammtische, players and games (DDL in
#: migrations/0001_initial.sql); with :data:`FACT_COLUMNS` every table a game's data lives in
BASE_COLUMNS: dict[str, tuple[str, ...]] = {
    "stammtische": ("id", "slug", "name", "rules", "private", "token_hash", "created_at"),
    "players": ("id", "stammtisch_id", "name", "retired", "created_at", "retired_at"),
    "games": (
        "id", "stammtisch_id", "header", "rules", "options", "played_at", "played_at_utc",
        "played_local", "year", "source", "created_at",
    ),
    "game_players": ("game_id", "seat", "player_id", "name", "starter"),
    "game_log": ("game_id", "seq", "kind", "body", "recorded_at"),
}  # fmt: skip

#: column order of every fact table (the DDL is in migrations/0001_initial.sql, game_facts
#: without its rounds since 0004)
FACT_COLUMNS: dict[str, tuple[str, ...]] = {
    "game_facts": (
        "game_id", "status", "phase", "loser_id", "loser", "blattschuss", "finalist1_id",
        "finalist2_id",
    ),
    "turn_facts": (
        "game_id", "turn_no", "seq", "half", "round_no", "player_id", "player", "dice",
        "throws", "hand", "blind", "category", "result_name", "deckel_value", "rank_key",
        "entry",
    ),
    "round_facts": (
        "game_id", "round_no", "half", "starter_id", "starter", "throw_limit", "best_id",
        "best", "worst_id", "worst", "deckel", "source", "source_player_id", "repeated",
    ),
    "deckel_moves": (
        "game_id", "move_no", "seq", "half", "reason", "round_no", "receiver_id", "receiver",
        "source", "source_player_id", "amount",
    ),
    "half_facts": ("game_id", "half", "loser_id", "loser", "rounds"),
    # migration 0003; derived by api/facts.summarize, rows only for a finished game
    "player_game_facts": (
        "game_id", "player_id", "stammtisch_id", "year", "played_local", "lost", "finalist",
        "finale_lost", "blattschuss", "halves_lost", "deckel", "deckel_half1", "deckel_half2",
        "deckel_finale", "turns", "schock_aus", "fair_schock_aus", "fair_schock",
        "fair_general", "fair_strasse", "fair_zahl",
    ),
}  # fmt: skip

#: the luck figures of a finished game per player (migration 0017: api/rules/luck.py), written
#: by the statistics refresher for the game's version ``seq`` (dashboard/luck.py)
LUCK_COLUMNS: tuple[str, ...] = (
    "game_id", "player_id", "seq", "turns", "expected", "survived", "split", "luck",
    "given_away",
)  # fmt: skip

#: every table of game data with its columns, in load order (parents first)
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {**BASE_COLUMNS, **FACT_COLUMNS}

#: the responses of idempotent writes (migrations/0002_idempotency.sql), not game data
RESPONSE_COLUMNS: dict[str, tuple[str, ...]] = {
    "idempotency_keys": (
        "stammtisch_id", "key_hash", "fingerprint", "status", "content_type", "body",
        "created_at",
    ),
}  # fmt: skip

#: the outbox of domain events (migration 0012): read by the event streams and the webhooks
#: PostgreSQL's channel of ``LISTEN``/``NOTIFY`` a new row of game_events is announced on
CHANNEL = "schocken_events"
EVENT_COLUMNS: dict[str, tuple[str, ...]] = {
    "event_positions": ("stammtisch_id", "position"),
    "game_events": ("stammtisch_id", "position", "game_id", "seq", "events", "recorded_at"),
}

#: the fact tables with many rows per game, in a stable order
ROW_TABLES: tuple[str, ...] = (
    "turn_facts", "round_facts", "deckel_moves", "half_facts", "player_game_facts",
)  # fmt: skip


@dataclass(slots=True)
class FactsWrite:
    """What to change in one game's facts: the game row (None: unchanged), rows to append,
    tables to rewrite."""

    game: dict[str, Any] | None
    append: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    replace: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StatsWrite:
    """A refresh's result (``write_stats``): the read model of the Stammtische
    ``stammtisch_ids`` (None: all) replaced by ``periods`` (stammtisch_id, year or None for all
    time, games, JSON), and the stale marks cleared that still have the version in ``versions``
    (the one they had when the refresh read its input)."""

    stammtisch_ids: Collection[int] | None
    periods: Sequence[tuple[int, int | None, int, str]]
    versions: Mapping[int, int]


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """The response to a write sent with an ``Idempotency-Key`` (see ``api/idempotency.py``)."""

    stammtisch_id: int
    key_hash: str
    fingerprint: str
    status: int
    content_type: str
    body: bytes
    created_at: datetime


@dataclass(frozen=True, slots=True)
class WebSession:
    """A login of the pub form (api/web/session.py): the cookie holds an opaque id, the row its
    hash; the key's hash at login, so a changed key ends it; deleted at logout."""

    id_hash: str
    stammtisch_id: int
    token_hash: str
    expires_at: datetime
