"""Domain events: what a command caused, each with a German sentence a client can show as it is
and a typed payload (one small frozen class per :class:`EventKind`).

Every event kind the API sends is defined here: the engine emits all of them but four —
``throw_recorded`` comes from :mod:`.throws` (a single throw of a throw-by-throw turn),
``undone``, ``game_started`` and ``game_abandoned`` from the service layer (an entry taken
back; a game started or imported, the first event of every game in the event streams and
webhooks; a game called off, its last). Deckel moves are part of the event
that moves them: ``round_lost`` and ``penalty`` name the receiver, the amount and the source.

The JSON shape of the API is ``{"kind", "message", "data"}``::

    >>> DomainEvent("Dieter hat keine Deckel mehr.", PlayerOut("Dieter")).to_json()
    {'kind': 'player_out', 'message': 'Dieter hat keine Deckel mehr.', 'data': {'player': 'Dieter'}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar, NamedTuple

from .records import Half


class EventKind(StrEnum):
    GAME_STARTED = "game_started"
    GAME_ABANDONED = "game_abandoned"
    TURN_RECORDED = "turn_recorded"
    THROW_RECORDED = "throw_recorded"
    ROUND_LOST = "round_lost"
    ROUND_REPEATED = "round_repeated"
    PLAYER_OUT = "player_out"
    PENALTY = "penalty"
    HALF_LOST = "half_lost"
    FINALE_STARTED = "finale_started"
    BLATTSCHUSS = "blattschuss"
    GAME_LOST = "game_lost"
    UNDONE = "undone"


@dataclass(frozen=True, slots=True)
class TurnRecorded:
    """A player's turn was accepted; ``name`` and ``dice`` are its result."""

    KIND: ClassVar[EventKind] = EventKind.TURN_RECORDED
    player: str
    name: str
    dice: str  # canonical notation: "1-1-4"

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player, "name": self.name, "dice": self.dice}


@dataclass(frozen=True, slots=True)
class ThrowRecorded:
    """One throw of a throw-by-throw turn: its number, the pips, what was set aside or turned."""

    KIND: ClassVar[EventKind] = EventKind.THROW_RECORDED
    player: str
    throw: int  # 1 = the turn's first throw
    dice: tuple[int, ...]
    aside: tuple[int, ...] = ()
    sixes: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"player": self.player, "throw": self.throw, "dice": list(self.dice)}
        if self.aside:
            out["aside"] = list(self.aside)
        if self.sixes:
            out["sixes"] = self.sixes
        return out


@dataclass(frozen=True, slots=True)
class RoundLost:
    """``player`` lost the round and received ``deckel`` from ``source`` (``"mitte"``, the best
    player, or ``"all"`` for a Schock aus that collects every Deckel)."""

    KIND: ClassVar[EventKind] = EventKind.ROUND_LOST
    player: str
    deckel: int
    source: str
    best: str
    best_result: str

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "deckel": self.deckel,
            "from": self.source,
            "best": self.best,
            "best_result": self.best_result,
        }


@dataclass(frozen=True, slots=True)
class RoundRepeated:
    """A tie the rules cannot settle: the round starts again with the same starter."""

    KIND: ClassVar[EventKind] = EventKind.ROUND_REPEATED
    starter: str

    def to_json(self) -> dict[str, Any]:
        return {"starter": self.starter}


@dataclass(frozen=True, slots=True)
class PlayerOut:
    """The Mitte is empty and ``player`` holds no Deckel: out for the rest of the half."""

    KIND: ClassVar[EventKind] = EventKind.PLAYER_OUT
    player: str

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player}


