"""A game's log fed into the engine: turns, single throws, penalties and undo.

The log (see ``api/storage``) holds what was recorded, in order. :class:`GameRuntime` turns it
into an engine :class:`~api.rules.Game`: each entry is parsed into an engine command and
applied; single throws of a throw-by-throw turn go through :func:`~api.rules.record_throw`,
which keeps the *open turn* and checks every throw (api/rules/RULES.md §3). Nothing here decides
a rule.

An ``undo`` entry removes the last effective entry: the runtime for the remaining entries is
replayed from the start, so an undone throw can reopen the previous player's turn.
"""

from __future__ import annotations

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
    new_game,
    ruleset_from_config,
    turn_state,
)
from ..storage import GameRecord, LogEntry
from ..table.play import feed_entry


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
    def turn_state(self) -> TurnState | None:
        """Whose turn, the round's opener and limit, the open turn, whether ``stop`` is needed
        (:mod:`api.rules.turnstate`); None once the game is over."""
        return turn_state(self.game, self.open_turn)

    def turn_commands(self) -> list[tuple[RecordTurn, int]]:
        return [
            (c, s)
            for c, s in zip(self.game.commands, self.cmd_seqs, strict=True)
            if isinstance(c, RecordTurn)
        ]
