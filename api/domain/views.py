"""What the use cases answer: a game's state and the result of a write, ready for JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..rules import DomainEvent
from ..storage import GameRecord
from .runtime import GameRuntime


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
            "outcome": game.outcome().to_json(),
        }


@dataclass(frozen=True, slots=True)
class WriteResult:
    """A recorded entry: its sequence number, the domain events it caused, the new state."""

    seq: int
    events: list[DomainEvent]
    game: GameView

    def to_dict(self) -> dict[str, Any]:
        events = [e.to_json() for e in self.events]
        return {"seq": self.seq, "events": events, "game": self.game.to_dict()}
