"""What a game reports: its phase and halves, turn facts, round and penalty records, the state,
the outcome and the turn to be played next (:func:`api.rules.throws.turn_state`) — frozen values; their JSON shapes (schemas/GAMELOG.md "The outcome") come from
``to_json`` at the edge.

    >>> Half.HALF2.label, Half.HALF2.value, Half.from_label("finale")
    (2, 'half2', <Half.FINALE: 'finale'>)
    >>> Half.HALF1.caption, Phase.FINALE.caption, Phase.FINISHED.caption
    ('1. Hälfte', 'Finale', 'Spiel vorbei')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .results import Category


class Phase(StrEnum):
    HALF1 = "half1"
    HALF2 = "half2"
    FINALE = "finale"
    FINISHED = "finished"

    @property
    def half(self) -> Half | None:
        """The half being played, None once the game is over."""
        return None if self is Phase.FINISHED else Half(self.value)

    @property
    def caption(self) -> str:
        """The German heading: the half's caption, "Spiel vorbei" once the game is over."""
        half = self.half
        return GAME_OVER if half is None else half.caption


class Half(StrEnum):
    """A part of the game: the first or second Hälfte or the Finale.

    The value is the storage label of the fact tables and the statistics (``"half1"``);
    :attr:`label` is the outcome's JSON label of schemas/GAMELOG.md (``1``, ``2`` or ``"finale"``).
    """

    HALF1 = "half1"
    HALF2 = "half2"
    FINALE = "finale"

    @property
    def label(self) -> int | str:
        return _LABELS[self]

    @property
    def caption(self) -> str:
        """The German heading: "1. Hälfte", "2. Hälfte", "Finale"."""
        return _CAPTIONS[self]

    @classmethod
    def from_label(cls, label: int | str) -> Half:
        """The inverse of :attr:`label`."""
        for half, value in _LABELS.items():
            if value == label:
                return half
        raise ValueError(f"no half labelled {label!r}")


_LABELS: dict[Half, int | str] = {Half.HALF1: 1, Half.HALF2: 2, Half.FINALE: "finale"}
_CAPTIONS = {Half.HALF1: "1. Hälfte", Half.HALF2: "2. Hälfte", Half.FINALE: "Finale"}
GAME_OVER = "Spiel vorbei"


@dataclass(frozen=True, slots=True)
class TurnFact:
    """One accepted turn (the statistics' raw material)."""

    half: Half
    round: int  # index of the round in Game.rounds
    order: int  # position in the round, 0 = the round's starter
    player: str
    dice: str  # canonical notation, pips ascending: "1-1-4"
    throws: int
    hand: bool
    blind: bool
    category: Category
    name: str
    deckel: int
    key: int  # the result's comparison key, higher is better

    def to_json(self) -> dict[str, Any]:
        return {
            "half": self.half.label,
            "round": self.round,
            "order": self.order,
            "player": self.player,
            "dice": self.dice,
            "throws": self.throws,
            "hand": self.hand,
            "blind": self.blind,
            "category": self.category.value,
            "name": self.name,
            "deckel": self.deckel,
            "key": self.key,
        }


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """A resolved round: who lost it and where their Deckel came from, or a repetition.

    ``source`` is ``"mitte"``, the paying player or ``"all"`` (a Schock aus collects everything);
    None for a repeated round, which has no best, worst nor result and moves no Deckel.
    """

    half: Half
    starter: str
    limit: int
    best: str | None
    worst: str | None
    deckel: int  # what the worst player actually received (after caps)
    source: str | None
    best_result: str | None = None
    worst_result: str | None = None  # None when a penalty made a player lose before throwing
    value: int | None = None  # what the best result was worth, before caps (doubled if blind)

    @property
    def repeated(self) -> bool:
        return self.source is None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "half": self.half.label,
            "starter": self.starter,
            "limit": self.limit,
            "best": self.best,
            "worst": self.worst,
            "deckel": self.deckel,
            "from": self.source,
            "repeated": self.source is None,
        }
        if self.source is not None:
            out["best_result"] = self.best_result
            out["worst_result"] = self.worst_result
            out["value"] = self.value
        return out


