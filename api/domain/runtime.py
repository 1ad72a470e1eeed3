"""A game's log fed into the engine: turns, single throws, penalties and undo.

The log (see ``api/storage``) holds what was recorded, in order. :class:`GameRuntime` turns it
into an engine :class:`~api.rules.Game`: each entry is parsed into an engine command and
applied; single throws of a throw-by-throw turn go through :func:`~api.rules.record_throw`,
which keeps the *open turn* and checks every throw (api/rules/RULES.md §3). Nothing here decides
a rule.

An ``undo`` entry removes the last effective entry: the runtime for the remaining entries is
replayed from the start, so an undone throw can reopen the previous player's turn.

Each server process keeps the runtimes of recently used games (:class:`GameCache`), checked
against the game's stored version on every use; what a use case answers about a game is a
:class:`GameView` of its runtime (a :class:`WriteResult` for a recorded entry).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from ..rules import (
    DomainEvent,
    Game,
    GameHeader,
    OpenTurn,
    RecordTurn,
    Ruleset,
    SchockenError,
    TurnState,
    feed_entry,
    new_game,
    ruleset_from_config,
    turn_state,
)
from ..storage import GameRecord, LogEntry


def header_of(record: GameRecord) -> GameHeader:
    """The engine header of a stored game, its ruleset rebuilt from the *expanded* options."""
    rules = ruleset_from_config({"preset": record.rules["preset"], "overrides": record.options})
    starter = next(p.name for p in record.players if p.starter)
    return GameHeader(rules, tuple(p.name for p in record.players), starter, record.played_at)


def effective_entries(log: list[LogEntry]) -> list[LogEntry]:
    """The entries that count: each ``undo`` removes the last entry still counting."""
    stack: list[LogEntry] = []
    for entry in log:
        if entry.kind == "undo":
            if stack:
                stack.pop()
        else:
            stack.append(entry)
    return stack


@dataclass(slots=True)
class GameRuntime:
    """The engine game of one stored game plus the open throw-by-throw turn."""

    header: GameHeader
    game: Game
    last_seq: int = 0
    entries: list[LogEntry] = field(default_factory=list)  # effective entries, in order
    cmd_seqs: list[int] = field(default_factory=list)  # seq that produced each game command
    export: list[dict[str, Any]] = field(default_factory=list)  # game-log event per command
    entry_events: list[tuple[int, list[DomainEvent]]] = field(default_factory=list)
    open_turn: OpenTurn | None = None
    facts: dict[str, list[dict[str, Any]]] | None = None  # last facts written (for deltas)
    record: GameRecord | None = None  # the stored game (set by the service layer)
    rounds_json: list[dict[str, Any]] = field(default_factory=list)  # of game.rounds, made once
    _config: dict[str, Any] | None = None
    _options: dict[str, Any] | None = None

    @classmethod
    def new(cls, header: GameHeader) -> GameRuntime:
        return cls(header=header, game=new_game(header))

    @classmethod
    def replay(cls, header: GameHeader, entries: list[LogEntry], last_seq: int) -> GameRuntime:
        """Feed effective entries; a stored log that no longer replays is a broken database."""
        runtime = cls.new(header)
        for entry in entries:
            try:
                runtime.feed(entry)
            except SchockenError as err:  # pragma: no cover - only with a corrupted log
                raise RuntimeError(
                    f"game log entry {entry.seq} no longer replays: {err.message}"
                ) from err
        runtime.last_seq = last_seq
        return runtime

    @property
    def rules(self) -> Ruleset:
        return self.header.rules

    def rules_config(self) -> dict[str, Any]:
        """``{"preset", "overrides"}`` of the game (computed once: rulesets are frozen)."""
        if self._config is None:
            self._config = self.rules.to_config()
        return self._config

    def rules_options(self) -> dict[str, Any]:
        if self._options is None:
            self._options = self.rules.options()
        return self._options

    # ------------------------------------------------------------------ feeding entries
    def feed(self, entry: LogEntry) -> list[DomainEvent]:
        """Apply one entry (turn, throw or penalty). On error the runtime is unchanged."""
        game = self.game
        before = len(game.commands)
        self.open_turn, events = feed_entry(game, self.open_turn, entry.kind, entry.body)
        new = game.commands[before:]
        self.cmd_seqs.extend(entry.seq for _ in new)
        # the game log keeps a turn or penalty as it was given (the entry's command comes
        # last); a turn recorded throw by throw becomes a turn in detail
        if entry.kind == "throw":
            self.export.extend(c.to_json() for c in new)
        else:
            self.export.extend(c.to_json() for c in new[:-1])
            self.export.append(entry.body)
        self.entries.append(entry)
        self.entry_events.append((entry.seq, events))
        self.last_seq = max(self.last_seq, entry.seq)
        return events

    # ------------------------------------------------------------------ views
    def outcome_json(self) -> dict[str, Any]:
        """The game's outcome as JSON (``Outcome.to_json``). A resolved round never changes
        and rounds are only appended (an undo replays a new runtime), so each round's JSON is
        made once and kept; each answer gets a list of its own (the dicts are shared, and
        nothing changes them)."""
        done, rounds = self.rounds_json, self.game.rounds
        if len(done) < len(rounds):
            done.extend(r.to_json() for r in rounds[len(done) :])
        return self.game.outcome().to_json(rounds=list(done))

    def turn_state(self) -> TurnState | None:
        """Whose turn, the round's opener and limit, the open turn, whether ``stop`` is needed
        (:func:`api.rules.turn_state`); None once the game is over."""
        return turn_state(self.game, self.open_turn)

    def turn_commands(self, start: int = 0) -> list[tuple[RecordTurn, int]]:
        """The game's turn commands from the ``start``-th on (one per turn of ``game.turns``),
        each with the seq of its entry; read from the end (a new entry adds one or two)."""
        wanted = len(self.game.turns) - start
        found: list[tuple[RecordTurn, int]] = []
        for c, s in zip(reversed(self.game.commands), reversed(self.cmd_seqs), strict=True):
            if len(found) >= wanted:
                break
            if isinstance(c, RecordTurn):
                found.append((c, s))
        found.reverse()
        return found


# ---------------------------------------------------------------------------- the cache


@dataclass
class GameCache:
    """Per process: engine state of recently used games.

    Nothing correctness depends on lives here alone: several server processes write to one
    database, so a cached state is used only after checking its ``last_seq`` against the
    game's stored version (``Repository.game_version``, inside the write transaction for a
    write), and a state is put here only after the transaction that read or wrote it
    committed (``Repository.on_commit``). The locks protect the runtime objects of this
    process (one thread feeds or reads a game's runtime at a time; striped: a fixed set);
    writes of every process are serialised by the database's write lock."""

    size: int = 256
    _items: OrderedDict[int, GameRuntime] = field(default_factory=OrderedDict)
    # re-entrant: a write's reads under the lock (``GameUseCases.game`` inside a write that
    # api/http/idempotency.py opened) take it again
    _locks: tuple[threading.RLock, ...] = field(
        default_factory=lambda: tuple(threading.RLock() for _ in range(64))
    )

    def locked(self, key: int) -> threading.RLock:
        """The lock of a game (its id) or of a Stammtisch's players (minus its id), to hold
        with ``with``."""
        return self._locks[key % len(self._locks)]

    # each step on ``_items`` below is one call into the C ``OrderedDict`` with int keys,
    # atomic under the interpreter lock: no lock is taken for them (a game another thread
    # drops in between is simply not there)
    def get(self, game_id: int) -> GameRuntime | None:
        rt = self._items.get(game_id)
        if rt is not None:
            with suppress(KeyError):
                self._items.move_to_end(game_id)
        return rt

    def put(self, game_id: int, rt: GameRuntime) -> None:
        items = self._items
        items[game_id] = rt
        with suppress(KeyError):
            items.move_to_end(game_id)
            while len(items) > self.size:
                items.popitem(last=False)

    def drop(self, game_id: int) -> None:
        self._items.pop(game_id, None)


# ---------------------------------------------------------------------------- the answers


@dataclass(frozen=True, slots=True)
class GameView:
    """A game's state for clients. The JSON-ready ``data`` is taken when the view is made,
    under the game's lock, so serialising it later never races a concurrent write."""

    record: GameRecord
    stammtisch: str
    runtime: GameRuntime
    data: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", self._snapshot())

    def to_dict(self) -> dict[str, Any]:
        return self.data

    def _snapshot(self) -> dict[str, Any]:
        rt = self.runtime
        game = rt.game
        turn = rt.turn_state()
        return {
            "id": self.record.id,
            "number": self.record.number,
            "stammtisch": self.stammtisch,
            "played_at": self.record.played_at,
            "year": self.record.year,
            "status": "abandoned"
            if self.record.status == "abandoned"
            else ("finished" if game.finished else "running"),
            "source": self.record.source,
            "players": list(game.players),
            "starter": game.first_starter,
            "rules": rt.rules_config(),
            "options": rt.rules_options(),
            "seq": rt.last_seq,
            "open_turn": None if rt.open_turn is None else rt.open_turn.to_json(),
            "turn": None if turn is None else turn.to_json(),
            "outcome": rt.outcome_json(),
        }


@dataclass(frozen=True, slots=True)
class WriteResult:
    """A recorded entry: its sequence number, the domain events it caused (and their JSON, as
    the outbox stores them: made once), the new state."""

    seq: int
    events: list[DomainEvent]
    game: GameView
    events_json: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "events": self.events_json, "game": self.game.to_dict()}