@dataclass(frozen=True, slots=True)
class PenaltyGiven:
    """A penalty: ``player`` received ``deckel`` from ``source`` (``"mitte"`` or a player).

    ``source`` is None under ``penalty_mode = round_loser``: no Deckel move (``deckel`` 0),
    the offender loses the round in progress instead.
    """

    KIND: ClassVar[EventKind] = EventKind.PENALTY
    player: str
    deckel: int
    reason: str
    source: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.source is None:
            return {"player": self.player, "deckel": self.deckel, "reason": self.reason}
        return {
            "player": self.player,
            "deckel": self.deckel,
            "from": self.source,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class HalfLost:
    """``player`` holds every Deckel and lost the half (``stacks``: just before they go back)."""

    KIND: ClassVar[EventKind] = EventKind.HALF_LOST
    player: str
    half: Half
    stacks: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player, "half": self.half.label, "stacks": dict(self.stacks)}


@dataclass(frozen=True, slots=True)
class FinaleStarted:
    """The two half losers (in seat order) play the Finale; ``starter`` opens it."""

    KIND: ClassVar[EventKind] = EventKind.FINALE_STARTED
    players: tuple[str, str]
    starter: str

    def to_json(self) -> dict[str, Any]:
        return {"players": list(self.players), "starter": self.starter}


@dataclass(frozen=True, slots=True)
class Blattschuss:
    """``player`` lost both halves: the game ends without a Finale."""

    KIND: ClassVar[EventKind] = EventKind.BLATTSCHUSS
    player: str

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player}


@dataclass(frozen=True, slots=True)
class GameLost:
    """``player`` lost the game (``stacks``: the Deckel at the end, before they go back)."""

    KIND: ClassVar[EventKind] = EventKind.GAME_LOST
    player: str
    stacks: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player, "stacks": dict(self.stacks)}


@dataclass(frozen=True, slots=True)
class Undone:
    """The log entry ``seq`` (a ``turn``, ``throw`` or ``penalty``, body ``entry``) was taken
    back.

    Emitted by the service layer, which keeps the log."""

    KIND: ClassVar[EventKind] = EventKind.UNDONE
    seq: int
    kind: str
    entry: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "kind": self.kind, "entry": self.entry}


@dataclass(frozen=True, slots=True)
class GameStarted:
    """A game was started (``source`` ``api``) or imported (``import``); ``players`` in seat
    order, ``starter`` opens its first round.

    Emitted by the service layer; the event streams and webhooks send it, a write's answer
    does not."""

    KIND: ClassVar[EventKind] = EventKind.GAME_STARTED
    game_id: int
    players: tuple[str, ...]
    starter: str
    source: str = "api"

    def to_json(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id, "players": list(self.players), "starter": self.starter,
            "source": self.source,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class GameAbandoned:
    """The running game ``game_id`` was called off ("Spiel abbrechen"): kept, out of the
    statistics, it takes no more entries.

    Emitted by the service layer; the event streams and webhooks send it (its ``seq`` is the
    one after the game's last entry), the answer of the call is the game."""

    KIND: ClassVar[EventKind] = EventKind.GAME_ABANDONED
    game_id: int
    number: int  # the game's number in its Stammtisch ("Spiel 3")

    def to_json(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "number": self.number}


EventData = (
    GameStarted
    | GameAbandoned
    | TurnRecorded
    | ThrowRecorded
    | RoundLost
    | RoundRepeated
    | PlayerOut
    | PenaltyGiven
    | HalfLost
    | FinaleStarted
    | Blattschuss
    | GameLost
    | Undone
)

#: the payload class of every event kind
PAYLOADS: dict[EventKind, type[EventData]] = {
    cls.KIND: cls
    for cls in (
        GameStarted,
        GameAbandoned,
        TurnRecorded,
        ThrowRecorded,
        RoundLost,
        RoundRepeated,
        PlayerOut,
        PenaltyGiven,
        HalfLost,
        FinaleStarted,
        Blattschuss,
        GameLost,
        Undone,
    )
}


# A named tuple, like the commands: cheap to create on the engine's hot path.
class DomainEvent(NamedTuple):
    """Something that happened, with a German sentence a client can show as it is."""

    message: str
    data: EventData

    @property
    def kind(self) -> EventKind:
        return self.data.KIND

    def to_json(self) -> dict[str, Any]:
        """The API's shape: ``{"kind", "message", "data"}``."""
        return {"kind": self.data.KIND.value, "message": self.message, "data": self.data.to_json()}