@dataclass(frozen=True, slots=True)
class PenaltyRecord:
    """A penalty: the Deckel the offender received and from where (``"mitte"`` or a player).

    Under ``penalty_mode = round_loser`` no Deckel move (``deckel`` 0, source ``"mitte"``): the
    offender loses the round in progress instead.
    """

    half: Half
    round: int  # index of the round it happened in (or before, between rounds)
    player: str
    deckel: int
    source: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "half": self.half.label,
            "round": self.round,
            "player": self.player,
            "deckel": self.deckel,
            "from": self.source,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class GameState:
    """Where the game stands: the Mitte, every stack, who is still in, who throws next."""

    phase: Phase
    mitte: int
    stacks: Mapping[str, int]  # every player in seat order
    active: tuple[str, ...]  # players still in the half, in seat order
    next_player: str | None  # None once the game is over
    limit: int | None  # the round's throw limit once its starter has finished

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase.value,
            "mitte": self.mitte,
            "stacks": dict(self.stacks),
            "active": list(self.active),
            "next_player": self.next_player,
            "limit": self.limit,
        }


@dataclass(frozen=True, slots=True)
class Outcome:
    """The outcome of schemas/GAMELOG.md, plus the penalties and the turns of the round in progress."""

    rounds: tuple[RoundRecord, ...]
    half_losers: tuple[str, ...]
    finale: tuple[str, str] | None  # the two finalists in seat order
    blattschuss: bool
    loser: str | None  # the game's loser once it is decided
    state: GameState
    penalties: tuple[PenaltyRecord, ...]
    current_round: tuple[TurnFact, ...]

    def to_json(self, rounds: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        """``rounds``: the JSON of :attr:`rounds` when the caller kept it (resolved rounds never
        change: api/domain/runtime.py makes each one's once per game)."""
        return {
            "rounds": [r.to_json() for r in self.rounds] if rounds is None else rounds,
            "half_losers": list(self.half_losers),
            "finale": list(self.finale) if self.finale is not None else None,
            "blattschuss": self.blattschuss,
            "loser": self.loser,
            "state": self.state.to_json(),
            "penalties": [p.to_json() for p in self.penalties],
            "current_round": [t.to_json() for t in self.current_round],
        }


@dataclass(frozen=True, slots=True)
class OpenTurnState:
    """A throw-by-throw turn in progress, seen from the next throw."""

    throws_used: int
    throws_left: int  # further throws the limit allows
    kept: tuple[int, ...]  # dice out of the cup: set aside, or sixes turned into ones
    dice_in_cup: int  # dice the next throw throws
    blind: bool
    can_stop: bool  # the turn may end with the throws so far (not after turning sixes)
    # who throws next once the turn ends as it stands; None if it cannot end yet or the game
    # would be over
    next_player: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "throws_used": self.throws_used,
            "throws_left": self.throws_left,
            "kept": list(self.kept),
            "dice_in_cup": self.dice_in_cup,
            "blind": self.blind,
            "can_stop": self.can_stop,
            "next_player": self.next_player,
        }


@dataclass(frozen=True, slots=True)
class TurnState:
    """The turn to be played next (None once the game is over, see :func:`turn_state`)."""

    half: Half
    round: int  # index the round will have in Game.rounds (as TurnFact.round)
    round_of_half: int  # 1 = the half's first round; a repeated round counts again
    opener: str  # who opened (or opens) the round: their throws cap everybody else's
    player: str  # whose turn it is
    position: int  # 0 = the opener
    last_in_round: bool  # this turn completes the round (unless a Schock aus ends it early)
    limit: int  # throws this turn may use: the round's limit, or the opener's cap
    limit_fixed: bool  # False while the opener throws: then limit is the cap (max_throws)
    opener_cap: int  # the ruleset's max_throws
    open: OpenTurnState | None
    must_stop: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "half": self.half.label,
            "round": self.round,
            "round_of_half": self.round_of_half,
            "opener": self.opener,
            "player": self.player,
            "position": self.position,
            "last_in_round": self.last_in_round,
            "limit": self.limit,
            "limit_fixed": self.limit_fixed,
            "opener_cap": self.opener_cap,
            "open": None if self.open is None else self.open.to_json(),
            "must_stop": self.must_stop,
        }
