"""The phone's offline engine state of a game (``browser.py``): its entries fed into the
engine in order by :func:`api.rules.feed_entry`, the same feeding as the server's game runtime
(``api/domain/runtime.py``).

An entry is what the log stores: its number (``seq``), its kind (``turn``, ``throw`` or
``penalty``) and its body (a turn summary or a turn in detail, one throw, a penalty: the game
log's shapes). Single throws of a throw-by-throw turn go through
:func:`~api.rules.record_throw`, which keeps the *open turn*; nothing here decides a rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..rules import (
    DomainEvent,
    Game,
    GameHeader,
    OpenTurn,
    feed_entry,
    new_game,
    parse_header,
)


def header_json(header: GameHeader) -> dict[str, Any]:
    """A header as the game log writes it (without events)."""
    doc: dict[str, Any] = {
        "rules": header.rules.to_config(),
        "players": list(header.players),
        "starter": header.starter,
    }
    if header.played_at is not None:
        doc["played_at"] = header.played_at
    return doc


@dataclass(slots=True)
class Table:
    """One game's engine state after its effective entries, with each entry's domain events."""

    header: GameHeader
    game: Game
    open_turn: OpenTurn | None = None
    entries: list[tuple[int, str, Any]] = field(default_factory=list)  # (seq, kind, body)
    entry_events: list[tuple[int, list[DomainEvent]]] = field(default_factory=list)

    @classmethod
    def start(cls, header: GameHeader) -> Table:
        return cls(header, new_game(header))

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Table:
        """``{"header": <game-log header>, "entries": [[seq, kind, body], …]}`` replayed."""
        header, _ = parse_header(doc["header"])
        table = cls.start(header)
        for seq, kind, body in doc["entries"]:
            table.feed(seq, kind, body)
        return table

    def to_json(self) -> dict[str, Any]:
        return {
            "header": header_json(self.header),
            "entries": [[seq, kind, body] for seq, kind, body in self.entries],
        }

    @property
    def last_seq(self) -> int:
        return self.entries[-1][0] if self.entries else 0

    def feed(self, seq: int, kind: str, body: Any) -> list[DomainEvent]:
        """Apply one entry; on a refusal (an engine error) the table is unchanged."""
        self.open_turn, events = feed_entry(self.game, self.open_turn, kind, body)
        self.entries.append((seq, kind, body))
        self.entry_events.append((seq, events))
        return events
